"""Cost budgets: every analysis run is estimated before it is queued and refused beyond its workspace's limits
(docs/reliability.md). The limits themselves (a workspace's own, else the deployment's defaults) are read by
``monitor.limits``, re-exported here."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
from django.core.exceptions import ValidationError

from compute import costs

from ..algorithms.base import PlannedBatch
from ..limits import MB, Limits, workspace_limits
from ..models import ComputeRun, Workspace

__all__ = ["MB", "Limits", "check", "estimate", "held_to_budget", "preview", "problems", "summary", "workspace_limits"]

# --- estimates and the check ----------------------------------------------------------------------------------------

_PILOTS: OrderedDict[tuple, costs.Pilot] = OrderedDict()
_PILOTS_KEEP = 8


def _pilot(aud, k: int, seed: int) -> costs.Pilot:
    """The pilot RR sets of a loaded audience, measured once per (model, k, seed) by each process."""
    key = (aud.fingerprint, k, seed)
    hit = _PILOTS.get(key)
    if hit is None:
        hit = costs.imm_pilot(aud.model, k=k, seed=seed)
        _PILOTS[key] = hit
        while len(_PILOTS) > _PILOTS_KEEP:
            _PILOTS.popitem(last=False)
    else:
        _PILOTS.move_to_end(key)
    return hit


def estimate(*, run: ComputeRun, plan: list[PlannedBatch]) -> costs.Estimate:
    """What ``run`` (not saved yet, its params cleaned) will cost, from what its ``plan`` loaded: the graph of a
    network run (``network.load_graph``), the audience of a counter-campaign (``influence_max.load_audience``),
    the follower graph of a WTF run; each is kept per process, so this reads nothing the plan did not."""
    p, ws = run.params, run.workspace
    if run.algorithm == "network":
        from ..algorithms.network import GraphSpec, load_graph

        loaded = load_graph(ws, GraphSpec.of(p))
        g = loaded.graph
        return costs.betweenness_cost(
            nodes=g.n_nodes,
            edges=g.n_edges,
            arcs=loaded.undirected().n_edges,
            samples=p["samples"],
            communities=p.get("communities", False),
        )
    if run.algorithm == "influence_max":
        from ..algorithms.influence_max import load_audience

        aud = load_audience(ws, p)
        model = aud.model
        k = min(p["k"], model.n_nodes)
        top = float(np.sort(np.asarray(model.weights))[::-1][:k].sum())
        return costs.influence_max_cost(
            nodes=model.n_nodes,
            edges=model.n_edges,
            total_weight=float(model.total_weight),
            top_weights=top,
            k=p["k"],
            eps=p["eps"],
            method=p["method"],
            evaluate=p["evaluate"],
            batches=p["batches"],
            pilot=_pilot(aud, p["k"], p["seed"]),
        )
    if run.algorithm == "wtf":
        from ..algorithms.wtf import DEFAULT_MAX_ITER, load_graph

        g = load_graph(ws).graph
        return costs.wtf_cost(
            nodes=g.n_nodes,
            edges=g.n_edges,
            seeds=sum(len(b.params.get("seeds", [])) for b in plan),
            directions=2 if p["direction"] == "both" else 1,
            circle=p["circle"],
            max_iter=p.get("max_iter", DEFAULT_MAX_ITER),
            top=p["top"],
            method=p.get("method", "exact"),
            epsilon=p.get("epsilon"),
            walks=p.get("walks"),
        )
    if run.algorithm == "coordination":
        from compute.algorithms.coordination import coordination_cost

        from ..algorithms.coordination import load_retweets

        rt = load_retweets(ws, p.get("collection"))
        pairs = coordination_cost(
            rt.tweet,
            rt.twitter_id,
            rt.time,
            method=p["method"],
            window=p.get("window", 0.0),
            min_retweets=p.get("min_retweets", 1),
        )
        return costs.coordination_run_cost(retweets=len(rt), pairs=pairs, method=p["method"])
    return costs.influence_measure_cost(
        cascades=sum(b.n_cascades for b in plan),
        nodes=sum(b.n_nodes for b in plan),
        largest_batch_nodes=max((b.n_nodes for b in plan), default=0),
    )


def held_to_budget(run: ComputeRun) -> bool:
    """Whether a run over its workspace's budget is refused. Every analysis an analyst starts is; the influence
    measure an upload starts (``collection`` set) is recorded with its estimate but not refused: the upload limits
    (``SPREADWATCH_UPLOAD_*``) bound it, and refusing it would leave the collection's data stored but never
    computed."""
    return not (run.algorithm == "influence" and run.collection_id is not None)


def check(*, run: ComputeRun, plan: list[PlannedBatch]) -> costs.Estimate:
    """Estimate ``run``, record the estimate on it (``run.estimate``: saved with the run), and refuse it with a
    ``ValidationError`` keyed by the parameter that drives the cost when it exceeds its workspace's budget of
    worker seconds or batch memory. The message names the parameter, the estimate and the limit, and the value
    that would fit where the model can say."""
    est = estimate(run=run, plan=plan)
    limits = workspace_limits(run.workspace)
    run.estimate = {
        **est.as_dict(),
        "budget": {"run_seconds": limits.run_seconds, "run_memory_bytes": limits.run_memory_bytes},
        "held": held_to_budget(run),
    }
    if not held_to_budget(run):
        return est
    errors = problems(run, est, limits)
    if errors:
        raise ValidationError(errors)
    return est


def problems(run: ComputeRun, est: costs.Estimate, limits: Limits) -> dict[str, str]:
    """``{parameter: message}`` for each budget ``est`` exceeds (empty when the run fits)."""
    out: dict[str, str] = {}
    if est.seconds > limits.run_seconds:
        key, msg = _over_time(run, est, limits)
        out[key] = msg
    # the influence measure's batches are bounded by SPREADWATCH_BATCH_NODES, a deployment setting: its memory
    # estimate is recorded, its time held
    if est.peak_bytes > limits.run_memory_bytes and run.algorithm != "influence":
        key, msg = _over_memory(run, est, limits)
        out.setdefault(key, msg)
        if out[key] != msg:
            out[key] = f"{out[key]}; {msg}"
    return out


def _over_time(run: ComputeRun, est: costs.Estimate, limits: Limits) -> tuple[str, str]:
    p, d = run.params, est.drivers
    budget = f"this workspace's budget is {duration(limits.run_seconds)} of worker time per run"
    took = f"an estimated {duration(est.seconds)} of worker time"
    fit = est.fit_time(limits.run_seconds)
    if run.algorithm == "network":
        if d.get("communities") and d["structure_seconds"] > limits.run_seconds:
            return "communities", (
                f"communities: finding them on {count(d['nodes'])} nodes/{count(d['edges'])} edges takes an estimated "
                f"{duration(d['communities_seconds'])} of worker time, the structural analyses with them "
                f"{duration(d['structure_seconds'])}; {budget} (leave communities off)"
            )
        what = "exact betweenness" if d["exact"] else f"{p['samples']:,} sampled sources"
        hint = f" (lower samples to at most {fit:,})" if fit else ""
        if d.get("communities"):
            hint = f"{hint}, or leave communities off"
        return "samples", (
            f"samples: {p['samples']:,} is {what}, {d['sources']:,} sources on {count(d['nodes'])} nodes/"
            f"{count(d['edges'])} edges: {took}; {budget}{hint}"
        )
    if run.algorithm == "influence_max":
        if p["method"] == "imm":
            hint = f" (raise eps to at least {fit:g}, or lower k)" if fit else " (lower k: no eps up to 1 fits)"
            return "eps", (
                f"eps: {p['eps']:g} with k {p['k']} needs about {count(d['theta'])} RR sets on an audience of "
                f"{count(d['nodes'])} accounts/{count(d['edges'])} follows: {took}; {budget}{hint}"
            )
        if p["method"] == "imgpu":
            return "k", (
                f"k: {p['k']} picks over {d['snapshots']} live-edge snapshots of an audience of {count(d['nodes'])} "
                f"accounts/{count(d['edges'])} follows: {took}; {budget} (lower k)"
            )
        return "evaluate", f"evaluate: {p['evaluate']:,} cascades with method {p['method']}: {took}; {budget}"
    if run.algorithm == "coordination":
        key, hint = (
            ("window", "a narrower window")
            if p["method"] == "co-retweet"
            else ("min_retweets", "a higher min_retweets")
        )
        return key, (
            f"{key}: {p['method']} counts {count(d['pairs'])} pairs of accounts over {count(d['retweets'])} retweets: "
            f"{took}; {budget} ({hint}, or one collection at a time)"
        )
    if run.algorithm == "wtf" and p.get("method", "exact") != "exact":
        key = "epsilon" if p["method"] == "push" else "walks"
        if p["method"] == "walks":
            how, fewer = f"{p['walks']:g} walks from each seed", "fewer walks"
        else:
            how = f"epsilon {p['epsilon']:g}" + (f", {p['walks']:g} walks per unit of residual" if "walks" in p else "")
            fewer = "fewer walks or a larger epsilon"
        hint = f"; at most {fit:,} seeds fit" if fit else ""
        return key, (
            f"{key}: {p['method']} with {how} for {d['seeds']:,} seeds x {d['directions']} direction(s): {took}; "
            f"{budget} ({fewer}{hint})"
        )
    if run.algorithm == "wtf":
        key = "accounts" if "accounts" in p else "spreaders"
        hint = f" (at most {fit:,} seeds fit)" if fit is not None else ""
        if p.get("max_iter") is not None and p["max_iter"] > 20:
            key, hint = "max_iter", f"{hint} (or lower max_iter)"
        return key, (
            f"{key}: {d['seeds']:,} seeds x {d['directions']} direction(s) x up to {d['iterations']} iterations on "
            f"{count(d['nodes'])} accounts/{count(d['edges'])} follows: {took}; {budget}{hint}"
        )
    return "tweets", (
        f"tweets: {d['cascades']:,} cascades with {count(d['nodes'])} participants: {took}; {budget} "
        "(recompute a collection at a time)"
    )


def _over_memory(run: ComputeRun, est: costs.Estimate, limits: Limits) -> tuple[str, str]:
    p = run.params
    budget = f"this workspace's budget is {size(limits.run_memory_bytes)} per batch"
    took = f"an estimated peak of {size(est.peak_bytes)} in one batch"
    if run.algorithm == "influence_max" and p["method"] == "imm":
        fit = est.fit_memory(limits.run_memory_bytes)
        hint = f" (raise eps to at least {fit:g}, or lower k)" if fit else " (lower k: no eps up to 1 fits)"
        return "eps", (
            f"eps: {p['eps']:g} with k {p['k']} needs about {count(est.drivers['theta'])} RR sets held at once: "
            f"{took}; {budget}{hint}"
        )
    key = {
        "network": "graph",
        "influence_max": "publisher",
        "wtf": "accounts" if "accounts" in p else "spreaders",
        "coordination": "window" if p.get("method") == "co-retweet" else "min_retweets",
    }
    k = key.get(run.algorithm, "tweets")
    return k, f"{k}: {took}; {budget}"


# --- how the numbers read ------------------------------------------------------------------------------------------


def duration(seconds: float) -> str:
    """``3 years``, ``2.5 days``, ``2.1 h``, ``30 min``, ``45 s``, ``1.5 s``, ``120 ms``, ``0.011 ms``."""
    s = float(seconds)
    if s >= 86400 * 365 * 2:
        return f"{s / (86400 * 365):,.0f} years"
    if s >= 3600 * 48:
        return f"{s / 86400:,.1f} days"
    if s >= 3600:
        return f"{s / 3600:.1f} h"
    if s >= 60:
        return f"{s / 60:.0f} min"
    if s >= 10:
        return f"{s:.0f} s"
    if s >= 1:
        return f"{s:.1f} s"
    return f"{float(f'{s * 1000:.2g}'):g} ms"


def size(nbytes: float) -> str:
    """``2.0 GB``, ``512 MB``, ``3.1 TB``, ``40 KB``."""
    b = float(nbytes)
    for unit, f in (("PB", 1024**5), ("TB", 1024**4), ("GB", 1024**3)):
        if b >= f:
            return f"{b / f:,.1f} {unit}"
    if b >= MB:
        return f"{b / MB:,.0f} MB"
    return f"{b / 1024:,.0f} KB" if b >= 1024 else f"{b:,.0f} B"


def count(x: float) -> str:
    """``1.2M``, ``8.4K``, ``640``, ``3.1e+18``."""
    x = float(x)
    if x >= 1e15:
        return f"{x:.1e}"
    for unit, f in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if x >= f:
            return f"{x / f:.1f}{unit}"
    return f"{x:,.0f}"


def summary(est: costs.Estimate, limits: Limits) -> str:
    """One line for a form: ``about 3 min of worker time, a batch's peak about 120 MB (budget: 30 min, 2.0 GB)``,
    after what drives it where the form's parameters change it a lot (the pairs a coordination method counts)."""
    what = ""
    if est.algorithm == "coordination":
        d = est.drivers
        what = f"{count(d['pairs'])} pairs of accounts to count over {count(d['retweets'])} retweets: "
    return what + (
        f"about {duration(est.seconds)} of worker time on one CPU worker, a batch's peak about "
        f"{size(est.peak_bytes)} (this workspace's budget: {duration(limits.run_seconds)} per run, "
        f"{size(limits.run_memory_bytes)} per batch)"
    )


