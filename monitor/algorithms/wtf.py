"""Who amplifies whom (WTF, issue 15; docs/wtf.md) as a compute-run algorithm: for each seed account, the
personalized-PageRank circle of trust and the Money hub/authority iteration over the workspace's follower graph,
in one direction or both.

**Parameters** (``ComputeRun.params``): the seeds are either ``accounts`` (Twitter ids, as strings) or the top
``spreaders`` of a ``publisher`` (its spreaders ranked by total influence, all time, the publisher itself left
out: the ranking page's order); ``direction`` is ``follows`` (look-alike accounts: Money's hubs), ``followers``
(likely next amplifiers: its authorities on the reversed graph) or ``both``; ``circle`` is the circle of trust's
size and ``top`` the K accounts kept per list; ``max_iter`` (optional, default 100) is the iteration cap of
PageRank and Money (a result that stopped at it without converging is recomputed with a higher one); ``method``
(optional, default ``exact``: the precise power iteration) is how the circle of trust's PPR is computed, ``push``,
``fora`` or ``walks`` with their ``epsilon`` and ``walks`` (the engine's local estimates, docs/wtf.md). A
publisher's run is its **watch list**: the union of its top spreaders' likely next amplifiers
(``monitor.selectors.wtf``).

**The plan.** The seeds are resolved when the run starts (a publisher's spreaders as the ranking has them then)
and split into batches of :data:`SEEDS_PER_BATCH` (the engine's block: one sparse matrix times a dense block of
64 seed vectors per iteration), each batch carrying its seeds' ``Account`` pks in ``params["seeds"]``.

**The graph.** Nodes are the workspace's ``Account`` rows (the engine's external ids are their primary keys);
edges are its follows, follower -> followee. A process reads it once per data version and keeps the newest
:data:`_GRAPHS_KEEP`, so a worker's batches reuse one read, and a GPU worker keeps it resident on the
device (the engine caches its upload per ``Graph`` object, which this cache keeps alive).

**Cached results.** A result is stored per (seed, direction, circle, top) with the fingerprint of the graph it
was computed on; a batch whose seed already has a result on the same graph (same fingerprint) reuses it instead
of computing it again, and says so in the run's notes. Storing does not bump the workspace's data version (that
would drop every cached ranking for a result no ranking reads): the selectors key their cache on the data
version *and* the newest result's time (``monitor.selectors.wtf``).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

import numpy as np
from django.core.exceptions import ValidationError
from django.utils import timezone

from compute.backends import is_device_oom
from compute.results import DEFAULT_EPSILON, DEFAULT_WALKS, WTF_METHODS, check_local

from ..models import Account, ComputeBatch, ComputeRun, WtfEntry, WtfResult
from ..models.wtf import DIRECTIONS
from .base import Algorithm, BatchOutcome, PlannedBatch, RunCancelled, Stop, register
from .wtf_graph import (  # noqa: F401  (the graph, a seed's result and the panels on open: monitor.algorithms.wtf_graph)
    _GRAPHS,
    _GRAPHS_KEEP,
    DEFAULT_CIRCLE,
    DEFAULT_MAX_ITER,
    DEFAULT_TOP,
    LoadedGraph,
    OnOpen,
    SeedResult,
    _seed_result,
    compute_on_open,
    load_graph,
)

log = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_CIRCLE",
    "DEFAULT_MAX_ITER",
    "DEFAULT_SPREADERS",
    "DEFAULT_TOP",
    "MAX_CIRCLE",
    "MAX_MAX_ITER",
    "MAX_SEEDS",
    "MAX_TOP",
    "RUN_DIRECTIONS",
    "SEEDS_PER_BATCH",
    "LoadedGraph",
    "OnOpen",
    "SeedResult",
    "Wtf",
    "WtfBatchResult",
    "compute_on_open",
    "load_graph",
    "method_of",
]

#: seeds per batch: the engine's block (``compute.algorithms.wtf.BATCH``), so a batch is one block of products
SEEDS_PER_BATCH = 64
RUN_DIRECTIONS = ("both", *DIRECTIONS)
DEFAULT_SPREADERS = 20
MAX_CIRCLE = 100_000
MAX_TOP = 1000
MAX_SEEDS = 10 * SEEDS_PER_BATCH  # accounts, or a publisher's spreaders, per run
MAX_MAX_ITER = 1000
PARAMS = ("accounts", "publisher", "spreaders", "direction", "circle", "top", "max_iter", "method", "epsilon", "walks")


# --- the result of one batch -------------------------------------------------------------------------------------


@dataclass
class WtfBatchResult(BatchOutcome):
    """A batch's seed results; ``reused`` counts the seeds whose stored result was on the same graph."""

    seeds: list[SeedResult] = field(default_factory=list)
    fingerprint: str = ""
    n_nodes: int = 0
    graph_edges: int = 0
    backend: str = "cpu"
    reused: int = 0


