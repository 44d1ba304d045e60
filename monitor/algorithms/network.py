"""Network analytics (GraphCT, issue 14; docs/network.md) as a compute-run algorithm: degrees, weak and strong
components, k-cores, clustering, conversations, modularity communities (``communities``, on by default) and
(sampled) betweenness of a workspace's or a collection's follower graph or interaction graph.

**The graph.** Nodes are the workspace's ``Account`` rows: the engine's external ids are their primary keys, so
results join the rankings directly. The *follower graph* is every follow edge of the workspace (follower ->
followee), or, for a collection, the follow edges among the accounts that take part in its cascades (their
publishers and retweeters). The *interaction graph* is retweeter -> retweeted author over the workspace's (or the
collection's) tweets, weighted by the number of retweets, optionally with the spreading edges of the computed
cascades (``CascadeGraph``) added with weight 1 each (``compute.graphs.interaction_graph``). A process keeps the
graphs it loaded per (workspace, data version, graph parameters) (read the graph once per data version
and keep it), so a worker's batches of one run, and the neighbourhood pages, reuse one read.

**The plan.** Batch 0 is the structural analyses (degrees, components, strongly connected components, cores,
clustering, conversations, the communities on the CPU whatever the backend, the stability indicator of sampled
betweenness). Betweenness is split by its sources:
``compute.graphs.betweenness_sources`` chooses them (and each one's scale) once, at plan time, on the undirected
view, and each further batch carries its share of them in its own ``params`` — ``{"blocks": [lo, hi], "sources":
[...], "scale": [...]}``, whole blocks of ``SOURCE_BLOCK`` sources, at most
``SPREADWATCH_NETWORK_BLOCKS_PER_BATCH`` blocks a batch — so batches never have to agree by recomputing them.
Every batch also carries the fingerprint of the graph the plan saw; a batch that loads a different graph (an
import changed it meanwhile) fails saying so instead of mixing two graphs' numbers.

**Adding up.** A betweenness batch stores one partial vector per block (:class:`~monitor.models.NetworkPartial`);
:meth:`Network.finish`, run once in the transaction that records the run's last batch, adds them in block order
from zero — what the engine's ``betweenness`` does on one worker, so the values are bitwise the same however the
blocks were spread — writes them into the per-account rows and deletes the partials.
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import connection

from compute.algorithms import communities as community_engine
from compute.algorithms import network as engine
from compute.graphs import (
    DEFAULT_BETWEENNESS_SAMPLES,
    SOURCE_BLOCK,
    Graph,
    betweenness_sources,
    graph_from_edges,
    interaction_graph,
    undirected,
)

from ..db import analyze_after_bulk_write, copy_in, copy_out, create_temp, temp_table_name
from ..models import (
    CascadeGraph,
    Collection,
    ComputeBatch,
    ComputeRun,
    NetworkAccount,
    NetworkPartial,
    NetworkSummary,
    Workspace,
)
from .base import Algorithm, BatchOutcome, PlannedBatch, RunCancelled, Stop, register

log = logging.getLogger(__name__)

__all__ = [
    "GRAPHS",
    "NETWORK",
    "GraphChanged",
    "GraphSpec",
    "LoadedGraph",
    "Network",
    "NetworkResult",
    "load_graph",
]

GRAPHS = ("follows", "interactions")
PARAMS = ("graph", "collection", "spreading", "samples", "seed", "communities", "resolution")
RESOLUTION_MAX = 1000.0  # a modularity resolution beyond it makes every account a community of its own
DEFAULT_SAMPLES = DEFAULT_BETWEENNESS_SAMPLES  # the CLI's default too (python -m compute network)
STRUCTURE, BETWEENNESS = "structure", "betweenness"  # what a batch computes (its params' "part")
LARGEST = 20  # component sizes listed one by one in the summary; the rest only in the distribution


class GraphChanged(RuntimeError):
    """A batch found another graph than the one its run was planned on (an import changed it meanwhile)."""


# --- the graph, read once per data version -----------------------------------------------------------------------


class GraphSpec(NamedTuple):
    """Which graph a run (or a page) reads: ``follows`` or ``interactions``, of the workspace or one collection,
    with or without the computed cascades' spreading edges."""

    kind: str = "follows"
    collection: int | None = None
    spreading: bool = False

    @classmethod
    def of(cls, params: dict) -> GraphSpec:
        return cls(params.get("graph", "follows"), params.get("collection"), bool(params.get("spreading", False)))


