"""generate(): files that load back, the CSV folder, and the statistics it returns."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from compute.collection import load_collection
from compute.generators import PRESETS, collection_stats, generate, graph_stats, random_spreading_graphs
from compute.structures import Cascades, SpreadingGraphs, load_archive

from .helpers import assert_same_arrays, graph_arrays


def test_it_offers_the_three_presets():
    assert PRESETS == ("rsg", "seibert", "twitter")


@pytest.mark.parametrize("preset,scale", [("rsg", 0.005), ("seibert", 0.2)])
def test_it_writes_a_spreading_graph_archive_that_loads_back(tmp_path, preset, scale):
    path = tmp_path / f"{preset}.npz"
    stats = generate(preset, path, scale=scale, seed=4)
    loaded = load_archive(path)
    assert_same_arrays(graph_arrays(loaded), graph_arrays(random_spreading_graphs(preset, scale=scale, seed=4)))
    assert stats == {**stats, **graph_stats(loaded)}
    assert stats["preset"] == preset and stats["path"] == str(path)
    assert not list(tmp_path.glob("*.tmp"))
    json.dumps(stats)  # plain numbers only: the CLI prints it as JSON


def test_it_writes_a_collection_archive_that_loads_back(tmp_path):
    path = tmp_path / "tw.npz"
    calls = []
    stats = generate("twitter", path, scale=0.0005, seed=3, progress=lambda s, f: calls.append((s, f)))
    tweets, graph, labels = load_collection(path)
    assert labels == {}
    assert stats == {**stats, **collection_stats(tweets, graph)}
    assert stats["cascades"] == 50 and stats["retweets"] == len(tweets) - 50
    assert calls and all(0.0 <= f <= 1.0 for _, f in calls)
    json.dumps(stats)


def test_it_writes_a_csv_folder_with_the_design_headers(tmp_path):
    folder = tmp_path / "tw_csv"
    stats = generate("twitter", folder, scale=0.0003, seed=1, fmt="csv")
    with open(folder / "tweets.csv", newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["tweet_id", "retweeted_tweet_id", "user_id", "created_at", "followers_count"]
    body = rows[1:]
    assert len(body) == stats["cascades"] + stats["retweets"]
    originals = [r for r in body if r[1] == ""]
    assert len(originals) == stats["cascades"]
    ids = {r[0] for r in originals}
    assert all(r[1] in ids for r in body if r[1])
    assert all(int(r[3]) > 1_590_000_000 and int(r[4]) >= 0 for r in body)
    with open(folder / "follows.csv", newline="") as fh:
        follows = list(csv.reader(fh))
    assert follows[0] == ["follower_id", "followee_id"]
    assert len(follows) - 1 == stats["follow_edges"]
    assert all(a != b for a, b in follows[1:])


def test_it_refuses_csv_for_spreading_graphs_and_unknown_presets(tmp_path):
    with pytest.raises(ValueError, match="npz"):
        generate("rsg", tmp_path / "x", fmt="csv")
    with pytest.raises(ValueError, match="unknown preset"):
        generate("bigger4", tmp_path / "x.npz")
    with pytest.raises(ValueError, match="fmt"):
        generate("seibert", tmp_path / "x.npz", fmt="parquet")


def test_it_computes_table_7_1_statistics_of_hand_made_graphs():
    # three graphs: n = 1; n = 3 (nodes 1-3, publisher 1, two edges); n = 40 (nodes 4-43, a chain into 4)
    sizes = [1, 3, 40]
    off = np.concatenate([[0], np.cumsum(sizes)])
    src = [2, 3, *range(5, 44)]
    dst = [1, 1, *range(4, 43)]
    cascades = Cascades(
        node_offsets=off,
        user_ids=np.arange(44) % 30,
        followers=np.ones(44),
        publisher=off[:-1],
        tweet_ids=np.arange(3),
    )
    g = SpreadingGraphs(cascades, [0, 0, 2, 41], src, dst)
    s = graph_stats(g)
    assert s == {
        "T": 3, "N": 44, "M": 41, "U": 30,
        "avg_n": pytest.approx(44 / 3), "median_n": 3, "max_n": 40,
        "avg_m": pytest.approx(41 / 3), "median_m": 2, "max_m": 39,
        "empty": 1, "small": 1, "medium": 1, "large": 0,
    }  # fmt: skip
