"""``python -m compute influence-max`` end to end, as a user runs it."""

from __future__ import annotations

import json

import numpy as np
import pytest

import compute.algorithms.influence_max as im
from compute.graphs import graph_from_edges

from .test_cli import DATA, run_cli

EXAMPLE = DATA / "thesis_example"


@pytest.fixture
def follows_file(tmp_path):
    rng = np.random.default_rng(1)
    follower = rng.integers(1, 300, 2000)
    followee = np.minimum((rng.pareto(1.2, 2000) * 5).astype(int), 298) + 1
    keep = follower != followee
    path = tmp_path / "follows.txt"
    path.write_text("".join(f"{a} {b}\n" for a, b in zip(follower[keep], followee[keep])))
    return path, follower[keep], followee[keep]


def test_it_prints_the_issues_json_with_the_evaluated_spread(follows_file):
    path, follower, followee = follows_file
    res = run_cli("influence-max", str(path), "--k", "5", "--p", "0.05", "--seed", "3", "--evaluate", "3000",
                  "--backend", "cpu", "--output", "json")  # fmt: skip
    out = json.loads(res.stdout)
    assert {"method", "k", "p", "seeds", "spread", "spread_ci", "rr_sets", "seconds"} <= set(out)
    assert out["method"] == "imm" and out["k"] == 5 and out["p"] == 0.05 and len(out["seeds"]) == 5
    assert all(isinstance(s["user_id"], str) for s in out["seeds"])
    # the same as the library's seeds and evaluator
    model = im.ic_model(graph_from_edges(follower, followee), p=0.05)
    lib = im.influence_max(model, k=5, seed=3, backend="cpu")
    assert [s["user_id"] for s in out["seeds"]] == [str(u) for u in lib.user_ids]
    assert [s["marginal_gain"] for s in out["seeds"]] == pytest.approx(lib.gains.tolist())
    ev = im.evaluate_spread(model, lib.nodes, runs=3000, seed=4, backend="cpu")
    assert out["spread"] == pytest.approx(ev.mean) and out["spread_ci"] == pytest.approx([ev.ci_low, ev.ci_high])
    assert out["rr_sets"] == lib.rr_sets > 0


@pytest.mark.parametrize("method", ["degree", "random", "imgpu"])
def test_it_runs_every_method_as_a_table(follows_file, method):
    path, _, _ = follows_file
    res = run_cli("influence-max", str(path), "--k", "3", "--p", "wc", "--method", method, "--snapshots", "20",
                  "--evaluate", "500", "--backend", "cpu")  # fmt: skip
    lines = res.stdout.splitlines()
    assert lines[0].startswith(f"{method}: k=3, p=wc") and "expected spread" in lines[1]
    assert lines[2].split() == ["rank", "user_id", "marginal_gain"] and len(lines) == 6


def test_it_estimates_probabilities_and_ranks_by_influence_from_tweets():
    res = run_cli("influence-max", str(EXAMPLE / "tweets.csv"), "--follows", str(EXAMPLE / "follows.csv"), "--k", "2",
                  "--p", "estimated", "--method", "influence", "--evaluate", "200", "--backend", "cpu",
                  "--output", "json")  # fmt: skip
    out = json.loads(res.stdout)
    assert out["p"] == "estimated" and out["model"].startswith("estimated from the collection")
    # the worked example's most influential account (tests/compute/test_cli.py) comes first
    assert out["seeds"][0]["user_id"] == "102"


@pytest.mark.parametrize(
    "args, wants, instead",
    [
        (["--p", "estimated"], "--p estimated (retweets over exposures per follow edge) needs", "--p wc"),
        (["--p", "0.1", "--method", "influence"], "--method influence (the accounts' influence measure) needs",
         "--method imm, imgpu, degree or random"),
    ],
)  # fmt: skip
def test_what_needs_tweets_on_a_follows_only_file_says_what_to_pass_instead(follows_file, args, wants, instead):
    path, _, _ = follows_file
    res = run_cli("influence-max", str(path), "--k", "2", "--backend", "cpu", *args, check=False)
    assert res.returncode == 2 and res.stdout == ""
    assert wants in res.stderr and f"{path} holds follows but no tweets" in res.stderr
    assert f"python -m compute influence-max TWEETS --follows {path}" in res.stderr and instead in res.stderr


def test_it_exits_2_on_bad_arguments(follows_file):
    path, _, _ = follows_file
    assert run_cli("influence-max", str(path), "--p", "lots", check=False).returncode == 2
    assert run_cli("influence-max", str(path), "--k", "0", "--backend", "cpu", check=False).returncode == 2
