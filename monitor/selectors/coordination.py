"""Coordinated accounts (docs/coordination.md): the coordination runs of a workspace or collection, a finished
run's summary, its clusters with their members beside their influence rank, what they share and when, its edges
(paged, and streamed for the downloads), the drawing of its largest clusters, and an account's cluster in the
workspace's latest runs (the account page's badge)."""

from __future__ import annotations

import numpy as np
from django.http import Http404

from ..cache import cached
from ..models import (
    Account,
    Collection,
    ComputeRun,
    CoordinationCluster,
    CoordinationEdge,
    CoordinationMember,
    CoordinationSummary,
    Tweet,
    Workspace,
)
from .network import Subgraph, _influence_ranks, accounts_of

__all__ = [
    "account_coordination",
    "coordination_cluster",
    "coordination_clusters",
    "coordination_edge_rows",
    "coordination_edges",
    "coordination_graph",
    "coordination_latest",
    "coordination_run_get",
    "coordination_runs",
    "coordination_summary",
]

PREVIEW = 5  # members named per cluster in the clusters table


def _scope(ws: Workspace, collection: Collection | None):
    runs = ComputeRun.objects.filter(workspace=ws, algorithm="coordination")
    return runs.filter(collection=collection) if collection is not None else runs.filter(collection__isnull=True)


def coordination_runs(ws: Workspace, *, collection: Collection | None = None, limit: int = 10) -> list[ComputeRun]:
    """The scope's coordination runs, newest first."""
    return list(_scope(ws, collection).select_related("created_by").order_by("-pk")[:limit])


def coordination_latest(
    ws: Workspace, *, collection: Collection | None = None, method: str | None = None
) -> ComputeRun | None:
    """The scope's newest finished coordination run (of ``method``, when given)."""
    runs = _scope(ws, collection).filter(status=ComputeRun.Status.DONE)
    if method is not None:
        runs = runs.filter(params__method=method)
    return runs.order_by("-pk").first()


def coordination_run_get(ws: Workspace, pk: int) -> ComputeRun:
    """A coordination run of the workspace (404 for another workspace's run, or a run of another algorithm)."""
    r = (
        ComputeRun.objects.filter(workspace=ws, pk=pk, algorithm="coordination")
        .select_related("collection", "created_by")
        .first()
    )
    if r is None:
        raise Http404("no such coordination run in this workspace")
    return r


def coordination_summary(run: ComputeRun) -> CoordinationSummary | None:
    """The run's summary once its batch stored it."""
    return CoordinationSummary.objects.filter(run=run).first()


def _named(pks, ranks: dict[int, int] | None = None) -> list[dict]:
    names = accounts_of(pks)
    out = []
    for pk in pks:
        tid, name = names.get(pk, (pk, ""))
        row = {"account": pk, "twitter_id": tid, "screen_name": name}
        if ranks is not None:
            row["influence_rank"] = ranks.get(pk)
        out.append(row)
    return out


def _cluster_row(c: CoordinationCluster, total_accounts: int) -> dict:
    return {
        "cluster": c.cluster,
        "size": c.size,
        "share": c.size / total_accounts if total_accounts else 0.0,
        "edges": c.edges,
        "mean_weight": c.mean_weight,
        "shared_tweets": c.shared_tweets,
        "first_at": c.first_at,
        "last_at": c.last_at,
        "spread_median_s": c.spread_median_s,
        "timeline": c.timeline,
    }


@cached
def coordination_clusters(ws: Workspace, run: ComputeRun, *, limit: int = 50, offset: int = 0) -> tuple[list, int]:
    """A page of the run's clusters from the largest, each with its first :data:`PREVIEW` members (most edges
    first) and their all-time influence rank, the publishers of its shared tweets, and how many there are. A
    fixed number of queries whatever the page's size."""
    qs = CoordinationCluster.objects.filter(run=run)
    clusters = list(qs.order_by("cluster")[offset : offset + limit])
    if not clusters:
        return [], qs.count()
    numbers = [c.cluster for c in clusters]
    preview: dict[int, list[int]] = {}
    for k, pk in (
        CoordinationMember.objects.filter(run=run, cluster__in=numbers)
        .order_by("cluster", "-degree", "account_id")
        .values_list("cluster", "account_id")
    ):
        if len(preview.setdefault(k, [])) < PREVIEW:
            preview[k].append(pk)
    shown = [pk for pks in preview.values() for pk in pks]
    publishers = {pk for c in clusters for pk, _n in c.publishers[:3]}
    ranks = _influence_ranks(ws, shown)
    names = accounts_of(set(shown) | publishers)
    summary = coordination_summary(run)
    rows = []
    for c in clusters:
        row = _cluster_row(c, summary.accounts if summary else 0)
        row["members"] = [
            {"twitter_id": names[pk][0], "screen_name": names[pk][1], "influence_rank": ranks.get(pk)}
            for pk in preview.get(c.cluster, [])
            if pk in names
        ]
        row["publishers"] = [
            {"twitter_id": names[pk][0], "screen_name": names[pk][1], "shared_tweets": n}
            for pk, n in c.publishers[:3]
            if pk in names
        ]
        rows.append(row)
    return rows, qs.count()