@dataclass(eq=False)
class LoadedGraph:
    """A graph as read from the database, its fingerprint (sha1 of its arrays) and, once asked for, its
    undirected view."""

    graph: Graph
    fingerprint: str
    _undirected: Graph | None = None
    _degrees: tuple[np.ndarray, np.ndarray] | None = None

    def undirected(self) -> Graph:
        if self._undirected is None:
            self._undirected = undirected(self.graph)
        return self._undirected

    def degrees(self) -> tuple[np.ndarray, np.ndarray]:
        """``(in_degree, out_degree)`` of every node of the directed graph."""
        if self._degrees is None:
            self._degrees = (np.asarray(self.graph.in_degree), np.asarray(self.graph.out_degree))
        return self._degrees


_GRAPHS_KEEP = 2  # graphs a process keeps: a worker usually serves one run at a time, a web process a few pages
_GRAPHS: OrderedDict[tuple, LoadedGraph] = OrderedDict()


def load_graph(ws: Workspace, spec: GraphSpec) -> LoadedGraph:
    """The graph ``spec`` of ``ws`` as the data is now, read once per data version by each process (the newest
    ``_GRAPHS_KEEP`` stay in memory). A read only: keeping it is this process's memory, not a write."""
    from ..cache import current_version

    key = (ws.pk, current_version(ws), spec)
    hit = _GRAPHS.get(key)
    if hit is not None:
        _GRAPHS.move_to_end(key)
        return hit
    g = _read_graph(ws.pk, spec)
    loaded = LoadedGraph(g, fingerprint(g))
    _GRAPHS[key] = loaded
    while len(_GRAPHS) > _GRAPHS_KEEP:
        _GRAPHS.popitem(last=False)
    return loaded


def fingerprint(g: Graph) -> str:
    """A name for the graph's content: two reads of the same data give the same one."""
    h = hashlib.sha1()
    for a, dtype in ((g.ids, "<i8"), (g.indptr, "<i8"), (g.indices, "<i8")):
        h.update(np.ascontiguousarray(a, dtype=dtype).tobytes())
    if g.weights is not None:
        h.update(b"w" + np.ascontiguousarray(g.weights, dtype="<f8").tobytes())
    return h.hexdigest()


def _read_graph(ws: int, spec: GraphSpec) -> Graph:
    pairs = [("src", "bigint"), ("dst", "bigint")]
    of_collection = "" if spec.collection is None else f" AND t.collection_id = {int(spec.collection)}"
    with connection.cursor() as cur:
        if spec.kind == "follows":
            if spec.collection is None:  # a whole graph: mapped from this machine's one copy
                from ..graph_files import follower_csr

                csr, _ = follower_csr(ws)
                return Graph(csr.ids, csr.indptr, csr.indices)
            else:  # the follow edges among the accounts that take part in the collection's cascades
                part = f"""SELECT t.author_id FROM monitor_tweet t WHERE t.workspace_id = {int(ws)}{of_collection}
                    UNION SELECT r.retweeter_id FROM monitor_retweet r
                    JOIN monitor_tweet t ON t.id = r.tweet_id AND t.workspace_id = r.workspace_id
                    WHERE t.workspace_id = {int(ws)}{of_collection}"""
                src, dst = copy_out(
                    cur,
                    f"""SELECT f.follower_id, f.followee_id FROM monitor_follow f WHERE f.workspace_id = %s
                        AND f.follower_id IN ({part}) AND f.followee_id IN ({part})""",
                    [ws],
                    pairs,
                    gather=False,
                )
            return graph_from_edges(src, dst)
        retweeter, author = copy_out(
            cur,
            f"""SELECT r.retweeter_id, t.author_id FROM monitor_retweet r
                JOIN monitor_tweet t ON t.id = r.tweet_id AND t.workspace_id = r.workspace_id
                WHERE t.workspace_id = %s{of_collection}""",
            [ws],
            pairs,
        )
    spreading_src = spreading_dst = None
    if spec.spreading:
        graphs = CascadeGraph.objects.filter(tweet__workspace_id=ws)
        if spec.collection is not None:
            graphs = graphs.filter(tweet__collection_id=spec.collection)
        parts = [cg.edge_arrays() for cg in graphs.only("edges").iterator(chunk_size=500)]
        spreading_src = np.concatenate([s for s, _ in parts]) if parts else np.zeros(0, np.int64)
        spreading_dst = np.concatenate([d for _, d in parts]) if parts else np.zeros(0, np.int64)
    return interaction_graph(retweeter, author, spreading_src=spreading_src, spreading_dst=spreading_dst)


