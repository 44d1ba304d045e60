"""Coordinated accounts as a compute-run algorithm: a run stores the edges the engine (and so the command line)
finds on the same retweets, in its order, with each cluster's shared tweets, time spread, publishers and
timeline; a collection's run reads only its retweets; bad parameters are refused by name; a cancelled batch
stores nothing, a batch delivered twice stores once, and the budget refuses a run by the parameter that drives
its pairs."""

from __future__ import annotations

import numpy as np
import pytest
from django.core.exceptions import ValidationError

from compute.algorithms.coordination import coordination
from monitor import services
from monitor.algorithms.coordination import COORDINATION
from monitor.models import (
    Account,
    ComputeBatch,
    ComputeRun,
    CoordinationCluster,
    CoordinationEdge,
    CoordinationMember,
    CoordinationSummary,
    Tweet,
)
from tests.coordinated import PLANTED, PLANTED_TWEETS, coordinated_csv


@pytest.fixture
def planted(ws_a, import_files, tmp_path):
    path, retweets = coordinated_csv(tmp_path / "tweets.csv")
    c = import_files(ws_a, [path])
    assert c.status == c.Status.DONE, c.error
    return ws_a, retweets


def _run(run_tasks, ws, **params) -> ComputeRun:
    run = run_tasks(services.compute_run_start, workspace=ws, backend="cpu", algorithm="coordination", params=params)
    run.refresh_from_db()
    return run


def _edges(run) -> list[dict]:
    twitter = dict(Account.objects.filter(workspace=run.workspace).values_list("pk", "twitter_id"))
    return [
        {"a": str(twitter[a]), "b": str(twitter[b]), "weight": w, "cluster": k}
        for a, b, w, k in CoordinationEdge.objects.filter(run=run)
        .order_by("position")
        .values_list("a_id", "b_id", "weight", "cluster")
    ]


@pytest.mark.parametrize(
    "params", [{"window": 30, "min_count": 2}, {"method": "similarity", "min_retweets": 3, "threshold": 0.5}]
)
def test_a_run_stores_the_edges_the_engine_finds_in_its_order(planted, run_tasks, params):
    ws, (tweet, account, time) = planted
    run = _run(run_tasks, ws, **params)
    assert run.status == ComputeRun.Status.DONE, (run.error, run.notes)
    want = coordination(tweet, account, time, backend="cpu", **params)
    got = _edges(run)
    rows = want.rows()
    assert [(r["a"], r["b"], r["cluster"]) for r in got] == [(r["a"], r["b"], r["cluster"]) for r in rows]
    assert [r["weight"] for r in got] == pytest.approx([r["weight"] for r in rows], abs=1e-12)
    s = CoordinationSummary.objects.get(run=run)
    assert (s.method, s.accounts, s.tweets, s.pairs) == (want.method, want.accounts, want.tweets, want.pairs)
    assert s.n_edges == len(rows) > 0 and s.n_clusters == len(want.clusters()) and run.n_edges == len(rows)


def test_each_cluster_keeps_what_its_members_share(planted, run_tasks):
    ws, (tweet, account, _time) = planted
    run = _run(run_tasks, ws, window=10, min_count=4)  # only the planted group retweets 4 tweets within 10 s
    assert run.status == ComputeRun.Status.DONE, run.error
    (c,) = CoordinationCluster.objects.filter(run=run)
    assert (c.cluster, c.size, c.edges, c.mean_weight) == (1, 5, 10, 4.0)
    members = CoordinationMember.objects.filter(run=run).select_related(None)
    twitter = dict(Account.objects.filter(workspace=ws).values_list("pk", "twitter_id"))
    assert sorted(twitter[m.account_id] for m in members) == list(PLANTED)
    assert {m.degree for m in members} == {4} and {m.cluster for m in members} == {1}
    # the shared tweets: every tweet two or more members retweeted (the planted 4, and any the random part adds)
    mine = np.isin(account, PLANTED)
    tw, per = np.unique(tweet[mine], return_counts=True)
    shared = set(tw[per >= 2].tolist())
    assert set(PLANTED_TWEETS) <= shared and c.shared_tweets == len(shared)
    pks = dict(Tweet.objects.filter(workspace=ws).values_list("pk", "tweet_id"))
    top = {pks[pk]: n for pk, n in c.top_tweets}
    assert all(top[t] == 5 for t in PLANTED_TWEETS)
    assert sum(m.shared_retweets for m in members) == sum(int(per[i]) for i in np.flatnonzero(per >= 2))
    # when: the spread of each planted tweet is under 10 s; the publishers are those of the shared tweets
    assert (c.spread_median_s is not None and c.spread_median_s < 10) or len(shared) > 4
    authors = dict(Tweet.objects.filter(workspace=ws).values_list("pk", "author__twitter_id"))
    by_publisher = {}
    for pk in (pk for pk, t in pks.items() if t in shared):
        by_publisher[authors[pk]] = by_publisher.get(authors[pk], 0) + 1
    got = {twitter[pk]: n for pk, n in c.publishers}
    assert got == by_publisher
    assert [n for _pk, n in c.publishers] == sorted(by_publisher.values(), reverse=True)
    assert sum(n for _day, n in c.timeline) == sum(m.shared_retweets for m in members)
    assert all(hour.startswith("2020-01-01T") for hour, _n in c.timeline) and c.first_at < c.last_at
    assert [h for h, _n in c.timeline] == sorted(h for h, _n in c.timeline)