def preview(*, workspace: Workspace, algorithm: str, params: dict, collection=None) -> dict:
    """What a run of ``algorithm`` with ``params`` would cost in ``workspace`` and whether its budget allows it,
    without starting it (the forms' live estimate and ``GET .../runs/estimate/``): ``{"algorithm", "estimate",
    "budget", "fits", "errors", "summary"}``. Reads only: the run is planned, never saved. A ``ValidationError``
    keyed by the parameter when a parameter is invalid (as starting the run would say)."""
    from .. import algorithms

    try:
        algo = algorithms.get(algorithm)
    except algorithms.UnknownAlgorithm as exc:
        raise ValidationError({"algorithm": str(exc)}) from exc
    try:
        cleaned = algo.clean_params(dict(params))
    except ValueError as exc:
        name = str(exc).split(":", 1)[0]
        raise ValidationError({name if name in params else "params": str(exc)}) from exc
    run = ComputeRun(workspace=workspace, algorithm=algo.name, params=cleaned, collection=collection)
    tweet_pks: list[int] = []
    if algo.name == "influence":
        from ..models import Tweet

        tweet_pks = list(Tweet.objects.filter(workspace=workspace).values_list("pk", flat=True))
    if algo.name == "network":
        # the estimate needs the graph only: the plan's lists of sources (one per account for exact betweenness)
        # are not built for a form that asks again at each change
        from ..models import Collection

        coll = cleaned.get("collection")
        if coll is not None and not Collection.objects.filter(workspace=workspace, pk=coll).exists():
            raise ValidationError({"params": f"collection: no collection {coll} in this workspace"})
        plan: list[PlannedBatch] = []
    else:
        plan = algo.plan(run=run, tweet_pks=tweet_pks)
    est = estimate(run=run, plan=plan)
    limits = workspace_limits(workspace)
    errors = problems(run, est, limits) if held_to_budget(run) else {}
    return {
        "algorithm": algo.name,
        "estimate": est.as_dict(),
        "budget": {"run_seconds": limits.run_seconds, "run_memory_bytes": limits.run_memory_bytes},
        "fits": not errors,
        "errors": errors,
        "summary": summary(est, limits),
    }
