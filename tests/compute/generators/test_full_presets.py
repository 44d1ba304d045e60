"""Full-size presets against the published statistics (run with ``pytest -m slow``).

Full rsg: ~30 s and ~5 GB peak RSS; full twitter: ~50 s and ~7 GB (see docs/generators.md).
"""

from __future__ import annotations

import pytest

from compute.generators import (
    BIGGER4_TARGETS,
    RSG_TARGETS,
    collection_stats,
    graph_stats,
    random_spreading_graphs,
    twitter_collection,
)

from .helpers import assert_single_sink_dags

pytestmark = pytest.mark.slow


def test_it_matches_table_7_1_for_the_full_rsg_preset():
    g = random_spreading_graphs("rsg", scale=1.0, seed=0)
    s = graph_stats(g)
    for key, target in RSG_TARGETS.items():
        assert abs(s[key] / target - 1) <= 0.10, (key, s[key], target)
    assert (s["empty"], s["small"], s["medium"], s["large"]) == (170, 5250, 9845, 170)
    assert_single_sink_dags(g)


def test_it_matches_bigger4_for_the_full_twitter_preset():
    tweets, graph = twitter_collection(scale=1.0, seed=0)
    s = collection_stats(tweets, graph)
    assert s["cascades"] == BIGGER4_TARGETS["cascades"]
    for key in ("users", "follow_edges", "retweets"):
        assert abs(s[key] / BIGGER4_TARGETS[key] - 1) <= 0.10, (key, s[key])