def test_a_collections_run_reads_only_its_retweets(planted, run_tasks, import_files, tmp_path):
    ws, _ = planted
    other, _ = coordinated_csv(tmp_path / "again.csv", seed=9, first_tweet=2000)
    second = import_files(ws, [other])
    assert second.status == second.Status.DONE
    whole = _run(run_tasks, ws, window=30)
    scoped = run_tasks(
        services.compute_run_start,
        workspace=ws,
        collection=second,
        backend="cpu",
        algorithm="coordination",
        params={"collection": second.pk, "window": 30},
    )
    scoped.refresh_from_db()
    assert scoped.status == ComputeRun.Status.DONE and scoped.params["collection"] == second.pk
    assert CoordinationSummary.objects.get(run=whole).tweets == 24
    assert CoordinationSummary.objects.get(run=scoped).tweets == 12


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"method": "pagerank"}, "method: co-retweet or similarity"),
        ({"window": -1}, "window: from 0"),
        ({"window": "soon"}, "window: a number"),
        ({"min_count": 1.5}, "min_count: a whole number"),
        ({"method": "similarity", "threshold": 0}, "threshold: a cosine above 0"),
        ({"method": "similarity", "threshold": 2}, "threshold: from 0 to 1"),
        ({"depth": 2}, "unknown: depth"),
    ],
)
def test_bad_parameters_are_refused_by_name(ws_a, params, message):
    with pytest.raises(ValueError, match=message):
        COORDINATION.clean_params(params)
    with pytest.raises(ValidationError):
        services.compute_run_start(workspace=ws_a, algorithm="coordination", params=params)
    assert not ComputeRun.objects.filter(workspace=ws_a, algorithm="coordination").exists()


def test_the_defaults_and_only_the_methods_own_parameters_are_stored(ws_a):
    assert COORDINATION.clean_params({}) == {"method": "co-retweet", "collection": None, "window": 60.0, "min_count": 2}
    assert COORDINATION.clean_params({"method": "similarity", "window": 5}) == {
        "method": "similarity",
        "collection": None,
        "min_retweets": 10,
        "threshold": 0.9,
    }


def test_a_cancelled_run_stores_nothing_and_a_batch_delivered_twice_stores_once(planted, run_tasks, monkeypatch):
    ws, _ = planted
    from compute.algorithms import coordination as engine

    run = services.compute_run_start(workspace=ws, backend="cpu", algorithm="coordination", params={"window": 30})
    (batch,) = ComputeBatch.objects.filter(run=run)
    real = engine.coordination

    def cancel_meanwhile(*args, **kwargs):
        services.compute_run_cancel(run=run)
        return real(*args, **kwargs)

    monkeypatch.setattr(engine, "coordination", cancel_meanwhile)
    assert services.compute_batch_run(batch_id=batch.pk).status == ComputeBatch.Status.CANCELLED
    assert not CoordinationEdge.objects.filter(run=run).exists()
    assert not CoordinationSummary.objects.filter(run=run).exists()
    monkeypatch.setattr(engine, "coordination", real)
    again = services.compute_run_start(workspace=ws, backend="cpu", algorithm="coordination", params={"window": 30})
    (batch,) = ComputeBatch.objects.filter(run=again)
    services.compute_batch_run(batch_id=batch.pk)
    n = CoordinationEdge.objects.filter(run=again).count()
    services.compute_batch_run(batch_id=batch.pk)  # delivered again: a done batch is not stored twice
    assert CoordinationEdge.objects.filter(run=again).count() == n > 0


def test_a_run_beyond_the_budget_is_refused_by_the_parameter_that_drives_its_pairs(planted, monkeypatch):
    from compute import costs

    ws, _ = planted
    monkeypatch.setattr(costs, "COORD_SECONDS_PER_PAIR", 1e6)
    with pytest.raises(ValidationError) as exc:
        services.compute_run_start(workspace=ws, algorithm="coordination", params={"window": 600})
    msg = exc.value.message_dict["window"][0]
    assert "co-retweet counts" in msg and "a narrower window" in msg and "this workspace's budget" in msg, msg
    with pytest.raises(ValidationError) as exc:
        services.compute_run_start(
            workspace=ws, algorithm="coordination", params={"method": "similarity", "min_retweets": 3}
        )
    assert "min_retweets" in exc.value.message_dict


def test_purging_the_workspace_deletes_its_coordination_rows(planted, run_tasks):
    ws, _ = planted
    run = _run(run_tasks, ws, window=30)
    assert CoordinationEdge.objects.filter(run=run).exists()
    services.workspace_purge(workspace=ws, delete_workspace=False)
    for model in (CoordinationEdge, CoordinationMember, CoordinationCluster, CoordinationSummary):
        assert not model.objects.filter(run_id=run.pk).exists(), model.__name__