# --- the result of one batch ---------------------------------------------------------------------------------------


class AccountRows(NamedTuple):
    """Per node of the graph (ids ascending): a ``monitor_networkaccount`` row before the run is joined."""

    account: np.ndarray
    in_degree: np.ndarray
    out_degree: np.ndarray
    component: np.ndarray
    strong_component: np.ndarray
    core: np.ndarray
    clustering: np.ndarray
    triangles: np.ndarray
    conversation_degree: np.ndarray
    conversation_component: np.ndarray  # -1: not in the conversation graph (stored as NULL)
    community: np.ndarray  # 1 = the largest; 0: the run found none (stored as NULL)
    SQL = ("bigint", "bigint", "bigint", "int", "int", "int", "float", "bigint", "bigint", "int", "int")


@dataclass
class NetworkResult(BatchOutcome):
    """One batch's rows until they are stored: the structural batch's per-account rows and summary, or a
    betweenness batch's partial vectors ``(block, values)``."""

    part: str = STRUCTURE
    accounts: AccountRows | None = None
    summary: dict = field(default_factory=dict)
    partials: list[tuple[int, np.ndarray]] = field(default_factory=list)


def _jsonable(x):
    """NumPy scalars and arrays inside dicts and lists as plain Python (what a JSONField stores)."""
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple, np.ndarray)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return float(x)
    return x


def _size_distribution(sizes: np.ndarray) -> dict:
    """A component summary: how many, the largest sizes, and ``[[size, components], ...]`` by size."""
    values, counts = np.unique(np.asarray(sizes, np.int64), return_counts=True)
    return {
        "count": len(sizes),
        "largest": np.asarray(sizes[:LARGEST], np.int64).tolist(),
        "distribution": [[int(v), int(c)] for v, c in zip(values, counts, strict=True)],
    }


def _degree_summary(d: np.ndarray) -> dict:
    if not len(d):
        return {"mean": 0.0, "variance": 0.0, "max": 0, "histogram": [], "log_bins": []}
    return _jsonable(engine.degree_summary(d))


def _conversation_pairs(conv: Graph) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The conversation graph's edges once each (u < v, as account pks) and their weights (1 when unweighted)."""
    rows = np.repeat(np.arange(conv.n_nodes), np.diff(conv.indptr))
    u, v = conv.ids[rows], conv.ids[np.asarray(conv.indices, np.int64)]
    once = u < v
    w = np.ones(len(u)) if conv.weights is None else np.asarray(conv.weights, np.float64)
    return u[once], v[once], w[once]