def coordination_cluster(ws: Workspace, run: ComputeRun, cluster: int, *, limit: int = 500) -> dict:
    """One cluster of the run: its numbers, its ``limit`` members with the most edges (with their retweets of
    the shared tweets and influence rank), the publishers of its shared tweets, its most shared tweets and its
    retweets per day (404 for a number the run does not have)."""
    c = CoordinationCluster.objects.filter(run=run, cluster=cluster).first()
    if c is None:
        raise Http404("no such cluster in this run")
    members = list(
        CoordinationMember.objects.filter(run=run, cluster=cluster)
        .order_by("-degree", "account_id")
        .values_list("account_id", "degree", "shared_retweets")[:limit]
    )
    ranks = _influence_ranks(ws, [m[0] for m in members])
    named = _named([m[0] for m in members], ranks)
    for row, (_pk, degree, shared) in zip(named, members, strict=True):
        row["degree"], row["shared_retweets"] = degree, shared
    tweets = {
        t.pk: t
        for t in Tweet.objects.filter(workspace=ws, pk__in=[pk for pk, _n in c.top_tweets]).select_related("author")
    }
    summary = coordination_summary(run)
    return {
        **_cluster_row(c, summary.accounts if summary else 0),
        "members": named,
        "publishers": [
            {**row, "shared_tweets": n}
            for row, (_pk, n) in zip(_named([pk for pk, _n in c.publishers]), c.publishers, strict=True)
        ],
        "tweets": [
            {
                "tweet_id": tweets[pk].tweet_id,
                "author": tweets[pk].author,
                "text": tweets[pk].text,
                "created_at": tweets[pk].created_at,
                "label": tweets[pk].label,
                "members": n,
            }
            for pk, n in c.top_tweets
            if pk in tweets
        ],
    }


def coordination_edges(run: ComputeRun, *, cluster: int | None = None, limit: int = 100, offset: int = 0):
    """A page of the run's edges in the engine's order (of one cluster, when given), as Twitter ids, and how many
    there are."""
    qs = CoordinationEdge.objects.filter(run=run)
    if cluster is not None:
        qs = qs.filter(cluster=cluster)
    page = list(
        qs.order_by("position").values_list("a__twitter_id", "b__twitter_id", "weight", "cluster")[
            offset : offset + limit
        ]
    )
    return [{"a": a, "b": b, "weight": w, "cluster": k} for a, b, w, k in page], qs.count()


def coordination_edge_rows(run: ComputeRun):
    """Every edge of the run in the engine's order as ``(a, b, weight, cluster)`` with Twitter ids (a
    server-side iterator: the downloads stream them)."""
    return (
        CoordinationEdge.objects.filter(run=run)
        .order_by("position")
        .values_list("a__twitter_id", "b__twitter_id", "weight", "cluster")
        .iterator(chunk_size=5000)
    )


def coordination_graph(ws: Workspace, run: ComputeRun, *, cluster: int | None = None, limit: int | None = None):
    """The run's coordination graph (one cluster's, when given) as a drawing's :class:`Subgraph`: its members
    with their cluster and degree, and its edges (weighted); capped to the largest clusters whose members fit in
    ``limit`` accounts (at least the largest cluster's first ``limit``)."""
    qs = CoordinationMember.objects.filter(run=run)
    if cluster is not None:
        qs = qs.filter(cluster=cluster)
    rows = list(qs.order_by("cluster", "-degree", "account_id").values_list("account_id", "cluster", "degree"))
    total = len(rows)
    if limit is not None and total > limit:
        sizes = dict(CoordinationCluster.objects.filter(run=run).values_list("cluster", "size"))
        kept_clusters, n = set(), 0
        for c in sorted({r[1] for r in rows}):
            if n + sizes.get(c, 0) > limit and kept_clusters:
                break
            kept_clusters.add(c)
            n += sizes.get(c, 0)
        rows = [r for r in rows if r[1] in kept_clusters][:limit]
    ids = np.array([r[0] for r in rows], np.int64)
    order = np.argsort(ids, kind="stable")
    edges = CoordinationEdge.objects.filter(run=run)
    if cluster is not None:
        edges = edges.filter(cluster=cluster)
    elif limit is not None and total > limit:
        edges = edges.filter(cluster__in={r[1] for r in rows})
    kept = set(ids.tolist())
    src, dst, w = [], [], []
    for a, b, weight in edges.values_list("a_id", "b_id", "weight").iterator(chunk_size=10_000):
        if a in kept and b in kept:
            src.append(a)
            dst.append(b)
            w.append(weight)
    every = CoordinationEdge.objects.filter(run=run, **({"cluster": cluster} if cluster is not None else {})).count()
    summary = coordination_summary(run)
    sub = Subgraph(
        ids[order],
        np.array(src, np.int64),
        np.array(dst, np.int64),
        np.array(w, np.float64),
        {
            "cluster": np.array([r[1] for r in rows], float)[order],
            "degree": np.array([r[2] for r in rows], float)[order],
        },
        {
            "run": run.pk,
            "method": summary.method if summary else run.params.get("method"),
            **({"cluster": cluster} if cluster is not None else {}),
        },
    )
    sub.hidden_nodes, sub.hidden_edges = total - len(rows), every - len(src)
    return sub


def account_coordination(ws: Workspace, account: Account) -> list[dict]:
    """The account's cluster in the workspace's newest finished coordination run of each method (the account
    page's badge): ``[{"run", "method", "cluster", "size", "degree"}, ...]``, empty when it is in none."""
    out = []
    for method in ("co-retweet", "similarity"):
        run = coordination_latest(ws, method=method)
        if run is None:
            continue
        m = CoordinationMember.objects.filter(run=run, account=account).first()
        if m is None:
            continue
        size = CoordinationCluster.objects.filter(run=run, cluster=m.cluster).values_list("size", flat=True).first()
        out.append({"run": run, "method": method, "cluster": m.cluster, "size": size, "degree": m.degree})
    return out
