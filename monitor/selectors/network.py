"""Network analytics (docs/network.md): the network runs of a workspace or collection, a finished run's summary,
its brokers beside their influence rank, its accounts, components and conversation graph, and an account's
neighbourhood, computed on request from the graph the process keeps (``monitor.algorithms.network.load_graph``).

A subgraph (a component, the conversation graph, a neighbourhood) comes as a :class:`Subgraph` of account pks,
which the pages draw (:func:`drawing`) and the exports write (``monitor.exports``)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np
from django.db import connection
from django.http import Http404

from compute.algorithms.network import neighbourhood as engine_neighbourhood
from compute.drawing import force_layout
from compute.graphs import subgraph

from ..algorithms.network import GRAPHS, GraphSpec, load_graph
from ..cache import cached, read_cache_seconds
from ..models import Account, Collection, ComputeRun, NetworkAccount, NetworkSummary, Workspace

__all__ = [
    "ACCOUNT_SORTS",
    "DIRECTIONS",
    "MAX_DEPTH",
    "Subgraph",
    "drawing",
    "drawing_layout",
    "network_accounts",
    "network_brokers",
    "network_communities",
    "network_community",
    "network_community_graph",
    "network_component",
    "network_component_graph",
    "network_conversation_graph",
    "network_latest",
    "network_neighbourhood",
    "network_run_get",
    "network_runs",
    "network_summary",
]

#: what the per-account table can be ordered by (descending, ties by account)
ACCOUNT_SORTS = (
    "betweenness",
    "in_degree",
    "out_degree",
    "core",
    "clustering",
    "triangles",
    "conversation_degree",
)
DIRECTIONS = ("both", "out", "in")
FOLLOWS = GraphSpec()  # the workspace's follower graph, the default graph of a neighbourhood
MAX_DEPTH = 3  # beyond three hops a follower graph's neighbourhood is most of the graph
LAYOUT_VERSION = 1  # part of a cached layout's key: bump it when force_layout's picture changes
ACCOUNT_COLUMNS = (
    "account_id",
    "account__twitter_id",
    "account__screen_name",
    "in_degree",
    "out_degree",
    "component",
    "strong_component",
    "core",
    "clustering",
    "triangles",
    "betweenness",
    "conversation_degree",
    "conversation_component",
    "community",
)
#: the accounts listed per community in the communities table (by influence rank)
COMMUNITY_TOP = 3


# --- runs ------------------------------------------------------------------------------------------------------


def _scope(ws: Workspace, collection: Collection | None):
    runs = ComputeRun.objects.filter(workspace=ws, algorithm="network")
    return runs.filter(collection=collection) if collection is not None else runs.filter(collection__isnull=True)


def network_runs(ws: Workspace, *, collection: Collection | None = None, limit: int = 10) -> list[ComputeRun]:
    """The newest network runs of the workspace (or of one collection), any status, newest first."""
    return list(_scope(ws, collection).select_related("created_by").order_by("-pk")[:limit])


def network_latest(ws: Workspace, *, graph: str = "follows", collection: Collection | None = None) -> ComputeRun | None:
    """The newest finished network run of the workspace (or collection) over graph kind ``graph``."""
    if graph not in GRAPHS:
        raise ValueError(f"graph: {' or '.join(GRAPHS)}")
    return (
        _scope(ws, collection)
        .filter(status=ComputeRun.Status.DONE, params__graph=graph, network_summary__isnull=False)
        .select_related("collection", "network_summary")
        .order_by("-pk")
        .first()
    )


def network_run_get(ws: Workspace, pk: int) -> ComputeRun:
    """A network run of the workspace (404 for another workspace's run, or a run of another algorithm)."""
    r = (
        ComputeRun.objects.filter(workspace=ws, pk=pk, algorithm="network")
        .select_related("collection", "created_by")
        .first()
    )
    if r is None:
        raise Http404("no such network run in this workspace")
    return r


def network_summary(run: ComputeRun) -> NetworkSummary | None:
    """The run's summary once its structural batch stored it. Its conversation counts are undirected edges (a
    pair joined both ways is one, as the conversation graph's downloads hold it); a summary stored before they
    were (no ``edges`` key) counted the directed edges, and is read as undirected here."""
    summary = NetworkSummary.objects.filter(run=run).defer("conversation_edges", "conversation_weights").first()
    conv = summary.conversations if summary is not None else None
    if conv and "edges" not in conv:
        conv["edges_before"] = summary.n_undirected_edges
        conv["edges_after"] = int(conv.get("edges_after") or 0) // 2  # each two-way pair was counted twice
        conv["edges"] = "undirected"
    return summary


# --- accounts --------------------------------------------------------------------------------------------------


#: every spreader's all-time rank across publishers (the ranking page's order; ``%s``: the workspace), as SQL
RANKED = """SELECT account_id, ROW_NUMBER() OVER (ORDER BY SUM(influence) DESC, account_id) AS rnk
    FROM monitor_dailyinfluence WHERE workspace_id = %s AND account_id <> publisher_id GROUP BY account_id"""


def _influence_ranks(ws: Workspace, account_pks: list[int]) -> dict[int, int]:
    """The all-time rank of these accounts in the workspace's ranking of spreaders across publishers (the ranking
    page's: total influence on other accounts' tweets descending, each publisher's rows on its own tweets left
    out, ties by account); accounts that spread nothing have none."""
    if not account_pks:
        return {}
    marks = ", ".join(["%s"] * len(account_pks))
    with connection.cursor() as cur:
        cur.execute(
            f"SELECT r.account_id, r.rnk FROM ({RANKED}) r WHERE r.account_id IN ({marks})",
            [ws.pk, *account_pks],
        )
        return {int(pk): int(rank) for pk, rank in cur.fetchall()}


def _row(r: dict) -> dict:
    return {
        "account": r["account_id"],
        "twitter_id": r["account__twitter_id"],
        "screen_name": r["account__screen_name"],
        **{k: r[k] for k in ACCOUNT_COLUMNS[3:]},
    }


def network_accounts(
    ws: Workspace, run: ComputeRun, *, sort: str = "betweenness", limit: int = 50, offset: int = 0
) -> tuple[list[dict], int]:
    """A page of the run's accounts ordered by ``sort`` (one of :data:`ACCOUNT_SORTS`, descending, ties by
    account), and how many there are."""
    if sort not in ACCOUNT_SORTS:
        raise ValueError(f"sort: one of {', '.join(ACCOUNT_SORTS)}")
    qs = NetworkAccount.objects.filter(run=run)
    page = qs.order_by(f"-{sort}", "account_id").values(*ACCOUNT_COLUMNS)[offset : offset + limit]
    return [_row(r) for r in page], qs.count()


def network_account_rows(run: ComputeRun):
    """Every account of the run, brokers first, as tuples of :data:`ACCOUNT_COLUMNS` (a server-side iterator:
    the CSV export streams them)."""
    return (
        NetworkAccount.objects.filter(run=run)
        .order_by("-betweenness", "account_id")
        .values_list(*ACCOUNT_COLUMNS)
        .iterator(chunk_size=5000)
    )


@cached
def network_brokers(ws: Workspace, run: ComputeRun, *, limit: int = 20) -> list[dict]:
    """The run's top ``limit`` accounts by betweenness, each with its all-time influence rank: who bridges the
    graph's communities, and whether they also spread what the workspace monitors."""
    rows, _total = network_accounts(ws, run, sort="betweenness", limit=limit)
    ranks = _influence_ranks(ws, [r["account"] for r in rows])
    for i, r in enumerate(rows):
        r["rank"] = i + 1
        r["influence_rank"] = ranks.get(r["account"])
    return rows


def network_component(ws: Workspace, run: ComputeRun, component: int, *, limit: int = 200) -> dict:
    """A weak component of the run: its size and its ``limit`` members with the most betweenness (404 for a
    component number the run does not have)."""
    summary = network_summary(run)
    count = summary.components.get("count", 0) if summary else 0
    if not 0 <= component < count:
        raise Http404("no such component in this run")
    qs = NetworkAccount.objects.filter(run=run, component=component)
    members = [_row(r) for r in qs.order_by("-betweenness", "account_id").values(*ACCOUNT_COLUMNS)[:limit]]
    size = summary.components["largest"][component] if component < len(summary.components["largest"]) else qs.count()
    return {"component": component, "size": size, "members": members}


def network_community(ws: Workspace, run: ComputeRun, community: int, *, limit: int = 200) -> dict:
    """A modularity community of the run (1 = the largest): its size, its share of the modularity and its
    ``limit`` members with the most betweenness (404 for a run without communities or a number it does not
    have)."""
    summary = network_summary(run)
    found = summary.communities if summary is not None else {}
    if not found or not 1 <= community <= found.get("count", 0):
        raise Http404("no such community in this run")
    qs = NetworkAccount.objects.filter(run=run, community=community)
    members = [_row(r) for r in qs.order_by("-betweenness", "account_id").values(*ACCOUNT_COLUMNS)[:limit]]
    listed = {row[0]: row for row in found.get("largest", [])}
    row = listed.get(community)
    return {
        "community": community,
        "size": row[1] if row else qs.count(),
        "inside": row[2] if row else None,
        "contribution": row[4] if row else None,
        "members": members,
    }


@cached
def network_communities(ws: Workspace, run: ComputeRun, *, limit: int = 20, per: int = COMMUNITY_TOP) -> list[dict]:
    """The run's ``limit`` largest communities as the summary keeps them (size, share of the accounts, edges
    inside, modularity term), each with its ``per`` accounts best ranked by all-time influence (the ranking page's
    order across publishers, as the brokers' ``influence_rank``) and how many of its members have a rank at all.
    Empty when the run found no communities."""
    summary = network_summary(run)
    found = summary.communities if summary is not None else {}
    largest = found.get("largest", [])[:limit]
    if not largest:
        return []
    numbers = [row[0] for row in largest]
    marks = ", ".join(["%s"] * len(numbers))
    with connection.cursor() as cur:
        cur.execute(
            f"""WITH ranked AS ({RANKED}),
                members AS (
                    SELECT n.community, n.account_id, r.rnk,
                        ROW_NUMBER() OVER (PARTITION BY n.community ORDER BY r.rnk) AS k,
                        COUNT(*) OVER (PARTITION BY n.community) AS spreaders
                    FROM monitor_networkaccount n JOIN ranked r ON r.account_id = n.account_id
                    WHERE n.run_id = %s AND n.community IN ({marks}))
                SELECT community, account_id, rnk, spreaders FROM members WHERE k <= %s ORDER BY community, k""",
            [ws.pk, run.pk, *numbers, per],
        )
        got = cur.fetchall()
    names = accounts_of({row[1] for row in got})
    top: dict[int, list[dict]] = {}
    spreaders: dict[int, int] = {}
    for community, pk, rank, count in got:
        tid, name = names.get(pk, (pk, ""))
        top.setdefault(community, []).append({"twitter_id": tid, "screen_name": name, "influence_rank": int(rank)})
        spreaders[community] = int(count)
    n = summary.n_nodes or 1
    return [
        {
            "community": c,
            "size": size,
            "share": size / n,
            "inside": inside,
            "degree_sum": degree_sum,
            "contribution": contribution,
            "spreaders": spreaders.get(c, 0),
            "top": top.get(c, []),
        }
        for c, size, inside, degree_sum, contribution in largest
    ]


# --- subgraphs: a component, a community, the conversations, a neighbourhood --------------------------------


@dataclass
class Subgraph:
    """A part of a graph over account pks: ``ids`` the nodes, directed edges ``src -> dst`` (weights: the number
    of interactions, or None), per-node numbers in ``attrs``, graph-level ``facts``; ``hidden_*``: what a cap
    left out."""

    ids: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    weights: np.ndarray | None = None
    attrs: dict[str, np.ndarray] = field(default_factory=dict)
    facts: dict = field(default_factory=dict)
    hidden_nodes: int = 0
    hidden_edges: int = 0


def _edges_among(g, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The directed edges of ``g`` among node indices ``nodes``, as account pks (and weights)."""
    sub = subgraph(g, np.sort(np.asarray(nodes, np.int64)))
    rows = np.repeat(np.arange(sub.n_nodes), np.diff(sub.indptr))
    cols = np.asarray(sub.indices, np.int64)
    w = None if sub.weights is None else np.asarray(sub.weights, np.float64)
    return sub.ids[rows], sub.ids[cols], w


def _run_graph(ws: Workspace, run: ComputeRun, facts: dict):
    """The graph the run computed, as it is now; ``facts`` says when it changed since the run."""
    loaded = load_graph(ws, GraphSpec.of(run.params))
    summary = NetworkSummary.objects.filter(run=run).only("fingerprint").first()
    facts["graph_changed_since_run"] = summary is None or summary.fingerprint != loaded.fingerprint
    return loaded


def _cap(order: np.ndarray, limit: int | None) -> np.ndarray:
    return order if limit is None else order[:limit]


def network_component_graph(ws: Workspace, run: ComputeRun, component: int, *, limit: int | None = None) -> Subgraph:
    """A weak component of the run as its own graph: its members (with the run's numbers; the ``limit`` with the
    most betweenness when capped) and the edges among them in the graph as it is now."""
    size = network_component(ws, run, component, limit=0)["size"]  # 404 for a component the run does not have
    facts = {"run": run.pk, "graph": run.params.get("graph"), "component": component, "component_size": size}
    return _group_graph(ws, run, {"component": component}, size, limit, facts)


def network_community_graph(ws: Workspace, run: ComputeRun, community: int, *, limit: int | None = None) -> Subgraph:
    """A modularity community of the run as its own graph, as :func:`network_component_graph` draws a component."""
    size = network_community(ws, run, community, limit=0)["size"]  # 404 for a community the run does not have
    facts = {"run": run.pk, "graph": run.params.get("graph"), "community": community, "community_size": size}
    return _group_graph(ws, run, {"community": community}, size, limit, facts)


def _group_graph(ws: Workspace, run: ComputeRun, group: dict, size: int, limit: int | None, facts: dict) -> Subgraph:
    """The run's accounts of ``group`` (a component or a community; the ``limit`` with the most betweenness when
    capped) with their numbers, and the edges among them in the graph as it is now."""
    cols = ("account_id", "in_degree", "out_degree", "core", "betweenness", "clustering", "community")
    qs = NetworkAccount.objects.filter(run=run, **group).order_by("-betweenness", "account_id")
    rows = list((qs if limit is None else qs[:limit]).values_list(*cols))  # capped in SQL: a group may be huge
    ids = np.array([r[0] for r in rows], np.int64)
    loaded = _run_graph(ws, run, facts)
    at = loaded.graph.index_of(ids)
    src, dst, w = _edges_among(loaded.graph, at[at >= 0])
    attrs = {name: np.array([r[k] or 0 for r in rows], float) for k, name in enumerate(cols) if k}
    if not attrs["community"].any():  # a run without communities (every account of a run with them has one)
        del attrs["community"]
    order = np.argsort(ids, kind="stable")
    sub = Subgraph(ids[order], src, dst, w, {k: v[order] for k, v in attrs.items()}, facts)
    sub.hidden_nodes = size - len(ids)
    if sub.hidden_nodes:  # the edges of the whole group, less those drawn
        members = NetworkAccount.objects.filter(run=run, **group).values_list("account_id", flat=True)
        every = loaded.graph.index_of(np.fromiter(members.iterator(chunk_size=10_000), np.int64))
        everything = subgraph(loaded.graph, np.sort(every[every >= 0]))
        sub.hidden_edges = int(everything.n_edges - len(src))
    return sub


def network_conversation_graph(ws: Workspace, run: ComputeRun, *, limit: int | None = None) -> Subgraph:
    """The run's conversation graph (the interactions that go both ways), as it computed it: each pair once,
    with the smaller of its two directions' weights. Capped to the ``limit`` accounts of the largest
    conversations (by conversation component, then the most partners)."""
    summary = NetworkSummary.objects.get(run=run)
    u, v, w = summary.conversation_arrays()
    qs = NetworkAccount.objects.filter(run=run, conversation_component__isnull=False).order_by(
        "conversation_component", "-conversation_degree", "account_id"
    )
    cols = ("account_id", "conversation_component", "conversation_degree", "core", "betweenness", "community")
    kept = list((qs if limit is None else qs[:limit]).values_list(*cols))  # capped in SQL
    ids = np.array([r[0] for r in kept], np.int64)
    mask = np.isin(u, ids) & np.isin(v, ids)
    order = np.argsort(ids, kind="stable")
    named = ((1, "conversation"), (2, "partners"), (3, "core"), (4, "betweenness"))
    if summary.communities:
        named += ((5, "community"),)
    attrs = {name: np.array([r[k] or 0 for r in kept], float)[order] for k, name in named}
    facts = {
        "run": run.pk,
        "graph": summary.graph,
        "edges": "each reciprocated pair once; weight = the smaller of its two directions' weights",
        **{k: summary.conversations.get(k) for k in ("nodes_before", "edges_before", "nodes_after", "edges_after")},
    }
    sub = Subgraph(ids[order], u[mask], v[mask], w[mask] if summary.graph == "interactions" else None, attrs, facts)
    sub.hidden_nodes, sub.hidden_edges = int(summary.conversations["nodes_after"]) - len(kept), int(len(u) - mask.sum())
    return sub


@cached
def network_neighbourhood(
    ws: Workspace,
    account: Account,
    *,
    spec: GraphSpec = FOLLOWS,
    depth: int = 1,
    direction: str = "both",
    limit: int | None = 300,
) -> Subgraph | None:
    """The accounts within ``depth`` hops of ``account`` (along out-edges, in-edges or either) in the graph
    ``spec`` as it is now, and the edges among them, computed on the CPU from the graph the process keeps
    (cached under the data version). Capped to the ``limit`` nearest (then best connected) accounts; None when
    the account is not in the graph."""
    if not 1 <= depth <= MAX_DEPTH:
        raise ValueError(f"depth: from 1 to {MAX_DEPTH}")
    if direction not in DIRECTIONS:
        raise ValueError(f"direction: one of {', '.join(DIRECTIONS)}")
    loaded = load_graph(ws, spec)
    g = loaded.graph
    node = int(g.index_of(np.array([account.pk], np.int64))[0])
    if node < 0:
        return None
    nb = engine_neighbourhood(g, node, depth=depth, direction=direction, backend="cpu")
    at = g.index_of(nb.graph.ids)
    in_deg, out_deg = loaded.degrees()
    total = in_deg[at] + out_deg[at]
    order = np.lexsort((nb.graph.ids, -total, nb.distance))  # the centre first, then by hops, then best connected
    keep = np.sort(_cap(order, limit))
    src, dst, w = _edges_among(nb.graph, keep)
    sub = Subgraph(
        nb.graph.ids[keep],
        src,
        dst,
        w,
        {"distance": nb.distance[keep].astype(float), "in_degree": in_deg[at][keep], "out_degree": out_deg[at][keep]},
        {
            "centre": account.twitter_id,
            "graph": spec.kind,
            "collection": spec.collection,
            "depth": depth,
            "direction": direction,
        },
    )
    sub.hidden_nodes = nb.graph.n_nodes - len(keep)
    sub.hidden_edges = int(nb.graph.n_edges - len(src))
    return sub


def accounts_of(pks) -> dict[int, tuple[int, str]]:
    """``{pk: (twitter_id, screen_name)}`` of these accounts (in chunks: a component may be large)."""
    pks = [int(x) for x in pks]
    out: dict[int, tuple[int, str]] = {}
    for i in range(0, len(pks), 5000):
        for pk, tid, name in Account.objects.filter(pk__in=pks[i : i + 5000]).values_list(
            "pk", "twitter_id", "screen_name"
        ):
            out[pk] = (tid, name)
    return out


def drawing_layout(n: int, src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions of a drawing's ``n`` nodes joined by index pairs ``src -- dst`` (``compute.drawing.force_layout``),
    cached under the graph itself: a digest of the node count and the edges. The same subgraph (a page loaded
    again, by anyone) is laid out once, and a changed one can never meet an old picture, so no data version is
    needed; ``SPREADWATCH_READ_CACHE_SECONDS`` bounds how long an unused layout is kept."""
    from django.core.cache import cache

    src = np.ascontiguousarray(src, dtype=np.int64)
    dst = np.ascontiguousarray(dst, dtype=np.int64)
    ttl = read_cache_seconds()
    if ttl <= 0:
        return force_layout(n, src, dst)
    digest = hashlib.sha1(np.int64(n).tobytes() + src.tobytes() + dst.tobytes()).hexdigest()
    key = f"sw:layout:{LAYOUT_VERSION}:{digest}"
    hit = cache.get(key)
    if hit is not None:
        return hit
    x, y = force_layout(n, src, dst)
    cache.set(key, (x, y), timeout=ttl)
    return x, y


def drawing(sub: Subgraph, *, centre: int | None = None) -> dict:
    """What the page's graph drawing reads (a JSON data island): nodes with their Twitter ids, names, numbers and
    positions ``x``, ``y`` (:func:`drawing_layout`: the browser draws, it lays nothing out), edges as index pairs
    into the nodes, and what the cap hid."""
    names = accounts_of(sub.ids)
    index = {int(pk): i for i, pk in enumerate(sub.ids.tolist())}
    si = np.array([index[s] for s in sub.src.tolist()], np.int64)
    di = np.array([index[d] for d in sub.dst.tolist()], np.int64)
    x, y = drawing_layout(len(sub.ids), si, di)
    nodes = []
    for i, pk in enumerate(sub.ids.tolist()):
        tid, name = names.get(pk, (pk, ""))
        node = {"id": i, "tid": str(tid), "name": name, "centre": pk == centre}
        node.update({k: float(v[i]) for k, v in sub.attrs.items()})
        node["x"], node["y"] = round(float(x[i]), 3), round(float(y[i]), 3)
        nodes.append(node)
    edges = [
        [s, d] + ([float(sub.weights[k])] if sub.weights is not None else [])
        for k, (s, d) in enumerate(zip(si.tolist(), di.tolist(), strict=True))
    ]
    return {"nodes": nodes, "edges": edges, "hidden": {"nodes": sub.hidden_nodes, "edges": sub.hidden_edges}}
