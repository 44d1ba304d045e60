"""``python -m compute network`` end to end, as an analyst runs it: rows sorted by value then user id, ids as
strings, the engine's own values, and clear errors (exit 2) for bad input and bad arguments."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from compute.algorithms import network as net
from compute.formats import read_many
from compute.graphs import graph_from_edges

from .test_cli import run_cli

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
TWEETS = str(DATA / "thesis_example" / "tweets.csv")
FOLLOWS = str(DATA / "thesis_example" / "follows.csv")


def _json(*args: str) -> tuple[list[dict], str]:
    res = run_cli("network", *args, "--output", "json")
    return json.loads(res.stdout), res.stderr


def _follows_graph():
    f = read_many([Path(FOLLOWS)]).follows
    return graph_from_edges(f.follower_id, f.followee_id)


def _assert_sorted(rows: list[dict]) -> None:
    keys = [(-r["value"], int(r["user_id"])) for r in rows]
    assert keys == sorted(keys)
    assert all(isinstance(r["user_id"], str) for r in rows)


@pytest.mark.parametrize(
    "analysis, expected",
    [
        ("kcore", lambda g: net.core_numbers(g, backend="cpu")),
        ("betweenness", lambda g: net.betweenness(g, backend="cpu").values),
        ("clustering", lambda g: net.clustering(g, backend="cpu").local),
    ],
)
def test_it_prints_every_account_with_the_engines_value_sorted_by_value_then_id(analysis, expected):
    rows, _ = _json(TWEETS, "--follows", FOLLOWS, "--analysis", analysis, "--top", "0", "--backend", "cpu")
    g = _follows_graph()
    want = dict(zip(map(str, g.ids.tolist()), expected(g).tolist()))
    assert {r["user_id"]: r["value"] for r in rows} == pytest.approx(want)
    assert len(rows) == g.n_nodes
    _assert_sorted(rows)


def test_degrees_rows_carry_in_and_out_and_the_summary_goes_to_stderr():
    rows, err = _json(TWEETS, "--follows", FOLLOWS, "--analysis", "degrees", "--top", "3")
    assert len(rows) == 3
    assert rows[0] == {"user_id": "102", "value": 5, "in": 4, "out": 1}  # followed by 101, 103, 104, 106
    assert all(r["value"] == r["in"] + r["out"] for r in rows)
    _assert_sorted(rows)
    assert "in-degree: mean 1.333" in err and "out-degree" in err


def test_strong_components_rows_name_their_component_and_the_sizes_go_to_stderr():
    rows, err = _json(TWEETS, "--follows", FOLLOWS, "--analysis", "scc", "--top", "0")
    assert [(r["user_id"], r["value"], r["component"]) for r in rows[:2]] == [("101", 2, 0), ("102", 2, 0)]
    assert {r["component"] for r in rows[2:]} == {1, 2, 3, 4}
    assert "5 strong component(s), sizes: 2, 1, 1, 1, 1" in err


def test_cascade_tree_folders_give_one_follows_graph_over_all_trees():
    rows, err = _json(str(DATA / "twitter16"), "--analysis", "components", "--top", "0")
    f = read_many([DATA / "twitter16"]).follows
    g = graph_from_edges(f.follower_id, f.followee_id)
    comps = net.components(g, backend="cpu")
    assert len(rows) == g.n_nodes
    got = {r["user_id"]: (r["value"], r["component"]) for r in rows}
    assert got == {str(i): (int(comps.sizes[c]), int(c)) for i, c in zip(g.ids.tolist(), comps.labels.tolist())}
    assert f"{g.n_nodes:,} accounts" in err
    _assert_sorted(rows)


def test_the_interaction_graph_links_retweeters_to_the_author():
    rows, err = _json(TWEETS, "--graph", "interactions", "--analysis", "betweenness", "--top", "2")
    assert rows == [{"user_id": "102", "value": 10.0}, {"user_id": "101", "value": 0.0}]  # a star of 5 retweeters
    assert "interactions graph: 6 accounts, 5 edges" in err


def test_sampled_betweenness_says_so_and_repeats_for_a_seed(tmp_path):
    path = tmp_path / "follows.csv"
    rng = np.random.default_rng(0)
    pairs = rng.integers(0, 60, (300, 2)) + 2**60  # ids past 2**53: they must come back digit for digit
    path.write_text("follower_id,followee_id\n" + "".join(f"{a},{b}\n" for a, b in pairs))
    a, err = _json(str(path), "--analysis", "betweenness", "--samples", "10", "--seed", "4", "--top", "5")
    b, _ = _json(str(path), "--analysis", "betweenness", "--samples", "10", "--seed", "4", "--top", "5")
    assert a == b and len(a) == 5
    assert all(int(r["user_id"]) >= 2**60 and str(int(r["user_id"])) == r["user_id"] for r in a)
    assert "sampled 10 sources" in err


def _ring_with_chords(tmp_path, n: int = 400) -> tuple[Path, object]:
    path = tmp_path / "follows.txt"
    src = np.concatenate([np.arange(n), np.arange(n)])
    dst = np.concatenate([(np.arange(n) * 7 + 1) % n, (np.arange(n) + 1) % n])
    path.write_text("".join(f"{a} {b}\n" for a, b in zip(src, dst)))
    return path, graph_from_edges(src, dst)


def test_betweenness_samples_256_sources_by_default_as_the_web_app(tmp_path):
    # exact by default, the command printed nothing for minutes on a large graph, while the web form samples 256
    path, g = _ring_with_chords(tmp_path)
    rows, err = _json(str(path), "--analysis", "betweenness", "--top", "0", "--backend", "cpu")
    assert "note: sampled 256 sources over 1 components" in err
    want = net.betweenness(g, samples=256, seed=0, backend="cpu").values
    # computed a wave of source blocks at a time (for the progress line), to the engine's bits
    assert {r["user_id"]: r["value"] for r in rows} == dict(zip(map(str, g.ids.tolist()), want.tolist()))
    assert "(default 256, as the web app; 0: exact)" in " ".join(run_cli("network", "--help").stdout.split())


@pytest.mark.parametrize("flag", [["--exact"], ["--samples", "0"]])
def test_exact_betweenness_stays_one_flag_away(tmp_path, flag):
    path, g = _ring_with_chords(tmp_path)
    rows, err = _json(str(path), "--analysis", "betweenness", *flag, "--top", "0", "--backend", "cpu")
    assert "note: exact: all 400 nodes are sources" in err
    want = net.betweenness(g, backend="cpu").values
    assert {r["user_id"]: r["value"] for r in rows} == dict(zip(map(str, g.ids.tolist()), want.tolist()))


def test_exact_and_samples_together_are_refused(tmp_path):
    path, _ = _ring_with_chords(tmp_path, 10)
    res = run_cli("network", str(path), "--analysis", "betweenness", "--exact", "--samples", "5", check=False)
    assert res.returncode == 2 and "not allowed with argument" in res.stderr


def test_the_neighbourhood_of_an_account_lists_the_accounts_within_depth():
    rows, _ = _json(TWEETS, "--follows", FOLLOWS, "--analysis", "neighbourhood", "--account", "104", "--top", "0")
    assert {r["user_id"]: r["distance"] for r in rows} == {"104": 0, "102": 1}
    rows, _ = _json(TWEETS, "--follows", FOLLOWS, "--analysis", "neighbourhood", "--account", "104", "--depth", "2")
    assert sorted(r["user_id"] for r in rows) == ["101", "102", "103", "104", "105"]  # 106 is 3 hops away (via 105)


def test_it_writes_csv_and_a_table():
    res = run_cli("network", TWEETS, "--follows", FOLLOWS, "--analysis", "conversations", "--output", "csv")
    assert res.stdout.splitlines() == ["user_id,value,component", "101,1,0", "102,1,0"]
    assert "conversations: 2 of 6 accounts, 2 of 8 edges" in res.stderr
    res = run_cli("network", TWEETS, "--follows", FOLLOWS, "--analysis", "kcore", "--top", "2")
    assert res.stdout.splitlines()[0].split() == ["rank", "user_id", "value"]
    assert res.stdout.splitlines()[1].split() == ["1", "101", "2"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--analysis", "degrees", "--top", "-1"], "--top must be >= 0"),
        (["--analysis", "betweenness", "--samples", "-2"], "--samples must be >= 0"),
        (["--analysis", "betweenness", "--seed", "-1"], "--seed must be >= 0"),
        (["--analysis", "neighbourhood"], "needs --account"),
        (["--analysis", "neighbourhood", "--account", "999"], "--account 999: not in the follows graph"),
        (["--analysis", "neighbourhood", "--account", "101", "--depth", "-1"], "--depth must be >= 0"),
    ],
)
def test_bad_arguments_exit_2_naming_the_flag(args, message):
    res = run_cli("network", TWEETS, "--follows", FOLLOWS, *args, check=False)
    assert res.returncode == 2 and message in res.stderr and res.stdout == ""


def test_bad_input_exits_2_naming_file_line_and_field():
    bad = DATA / "bad" / "csv" / "missing_user_id.csv"
    res = run_cli("network", str(bad), "--graph", "interactions", "--analysis", "degrees", check=False)
    assert res.returncode == 2
    assert f"{bad}:4: field 'user_id'" in res.stderr


def test_a_follows_analysis_without_follows_says_what_to_give():
    res = run_cli("network", TWEETS, "--analysis", "kcore", check=False)
    assert res.returncode == 2 and "--follows FILE" in res.stderr


def test_communities_number_every_account_by_community_size_and_report_the_modularity():
    pytest.importorskip("networkit")
    from compute.algorithms.communities import communities

    rows, err = _json(FOLLOWS, "--analysis", "communities", "--top", "0", "--seed", "4")
    want = communities(_follows_graph(), seed=4)
    g = _follows_graph()
    by_id = {str(int(i)): int(c) for i, c in zip(g.ids, want.labels)}
    assert {r["user_id"]: r["value"] for r in rows} == by_id
    keys = [(r["value"], int(r["user_id"])) for r in rows]
    assert keys == sorted(keys)  # community 1 (the largest) first, then by user id
    assert all(r["size"] == want.sizes[r["value"] - 1] for r in rows)
    assert f"modularity {want.modularity:.6f} (resolution 1, seed 4)" in err, err
    assert f"{len(want.sizes)} communities, sizes: " in err, err


def test_communities_refuse_a_bad_resolution_and_the_gpu_by_name():
    res = run_cli("network", FOLLOWS, "--analysis", "communities", "--resolution", "0", check=False)
    assert res.returncode == 2 and "resolution must be a number > 0" in res.stderr, res.stderr
    res = run_cli("network", FOLLOWS, "--analysis", "communities", "--backend", "gpu", check=False)
    assert res.returncode == 2 and "communities have no GPU twin" in res.stderr, res.stderr
