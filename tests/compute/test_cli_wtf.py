"""``python -m compute wtf`` end to end: the issue's JSON, the table, and bad input exiting 2."""

from __future__ import annotations

import json

import numpy as np

from compute.algorithms.wtf import wtf
from compute.graphs import graph_from_edges
from compute.results import rank_key

from .test_cli import run_cli


def _follows(tmp_path, seed: int = 4, n: int = 60, m: int = 500):
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, n, m) * 11 + 500, rng.integers(0, n, m) * 11 + 500
    path = tmp_path / "follows.csv"
    path.write_text("follower_id,followee_id\n" + "".join(f"{a},{b}\n" for a, b in zip(src, dst) if a != b))
    keep = src != dst
    return path, graph_from_edges(src[keep], dst[keep])


def test_it_prints_one_json_object_per_account_as_the_issue_asks(tmp_path):
    path, g = _follows(tmp_path)
    accounts = [int(g.ids[7]), int(g.ids[3])]
    res = run_cli(
        "wtf", str(path), "--account", str(accounts[0]), "--account", str(accounts[1]), "--circle", "20",
        "--top", "5", "--direction", "followers", "--backend", "cpu", "--output", "json",
    )  # fmt: skip
    rows = json.loads(res.stdout)
    assert [r["account"] for r in rows] == [str(a) for a in accounts]
    expected = wtf(g, g.index_of(accounts), direction="followers", circle=20, top=5, backend="cpu")
    for row, rec in zip(rows, expected):
        assert row == json.loads(json.dumps({**rec.to_json(g.ids), "method": "exact", "epsilon": None, "walks": None}))
        assert isinstance(row["iterations"], int) and len(row["circle"]) == 20
        for key, value in (("circle", "ppr"), ("relevance", "score"), ("similarity", "score")):
            assert all(isinstance(r["user_id"], str) and set(r) >= {"user_id", value} for r in row[key])
            assert row[key] == sorted(row[key], key=lambda r: (-rank_key(r[value]), int(r["user_id"])))


def test_it_prints_a_table(tmp_path):
    path, g = _follows(tmp_path)
    res = run_cli("wtf", str(path), "--account", str(g.ids[0]), "--top", "3", "--backend", "cpu")
    lines = res.stdout.splitlines()
    assert lines[0].startswith(
        f"{g.n_nodes} accounts, {g.n_edges} follows; direction follows; method exact; backend cpu"
    )
    assert lines[2].startswith(f"account {g.ids[0]}: PPR ") and "circle of" in lines[2]
    assert lines[3] == "  relevance:" and len([x for x in lines if x.startswith("    ")]) == 6


def test_the_local_methods_report_themselves_with_epsilon_and_walks(tmp_path):
    path, g = _follows(tmp_path)
    account = int(g.ids[7])
    res = run_cli(
        "wtf", str(path), "--account", str(account), "--circle", "20", "--top", "5", "--method", "push",
        "--epsilon", "1e-9", "--output", "json",
    )  # fmt: skip
    (row,) = json.loads(res.stdout)
    assert row["method"] == "push" and row["epsilon"] == 1e-9 and row["converged"] is True
    (rec,) = wtf(g, g.index_of([account]), circle=20, top=5, backend="cpu", method="push", epsilon=1e-9)
    assert row == json.loads(json.dumps({**rec.to_json(g.ids), "method": "push", "epsilon": 1e-9, "walks": None}))
    table = run_cli("wtf", str(path), "--account", str(account), "--method", "push").stdout.splitlines()
    assert "; method push, epsilon 1e-07; backend cpu" in table[0] and " pushes, circle of " in table[2]
    res = run_cli("wtf", str(path), "--account", str(account), "--epsilon", "1e-6", check=False)
    assert res.returncode == 2 and "--epsilon is for --method push or fora" in res.stderr
    res = run_cli("wtf", str(path), "--account", str(account), "--method", "push", "--walks", "10", check=False)
    assert res.returncode == 2 and "--walks is for --method fora or walks" in res.stderr
    res = run_cli("wtf", str(path), "--account", str(account), "--method", "walks", "--epsilon", "1e-4", check=False)
    assert res.returncode == 2 and "--epsilon is for --method push or fora" in res.stderr
    (row,) = json.loads(
        run_cli(
            "wtf", str(path), "--account", str(account), "--method", "walks", "--walks", "5e4", "--circle", "20",
            "--top", "5", "--output", "json",
        ).stdout
    )  # fmt: skip
    assert (row["method"], row["epsilon"], row["walks"]) == ("walks", None, 5e4)
    (rec,) = wtf(g, g.index_of([account]), circle=20, top=5, backend="cpu", method="walks", walks=5e4)
    assert row == json.loads(json.dumps({**rec.to_json(g.ids), "method": "walks", "epsilon": None, "walks": 5e4}))
    (row,) = json.loads(
        run_cli(
            "wtf", str(path), "--account", str(account), "--method", "fora", "--epsilon", "1e-4", "--walks", "1e4",
            "--output", "json",
        ).stdout
    )  # fmt: skip
    assert (row["method"], row["epsilon"], row["walks"]) == ("fora", 1e-4, 1e4)
    res = run_cli("wtf", str(path), "--account", str(account), "--method", "push", "--epsilon", "2", check=False)
    assert res.returncode == 2 and "epsilon must be a number between 0 and 1" in res.stderr


def test_an_unknown_account_or_no_graph_exits_2(tmp_path):
    path, _ = _follows(tmp_path)
    res = run_cli("wtf", str(path), "--account", "12345", "--backend", "cpu", check=False)
    assert res.returncode == 2 and "--account: 12345 not in the follower graph" in res.stderr
    res = run_cli("wtf", str(path), "--account", "500", "--circle", "0", "--backend", "cpu", check=False)
    assert res.returncode == 2 and "circle must be an integer >= 1" in res.stderr
    res = run_cli("wtf", str(path), check=False)
    assert res.returncode == 2 and "--account" in res.stderr


def test_the_readmes_example_shows_look_alikes_and_next_amplifiers():
    # the README's example used to print "(none)" twice: an example that shows nothing shows nothing of the command
    from .test_cli import ROOT

    lines = (ROOT / "README.md").read_text().replace("\\\n", " ").splitlines()
    example = next(line.split() for line in lines if line.startswith("python -m compute wtf "))
    res = run_cli(*example[3:], "--backend", "cpu", "--output", "json")
    rows = json.loads(res.stdout)
    assert rows and all(row["relevance"] and row["similarity"] for row in rows)