def _run_engine(
    g,
    idx: np.ndarray,
    *,
    direction: str,
    circle: int,
    top: int,
    max_iter: int,
    backend: str,
    res: WtfBatchResult,
    method: tuple[str, float | None, float | None] = ("exact", None, None),
):
    """The engine on ``backend`` with ``method`` (:func:`method_of`); a GPU out of memory is computed again on the
    CPU, and said so."""
    from compute.algorithms.wtf import wtf

    name, epsilon, walks = method
    kw = {"method": name}
    if epsilon is not None:
        kw["epsilon"] = epsilon
    if walks is not None:
        kw["walks"] = walks
    try:
        return wtf(g, idx, direction=direction, circle=circle, top=top, max_iter=max_iter, backend=backend, **kw)
    except Exception as exc:
        if backend != "gpu" or not is_device_oom(exc):
            raise
        log.warning("wtf: the GPU ran out of memory for %d seeds; computing them on the CPU", len(idx))
        res.notes.append(f"the GPU ran out of memory ({direction}): {len(idx)} seed(s) computed on the CPU")
        res.cpu_fallback.extend(int(s) for s in g.ids[idx])
        return wtf(g, idx, direction=direction, circle=circle, top=top, max_iter=max_iter, backend="cpu", **kw)


def _method_params(params: dict) -> dict:
    """``method`` (absent or ``exact``: nothing, as older runs' params), with ``epsilon`` for ``push`` and
    ``fora`` and ``walks`` for ``fora`` and ``walks`` (their defaults when absent), each checked by the engine's
    rules."""
    method = params.get("method") or "exact"
    if method not in WTF_METHODS:
        raise ValueError(f"method must be one of {', '.join(WTF_METHODS)} (got {method!r})")
    if method == "exact":
        for name in ("epsilon", "walks"):
            if params.get(name) is not None:
                raise ValueError(f"{name} is for method push, fora or walks, not exact")
        return {}
    if method == "push" and params.get("walks") is not None:
        raise ValueError("walks is for method fora or walks, not push")
    if method == "walks" and params.get("epsilon") is not None:
        raise ValueError("epsilon is for method push or fora, not walks (it does not push)")
    out: dict = {"method": method}
    if method != "walks":
        out["epsilon"] = _number(params, "epsilon", DEFAULT_EPSILON)
    if method in ("fora", "walks"):
        out["walks"] = _number(params, "walks", DEFAULT_WALKS)
    check_local(method, out.get("epsilon", DEFAULT_EPSILON), out.get("walks", DEFAULT_WALKS))
    return out


def _number(params: dict, name: str, default: float) -> float:
    raw = params.get(name)
    if raw is None:
        return default
    if isinstance(raw, bool):
        raise ValueError(f"{name} must be a number, not {raw!r}")
    try:
        return float(raw)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, not {raw!r}") from None


def method_of(params: dict) -> tuple[str, float | None, float | None]:
    """(method, epsilon, walks) of a run's params: ``exact`` with no epsilon nor walks when absent."""
    method = params.get("method", "exact")
    epsilon = params.get("epsilon") if method in ("push", "fora") else None
    return method, epsilon, params.get("walks") if method in ("fora", "walks") else None


def _check(stop: Stop) -> None:
    if stop():  # a safe point: nothing of the batch is stored yet
        raise RunCancelled()


def _directions(params: dict) -> list[str]:
    return list(DIRECTIONS) if params["direction"] == "both" else [params["direction"]]


def _twitter_id(raw, name: str) -> str:
    try:
        v = int(str(raw).strip())
    except (TypeError, ValueError):
        raise ValueError(f"{name}: not a Twitter id: {raw!r}") from None
    if not 0 < v < 2**63:
        raise ValueError(f"{name}: not a Twitter id: {raw!r}")
    return str(v)


def _int_param(params: dict, name: str, default: int, lo: int, hi: int) -> int:
    raw = params.get(name, default)
    if isinstance(raw, bool):
        raise ValueError(f"{name} must be an integer, not {raw!r}")
    try:
        v = int(raw)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an integer, not {raw!r}") from None
    if not lo <= v <= hi:
        raise ValueError(f"{name} must be between {lo} and {hi} (got {v})")
    return v