def _communities_summary(u: Graph, found: community_engine.Communities) -> dict:
    """What the summary keeps of the communities: their count, the modularity, how they were found, the
    ``LARGEST`` largest with their edges inside, degree sums and modularity terms (``[community, size, inside,
    degree_sum, contribution]``), and the size distribution."""
    table = community_engine.community_table(u, found.labels, found.resolution)
    top = min(LARGEST, len(table.sizes))
    values, counts = np.unique(table.sizes, return_counts=True)
    return {
        "count": len(table.sizes),
        "modularity": float(found.modularity),
        "resolution": float(found.resolution),
        "seed": int(found.seed),
        "method": f"networkit PLM with refinement, {community_engine.MOVE_ITERATIONS} move iterations, one thread",
        "singletons": int(np.count_nonzero(table.sizes == 1)),
        "largest": [
            [c + 1, int(table.sizes[c]), int(table.inside[c]), int(table.degree_sums[c]), float(table.contributions[c])]
            for c in range(top)
        ],
        "distribution": [[int(v), int(c)] for v, c in zip(values, counts, strict=True)],
    }


def _check(stop: Stop) -> None:
    if stop():  # a safe point: nothing of the batch is stored yet
        raise RunCancelled()


def _structure(res: NetworkResult, loaded: LoadedGraph, run: ComputeRun, backend: str, stop: Stop) -> None:
    """The structural analyses of batch 0, each on the backend, with a safe point between them."""
    g, params = loaded.graph, run.params
    n = g.n_nodes
    t = time.perf_counter()
    u = loaded.undirected()
    t = res.tick("undirected_s", t)
    d = engine.degrees(g, backend=backend)
    t = res.tick("degrees_s", t)
    _check(stop)
    weak = engine.components(g, backend=backend)
    strong = engine.strong_components(g, backend=backend)
    t = res.tick("components_s", t)
    _check(stop)
    core = engine.core_numbers(u, backend=backend)
    t = res.tick("cores_s", t)
    _check(stop)
    cl = engine.clustering(u, backend=backend)
    t = res.tick("clustering_s", t)
    _check(stop)
    conv = engine.conversations(g, backend=backend)
    t = res.tick("conversations_s", t)
    conv_degree = np.zeros(n, np.int64)
    conv_component = np.full(n, -1, np.int64)
    at = g.index_of(conv.graph.ids)
    conv_degree[at] = conv.graph.out_degree
    conv_component[at] = conv.components.labels
    cu, cv, cw = _conversation_pairs(conv.graph)
    community = np.zeros(n, np.int64)
    communities: dict = {}
    if params.get("communities"):
        _check(stop)
        found = community_engine.communities(u, seed=params["seed"], resolution=params["resolution"], backend="cpu")
        t = res.tick("communities_s", t)
        _check(stop)  # a safe point: the search may take the batch's longest minute
        community = found.labels
        communities = _communities_summary(u, found)
        if backend == "gpu":
            res.notes.append("communities were found on the CPU: they have no GPU twin (docs/network.md)")
    exact = params["samples"] == 0 or params["samples"] >= n
    stability: dict = {}
    if not exact:
        _check(stop)
        stability = _jsonable(
            engine.betweenness_stability(u, samples=params["samples"], seed=params["seed"], backend=backend)
        )
        t = res.tick("stability_s", t)
    res.accounts = AccountRows(
        account=g.ids,
        in_degree=d.in_degree,
        out_degree=d.out_degree,
        component=weak.labels,
        strong_component=strong.labels,
        core=core,
        clustering=cl.local,
        triangles=cl.triangles,
        conversation_degree=conv_degree,
        conversation_component=conv_component,
        community=community,
    )
    shells, counts = np.unique(np.asarray(core, np.int64), return_counts=True)
    res.summary = {
        "graph": params["graph"],
        "n_nodes": n,
        "n_edges": g.n_edges,
        "n_undirected_edges": u.n_edges // 2,
        "components": _size_distribution(weak.sizes),
        "strong_components": _size_distribution(strong.sizes),
        "degrees": {"in": _degree_summary(d.in_degree), "out": _degree_summary(d.out_degree)},
        "cores": {"max": int(shells[-1]) if n else 0, "shells": [[int(k), int(c)] for k, c in zip(shells, counts)]},
        "transitivity": float(cl.transitivity),
        "average_clustering": float(np.mean(cl.local)) if n else 0.0,
        # counted as undirected edges, as the page, the API and the downloads give them: a pair of accounts joined
        # either way is one edge before, a pair joined both ways one edge after (the engine's edges_after counts
        # both directions: twice the pairs the conversation graph's downloads hold)
        "conversations": {
            "nodes_before": int(conv.nodes_before),
            "edges_before": int(u.n_edges // 2),
            "nodes_after": int(conv.nodes_after),
            "edges_after": len(cu),
            "edges": "undirected",
            "components": _size_distribution(conv.components.sizes),
        },
        "conversation_edges": np.stack([cu, cv], axis=1).astype("<i8").tobytes(),
        "conversation_weights": cw.astype("<f8").tobytes(),
        "stability": stability,
        "communities": communities,
    }
    res.n_edges = g.n_edges


def _betweenness(res: NetworkResult, loaded: LoadedGraph, batch: ComputeBatch, backend: str, stop: Stop) -> None:
    """The partial sums of the batch's blocks of sources, one vector per block, each a safe point."""
    u = loaded.undirected()
    lo, hi = batch.params["blocks"]
    sources = np.asarray(batch.params["sources"], np.int64)
    scale = np.asarray(batch.params["scale"], np.float64)
    t = time.perf_counter()
    for k in range(hi - lo):
        _check(stop)
        part = slice(k * SOURCE_BLOCK, (k + 1) * SOURCE_BLOCK)
        res.partials.append((lo + k, engine.betweenness_partial(u, sources[part], scale[part], backend=backend)))
        t = res.tick("betweenness_s", t)


# --- storing -------------------------------------------------------------------------------------------------------


def _store_structure(run: ComputeRun, res: NetworkResult) -> None:
    """Replace the run's per-account rows and its summary (inside the runner's transaction)."""
    rows = res.accounts
    columns = list(zip(AccountRows._fields, AccountRows.SQL))
    NetworkAccount.objects.filter(run=run).delete()
    with connection.cursor() as cur:
        staged = temp_table_name("netacc")
        create_temp(cur, staged, columns)
        copy_in(cur, staged, columns, list(rows))
        cur.execute(
            f"""INSERT INTO monitor_networkaccount (run_id, account_id, in_degree, out_degree, component,
                    strong_component, core, clustering, triangles, conversation_degree, conversation_component,
                    community)
                SELECT %s, s.account, s.in_degree, s.out_degree, s.component, s.strong_component, s.core,
                    s.clustering, s.triangles, s.conversation_degree, NULLIF(s.conversation_component, -1),
                    NULLIF(s.community, 0)
                FROM {staged} s""",
            [run.pk],
        )
        cur.execute(f"DROP TABLE IF EXISTS {staged}")
        analyze_after_bulk_write(cur, ["monitor_networkaccount"], len(rows.account))
    s = dict(res.summary)
    NetworkSummary.objects.update_or_create(
        run=run,
        defaults={
            **s,
            "notes": list(res.notes),
            "fingerprint": _structure_params(run)["fingerprint"],
            "betweenness": _betweenness_facts(run),
        },
    )


def _store_partials(run: ComputeRun, batch: ComputeBatch, res: NetworkResult) -> None:
    lo, hi = batch.params["blocks"]
    NetworkPartial.objects.filter(run=run, block__gte=lo, block__lt=hi).delete()
    NetworkPartial.objects.bulk_create(
        NetworkPartial(run=run, block=block, values=np.ascontiguousarray(v, dtype="<f8").tobytes())
        for block, v in res.partials
    )


def _structure_params(run: ComputeRun) -> dict:
    return run.batches.get(index=0).params


def _betweenness_facts(run: ComputeRun) -> dict:
    p = _structure_params(run)
    return {
        "exact": p["exact"],
        "samples": run.params["samples"],
        "seed": run.params["seed"],
        "sources": p["sources"],
        "blocks": p["blocks"],
        "block_size": SOURCE_BLOCK,
        "done": False,
    }


def _finish(run: ComputeRun) -> None:
    """Add the run's partial vectors in block order from zero, write the betweenness of every account, delete
    the partials; then the pages may show the run (the data version is bumped when this commits)."""
    summary = NetworkSummary.objects.get(run=run)
    n, blocks = summary.n_nodes, _structure_params(run)["blocks"]
    total = np.zeros(n, np.float64)
    seen = 0
    for block, raw in NetworkPartial.objects.filter(run=run).order_by("block").values_list("block", "values"):
        v = np.frombuffer(bytes(raw), dtype="<f8")
        if block != seen or len(v) != n:
            raise RuntimeError(f"network run {run.pk}: betweenness block {seen} is missing or of another graph")
        total += v  # in block order, as the engine adds them on one worker: the same bits however they were split
        seen += 1
    if seen != blocks:
        raise RuntimeError(f"network run {run.pk}: {seen} of {blocks} betweenness blocks were stored")
    with connection.cursor() as cur:
        (account,) = copy_out(
            cur,
            "SELECT account_id FROM monitor_networkaccount WHERE run_id = %s ORDER BY account_id",
            [run.pk],
            [("account", "bigint")],
        )
        if len(account) != n:
            raise RuntimeError(f"network run {run.pk}: {len(account)} account rows for a graph of {n} nodes")
        staged = temp_table_name("netbtw")
        columns = [("account", "bigint"), ("value", "float")]
        create_temp(cur, staged, columns)
        copy_in(cur, staged, columns, [account, total])
        cur.execute(
            f"""UPDATE monitor_networkaccount SET betweenness = s.value FROM {staged} s
                WHERE monitor_networkaccount.run_id = %s AND monitor_networkaccount.account_id = s.account""",
            [run.pk],
        )
        cur.execute(f"DROP TABLE IF EXISTS {staged}")
    summary.betweenness = {
        **summary.betweenness,
        "done": True,
        "max": float(total.max()) if n else 0.0,
        "sum": float(total.sum()),
    }
    summary.save(update_fields=["betweenness"])
    NetworkPartial.objects.filter(run=run).delete()
    from ..cache import bump_data_version

    bump_data_version(run.workspace_id)  # in this transaction: committed with the rows (monitor/cache.py)


# --- the algorithm -------------------------------------------------------------------------------------------------


def _int_param(params: dict, name: str, default: int, lo: int, hi: int) -> int:
    v = params.get(name, default)
    if isinstance(v, bool) or not isinstance(v, int):
        if isinstance(v, str) and v.strip().lstrip("-").isdigit():
            v = int(v)
        else:
            raise ValueError(f"{name}: an integer, not {v!r}")
    if not lo <= v <= hi:
        raise ValueError(f"{name}: from {lo} to {hi}, not {v}")
    return v


def _resolution(v) -> float:
    """The modularity resolution: a number > 0 and at most :data:`RESOLUTION_MAX` (a form's or a query's text too)."""
    if isinstance(v, str):
        try:
            v = float(v.strip())
        except ValueError:
            raise ValueError(f"resolution: a number, not {v!r}") from None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise ValueError(f"resolution: a number, not {v!r}")
    if not 0 < v <= RESOLUTION_MAX:
        raise ValueError(f"resolution: above 0 and at most {RESOLUTION_MAX:g}, not {v:g}")
    return float(v)


class Network(Algorithm):
    """Network analytics of a follower or interaction graph (GraphCT: docs/network.md)."""

    name = "network"
    label = "Network analytics"

    def clean_params(self, params: dict) -> dict:
        unknown = sorted(set(params) - set(PARAMS))
        if unknown:
            raise ValueError(f"network takes {', '.join(PARAMS)} (unknown: {', '.join(unknown)})")
        graph = params.get("graph", "follows")
        if graph not in GRAPHS:
            raise ValueError(f"graph: {' or '.join(GRAPHS)}, not {graph!r}")
        collection = params.get("collection")
        if collection is not None:
            collection = _int_param(params, "collection", 0, 1, 2**63 - 1)
        spreading = params.get("spreading", False)
        if not isinstance(spreading, bool):
            raise ValueError(f"spreading: true or false, not {spreading!r}")
        if spreading and graph != "interactions":
            raise ValueError("spreading: the spreading edges of cascades join the interaction graph only")
        communities = params.get("communities", True)
        if not isinstance(communities, bool):
            raise ValueError(f"communities: true or false, not {communities!r}")
        return {
            "graph": graph,
            "collection": collection,
            "spreading": spreading,
            "samples": _int_param(params, "samples", DEFAULT_SAMPLES, 0, 2**31 - 1),
            "seed": _int_param(params, "seed", 0, 0, 2**32 - 2),  # the stability indicator also uses seed + 1
            "communities": communities,
            "resolution": _resolution(params.get("resolution", 1.0)),
        }

    def plan(self, *, run: ComputeRun, tweet_pks: list[int]) -> list[PlannedBatch]:
        spec = GraphSpec.of(run.params)
        if (
            spec.collection is not None
            and not Collection.objects.filter(workspace=run.workspace, pk=spec.collection).exists()
        ):
            raise ValidationError({"params": f"collection: no collection {spec.collection} in this workspace"})
        loaded = load_graph(run.workspace, spec)
        n = loaded.graph.n_nodes
        sources, scale = betweenness_sources(loaded.undirected(), run.params["samples"], run.params["seed"])
        n_blocks = math.ceil(len(sources) / SOURCE_BLOCK)
        exact = run.params["samples"] == 0 or run.params["samples"] >= n
        fp = loaded.fingerprint
        plan = [
            PlannedBatch(
                tweet_pks=[],
                n_cascades=0,
                n_nodes=n,
                params={
                    "part": STRUCTURE,
                    "fingerprint": fp,
                    "blocks": n_blocks,
                    "sources": len(sources),
                    "exact": exact,
                },
            )
        ]
        per = max(1, settings.SPREADWATCH_NETWORK_BLOCKS_PER_BATCH)
        for lo in range(0, n_blocks, per):
            hi = min(n_blocks, lo + per)
            share = slice(lo * SOURCE_BLOCK, hi * SOURCE_BLOCK)
            plan.append(
                PlannedBatch(
                    tweet_pks=[],
                    n_cascades=0,
                    n_nodes=0,
                    params={
                        "part": BETWEENNESS,
                        "fingerprint": fp,
                        "blocks": [lo, hi],
                        "sources": sources[share].tolist(),
                        "scale": scale[share].tolist(),  # floats survive JSON exactly (shortest repr round-trips)
                    },
                )
            )
        return plan

    def compute(self, *, run: ComputeRun, batch: ComputeBatch, backend: str, stop: Stop) -> NetworkResult:
        _check(stop)
        part = batch.params.get("part")
        res = NetworkResult(part=part)
        t = time.perf_counter()
        loaded = load_graph(run.workspace, GraphSpec.of(run.params))
        res.tick("load_s", t)
        if loaded.fingerprint != batch.params.get("fingerprint"):
            raise GraphChanged(
                "the graph changed since the run was planned (an import wrote to it meanwhile): start a new run"
            )
        if part == STRUCTURE:
            _structure(res, loaded, run, backend, stop)
        elif part == BETWEENNESS:
            _betweenness(res, loaded, batch, backend, stop)
        else:
            raise ValueError(f"network batch {batch.index}: unknown part {part!r}")
        return res

    def store(self, *, run: ComputeRun, batch: ComputeBatch, result: BatchOutcome) -> None:
        if result.part == STRUCTURE:
            _store_structure(run, result)
        else:
            _store_partials(run, batch, result)

    def finish(self, *, run: ComputeRun) -> None:
        _finish(run)


NETWORK = register(Network())
