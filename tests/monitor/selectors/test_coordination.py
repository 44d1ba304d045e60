"""Coordination reads: the latest finished run per scope and method, the clusters with their members' influence
rank in a fixed number of queries, a cluster's members, publishers and shared tweets, the edges paged in the
engine's order, the drawing capped to the largest clusters, and an account's cluster for its page's badge."""

from __future__ import annotations

import pytest
from django.db import connection
from django.http import Http404
from django.test.utils import CaptureQueriesContext

from compute.algorithms.coordination import coordination
from monitor import selectors, services
from monitor.models import Account, ComputeRun
from tests.coordinated import PLANTED, PLANTED_TWEETS, coordinated_csv


@pytest.fixture
def planted(ws_a, import_files, tmp_path):
    path, retweets = coordinated_csv(tmp_path / "tweets.csv")
    import_files(ws_a, [path])
    return ws_a, retweets


def _run(run_tasks, ws, **params) -> ComputeRun:
    run = run_tasks(services.compute_run_start, workspace=ws, backend="cpu", algorithm="coordination", params=params)
    run.refresh_from_db()
    assert run.status == ComputeRun.Status.DONE, run.error
    return run


def test_the_latest_finished_run_is_chosen_per_scope_and_method(planted, run_tasks):
    ws, _ = planted
    assert selectors.coordination_latest(ws) is None
    co = _run(run_tasks, ws, window=30)
    sim = _run(run_tasks, ws, method="similarity", min_retweets=3, threshold=0.5)
    queued = services.compute_run_start(workspace=ws, backend="cpu", algorithm="coordination", params={})
    assert selectors.coordination_latest(ws) == sim
    assert selectors.coordination_latest(ws, method="co-retweet") == co
    assert selectors.coordination_latest(ws, collection=ws.collections.get()) is None
    assert [r.pk for r in selectors.coordination_runs(ws)] == [queued.pk, sim.pk, co.pk]
    with pytest.raises(Http404):
        selectors.coordination_run_get(ws, ws.compute_runs.filter(algorithm="influence").first().pk)


def test_the_clusters_come_with_their_members_influence_rank_in_a_fixed_number_of_queries(planted, run_tasks):
    ws, _ = planted
    run = _run(run_tasks, ws, window=300, min_count=1)
    with CaptureQueriesContext(connection) as few:
        rows, count = selectors.coordination_clusters(ws, run, limit=2)
    with CaptureQueriesContext(connection) as many:
        rows_all, count_all = selectors.coordination_clusters(ws, run, limit=50)
    assert count == count_all >= 2 and len(rows) == 2 and len(many.captured_queries) == len(few.captured_queries)
    assert [r["cluster"] for r in rows_all] == list(range(1, count + 1))
    assert [r["size"] for r in rows_all] == sorted((r["size"] for r in rows_all), reverse=True)
    ranked = {a.screen_name or str(a.twitter_id) for a in Account.objects.filter(workspace=ws)}
    for r in rows_all:
        assert 1 <= len(r["members"]) <= min(r["size"], 5)
        assert all(m["influence_rank"] is None or m["influence_rank"] >= 1 for m in r["members"])
        assert all(p["shared_tweets"] >= 1 for p in r["publishers"]) and ranked


def test_a_cluster_has_its_members_publishers_and_shared_tweets(planted, run_tasks):
    ws, _ = planted
    run = _run(run_tasks, ws, window=10, min_count=4)
    c = selectors.coordination_cluster(ws, run, 1)
    assert c["size"] == 5 and sorted(m["twitter_id"] for m in c["members"]) == list(PLANTED)
    assert {m["degree"] for m in c["members"]} == {4}
    assert {t["tweet_id"] for t in c["tweets"] if t["members"] == 5} == set(PLANTED_TWEETS)
    assert sum(p["shared_tweets"] for p in c["publishers"]) == c["shared_tweets"]
    with pytest.raises(Http404):
        selectors.coordination_cluster(ws, run, 2)


def test_the_edges_page_in_the_engines_order(planted, run_tasks):
    ws, (tweet, account, time) = planted
    run = _run(run_tasks, ws, window=30)
    want = coordination(tweet, account, time, window=30, backend="cpu").rows()
    first, count = selectors.coordination_edges(run, limit=7)
    rest, _ = selectors.coordination_edges(run, limit=10_000, offset=7)
    got = [
        {"a": str(r["a"]), "b": str(r["b"]), "weight": int(r["weight"]), "cluster": r["cluster"]} for r in first + rest
    ]
    assert count == len(want) and got == want
    one, n = selectors.coordination_edges(run, cluster=1, limit=10_000)
    assert n == sum(r["cluster"] == 1 for r in want) and {r["cluster"] for r in one} == {1}


def test_the_drawing_keeps_the_largest_clusters_that_fit(planted, run_tasks):
    ws, _ = planted
    run = _run(run_tasks, ws, window=300, min_count=1)
    whole = selectors.coordination_graph(ws, run)
    assert whole.hidden_nodes == 0 and len(whole.ids) == len(set(whole.ids.tolist()))
    sizes = [r["size"] for r in selectors.coordination_clusters(ws, run, limit=1000)[0]]
    capped = selectors.coordination_graph(ws, run, limit=sizes[0] + 1)
    kept = set(capped.attrs["cluster"].tolist())
    assert 1.0 in kept and len(capped.ids) <= sizes[0] + 1 and capped.hidden_nodes == len(whole.ids) - len(capped.ids)
    one = selectors.coordination_graph(ws, run, cluster=1)
    assert set(one.attrs["cluster"].tolist()) == {1.0} and len(one.ids) == sizes[0]


def test_an_accounts_badge_names_its_cluster_in_the_latest_run_of_each_method(planted, run_tasks):
    ws, _ = planted
    planted_account = Account.objects.get(workspace=ws, twitter_id=PLANTED[0])
    assert selectors.account_coordination(ws, planted_account) == []
    run = _run(run_tasks, ws, window=10, min_count=4)
    (badge,) = selectors.account_coordination(ws, planted_account)
    assert (badge["run"], badge["method"], badge["cluster"], badge["size"], badge["degree"]) == (
        run,
        "co-retweet",
        1,
        5,
        4,
    )
    loner = Account.objects.filter(workspace=ws).exclude(twitter_id__in=PLANTED).first()
    assert selectors.account_coordination(ws, loner) == []
    _run(run_tasks, ws, window=1, min_count=50)  # a newer run where nobody is coordinated: no badge
    assert selectors.account_coordination(ws, planted_account) == []