class Wtf(Algorithm):
    """Look-alike accounts and likely next amplifiers of seed accounts (docs/wtf.md)."""

    name = "wtf"
    label = "Who amplifies whom"

    def clean_params(self, params: dict) -> dict:
        unknown = sorted(set(params) - set(PARAMS))
        if unknown:
            raise ValueError(f"wtf takes {', '.join(PARAMS)} (unknown: {', '.join(unknown)})")
        has_accounts, has_publisher = params.get("accounts") is not None, params.get("publisher") is not None
        if has_accounts == has_publisher:
            raise ValueError("wtf needs either accounts or a publisher (its top spreaders), not both or neither")
        out: dict = {}
        if has_accounts:
            raw = params["accounts"]
            if isinstance(raw, (str, int)):
                raw = [raw]
            accounts = list(dict.fromkeys(_twitter_id(a, "accounts") for a in raw))
            if not 1 <= len(accounts) <= MAX_SEEDS:
                raise ValueError(f"accounts: give 1 to {MAX_SEEDS} accounts (got {len(accounts)})")
            if "spreaders" in params:
                raise ValueError("spreaders goes with a publisher, not with accounts")
            out["accounts"] = accounts
        else:
            out["publisher"] = _twitter_id(params["publisher"], "publisher")
            out["spreaders"] = _int_param(params, "spreaders", DEFAULT_SPREADERS, 1, MAX_SEEDS)
        direction = params.get("direction") or ("both" if has_accounts else "followers")
        if direction not in RUN_DIRECTIONS:
            raise ValueError(f"direction must be one of {', '.join(RUN_DIRECTIONS)} (got {direction!r})")
        out["direction"] = direction
        out["circle"] = _int_param(params, "circle", DEFAULT_CIRCLE, 1, MAX_CIRCLE)
        out["top"] = _int_param(params, "top", DEFAULT_TOP, 1, MAX_TOP)
        if params.get("max_iter") is not None:  # absent: the default (older runs' params have no such key)
            out["max_iter"] = _int_param(params, "max_iter", DEFAULT_MAX_ITER, 1, MAX_MAX_ITER)
        out.update(_method_params(params))
        return out

    def seeds(self, run: ComputeRun) -> list[int]:
        """The run's seed accounts (``Account`` pks, in order): its accounts, or its publisher's top spreaders as
        the all-time ranking by total influence has them now. A ``ValidationError`` on ``params`` names an
        account or publisher the workspace does not have."""
        from .. import selectors

        p, ws = run.params, run.workspace
        tids = p["accounts"] if "accounts" in p else [p["publisher"]]
        found = dict(
            Account.objects.filter(workspace=ws, twitter_id__in=[int(t) for t in tids]).values_list("twitter_id", "pk")
        )
        missing = [t for t in tids if int(t) not in found]
        if missing:
            what = "accounts" if "accounts" in p else "publisher"
            raise ValidationError({"params": f"{what}: not in this workspace: {', '.join(missing[:10])}"})
        if "accounts" in p:
            return [found[int(t)] for t in tids]
        pub = found[int(p["publisher"])]
        publisher = Account.objects.get(pk=pub)
        rows = selectors.top_spreaders(ws, publisher=publisher, limit=p["spreaders"] + 1)
        return [r["account"] for r in rows if r["account"] != pub][: p["spreaders"]]

    def plan(self, *, run: ComputeRun, tweet_pks: list[int]) -> list[PlannedBatch]:
        seeds = self.seeds(run)
        return [
            PlannedBatch(tweet_pks=[], n_cascades=0, n_nodes=0, params={"seeds": seeds[i : i + SEEDS_PER_BATCH]})
            for i in range(0, len(seeds), SEEDS_PER_BATCH)
        ]

    def compute(self, *, run: ComputeRun, batch: ComputeBatch, backend: str, stop: Stop) -> WtfBatchResult:
        p = run.params
        res = WtfBatchResult(backend=backend)
        t = time.perf_counter()
        loaded = load_graph(run.workspace)
        g = loaded.graph
        t = res.tick("load_s", t)
        res.fingerprint, res.n_nodes, res.graph_edges = loaded.fingerprint, g.n_nodes, g.n_edges
        if batch.index == 0:
            res.n_edges = g.n_edges  # counted once into the run: every batch reads the same graph
        seeds = [int(s) for s in batch.params["seeds"]]
        directions = _directions(p)
        max_iter = p.get("max_iter", DEFAULT_MAX_ITER)
        method = method_of(p)
        same_graph = set(
            WtfResult.objects.filter(
                workspace=run.workspace,
                seed__in=seeds,
                direction__in=directions,
                circle=p["circle"],
                top=p["top"],
                max_iter=max_iter,  # a result capped at 100 does not answer a run asking for 150
                method=method[0],  # nor an estimate a precise run, or another estimate
                epsilon=method[1],
                walks=method[2],
                fingerprint=loaded.fingerprint,
            ).values_list("seed_id", "direction")
        )
        idx_all = g.index_of(np.asarray(seeds, dtype=np.int64))
        for direction in directions:
            _check(stop)
            todo = [(s, i) for s, i in zip(seeds, idx_all.tolist(), strict=True) if (s, direction) not in same_graph]
            res.reused += len(seeds) - len(todo)
            outside = [s for s, i in todo if i < 0]
            res.seeds += [SeedResult(seed=s, direction=direction, in_graph=False) for s in outside]
            idx = np.asarray([i for _, i in todo if i >= 0], dtype=np.int64)
            if len(idx):
                recs = _run_engine(
                    g,
                    idx,
                    direction=direction,
                    circle=p["circle"],
                    top=p["top"],
                    max_iter=max_iter,
                    backend=backend,
                    res=res,
                    method=method,
                )
                res.seeds += [_seed_result(rec, g, direction) for rec in recs]
            t = res.tick(f"wtf_{direction}_s", t)
        if res.reused:
            res.notes.append(
                f"{res.reused} seed result(s) reused: computed before on the same follower graph with these parameters"
            )
        n_outside = sum(1 for s in res.seeds if not s.in_graph)
        if n_outside:
            res.notes.append(f"{n_outside} seed result(s) empty: the account has no follow edge in the workspace")
        _check(stop)
        return res

    def store(self, *, run: ComputeRun, batch: ComputeBatch, result: BatchOutcome) -> None:
        assert isinstance(result, WtfBatchResult)
        if not result.seeds:
            return
        p, now = run.params, timezone.now()
        method, epsilon, walks = method_of(p)
        rows = [
            WtfResult(
                workspace_id=run.workspace_id,
                run_id=run.pk,
                seed_id=s.seed,
                direction=s.direction,
                circle=p["circle"],
                top=p["top"],
                in_graph=s.in_graph,
                circle_size=s.circle_size,
                ppr_iterations=s.ppr_iterations,
                ppr_converged=s.ppr_converged,
                money_iterations=s.money_iterations,
                money_converged=s.money_converged,
                max_iter=p.get("max_iter", DEFAULT_MAX_ITER),
                method=method,
                epsilon=epsilon,
                walks=walks,
                n_nodes=result.n_nodes,
                n_edges=result.graph_edges,
                fingerprint=result.fingerprint,
                backend=result.backend,
                computed_at=now,
            )
            for s in result.seeds
        ]
        # replace, not add: a recompute (or a batch delivered twice) leaves one result per key
        WtfResult.objects.bulk_create(
            rows,
            update_conflicts=True,
            unique_fields=["workspace", "seed", "direction", "circle", "top"],
            update_fields=[
                "run",
                "in_graph",
                "circle_size",
                "ppr_iterations",
                "ppr_converged",
                "money_iterations",
                "money_converged",
                "max_iter",
                "method",
                "epsilon",
                "walks",
                "n_nodes",
                "n_edges",
                "fingerprint",
                "backend",
                "computed_at",
            ],
        )
        keys = {(s.seed, s.direction) for s in result.seeds}
        ids = {
            (seed, d): pk
            for pk, seed, d in WtfResult.objects.filter(
                workspace_id=run.workspace_id,
                seed__in={s for s, _ in keys},
                circle=p["circle"],
                top=p["top"],
            ).values_list("pk", "seed_id", "direction")
            if (seed, d) in keys
        }
        WtfEntry.objects.filter(result_id__in=ids.values()).delete()
        entries = []
        for s in result.seeds:
            for name, (accounts, scores, ppr) in s.lists.items():
                entries += [
                    WtfEntry(
                        result_id=ids[(s.seed, s.direction)],
                        list=name,
                        rank=r + 1,
                        account_id=int(a),
                        score=float(sc),
                        ppr=float(pr),
                    )
                    for r, (a, sc, pr) in enumerate(zip(accounts.tolist(), scores.tolist(), ppr.tolist(), strict=True))
                ]
        WtfEntry.objects.bulk_create(entries, batch_size=5000)


WTF = register(Wtf())
