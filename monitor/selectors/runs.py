"""Compute runs: the list of a workspace's runs, a run's batches, and what each run is about in the words of its
own algorithm (:func:`run_description`: the runs table shows an influence run's orphans and cascades, a network
run's graph and sampling, a look-alike run's seeds, a planner run's publisher, K and model, a coordination run's
method)."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Q

from ..models import Account, Collection, ComputeRun, Workspace


def runs_list(ws: Workspace, *, limit: int = 100):
    return ComputeRun.objects.filter(workspace=ws).select_related("collection", "created_by").order_by("-pk")[:limit]


@dataclass
class Waiting:
    """What a waiting run waits for: the workspace's runs in flight (``in_flight``, oldest first), how many
    waiting runs are ahead of it (``ahead``) and the workspace's limit of runs in flight (``limit``)."""

    in_flight: list[ComputeRun]
    ahead: int
    limit: int


def run_waiting(run: ComputeRun) -> Waiting | None:
    """For a run that waits for its turn (``services.runs``: an upload's own runs never wait), what it waits
    behind; ``None`` for a run that does not wait."""
    from ..limits import workspace_limits

    if run.status != ComputeRun.Status.WAITING:
        return None
    counted = ComputeRun.objects.filter(workspace_id=run.workspace_id, collection__isnull=True)
    in_flight = counted.filter(status__in=(ComputeRun.Status.QUEUED, ComputeRun.Status.RUNNING)).order_by("pk")
    ahead = counted.filter(status=ComputeRun.Status.WAITING).filter(
        Q(created_at__lt=run.created_at) | Q(created_at=run.created_at, pk__lt=run.pk)
    )
    return Waiting(
        in_flight=list(in_flight.only("pk", "algorithm", "status")),
        ahead=ahead.count(),
        limit=workspace_limits(run.workspace).runs_in_flight,
    )


def run_batches(run: ComputeRun):
    """The run's batches in order, with the columns its page shows."""
    return run.batches.order_by("index").only(
        "index",
        "n_cascades",
        "n_nodes",
        "status",
        "attempts",
        "device",
        "timings",
        "error",
        "started_at",
        "finished_at",
        "run_id",
    )


@dataclass
class RunDescription:
    """What a run read (``input``, and the collection it names, if any), its parameters as ``(name, value)``
    text pairs and its results as ``(count, what)`` pairs, in its algorithm's words."""

    input: str
    collection: Collection | None = None
    parameters: list[tuple[str, str]] = field(default_factory=list)
    results: list[tuple[int, str]] = field(default_factory=list)


def run_description(run: ComputeRun) -> RunDescription:
    """``run``'s input, parameters and results as its algorithm has them (a query or two: a collection or an
    account the parameters name, the results a look-alike or planner run stored). An algorithm not described
    here shows its parameters as stored and the accounts and edges it counted."""
    describe = _DESCRIBE.get(run.algorithm, _generic)
    d = describe(run, dict(run.params or {}))
    if run.algorithm != "influence":  # a count the algorithm does not keep stays 0: not a result
        d.results = [(n, what) for n, what in d.results if n]
    return d


def _account(ws_id: int, *, pk: int | None = None, twitter_id: int | None = None) -> str:
    q = Account.objects.filter(workspace_id=ws_id)
    acc = (q.filter(pk=pk) if pk is not None else q.filter(twitter_id=twitter_id)).only("twitter_id", "screen_name")
    a = acc.first()
    if a is None:
        return str(twitter_id if twitter_id is not None else pk)
    return f"@{a.screen_name}" if a.screen_name else str(a.twitter_id)


def _rest(params: dict, shown: set[str]) -> list[tuple[str, str]]:
    """The parameters a description does not name, as stored (a parameter added later is still shown)."""
    return [(k, str(v)) for k, v in params.items() if k not in shown and v is not None]


def _influence(run: ComputeRun, params: dict) -> RunDescription:
    return RunDescription(
        input=run.collection.name if run.collection_id else "every tweet of the workspace (recompute)",
        collection=run.collection if run.collection_id else None,
        parameters=[("orphans", run.orphans), *_rest(params, set())],
        results=[(run.n_cascades, "cascades"), (run.n_nodes, "participants"), (run.n_edges, "spreading edges")],
    )


def _network(run: ComputeRun, params: dict) -> RunDescription:
    graph = params.get("graph", "follows")
    coll = None
    if params.get("collection") is not None:
        coll = Collection.objects.filter(workspace_id=run.workspace_id, pk=params["collection"]).first()
    what = "follower graph" if graph == "follows" else "interaction graph"
    if params.get("spreading"):
        what += " with spreading edges"
    samples = params.get("samples")
    parameters = [("graph", graph)]
    if params.get("spreading"):
        parameters.append(("spreading edges", "yes"))
    if samples is not None:
        parameters.append(("betweenness", "exact" if samples == 0 else f"{samples:,} sampled sources"))
    if params.get("seed") is not None:
        parameters.append(("seed", str(params["seed"])))
    if params.get("communities") is not None:
        found = f"yes, resolution {params.get('resolution', 1.0):g}" if params["communities"] else "no"
        parameters.append(("communities", found))
    shown = {"graph", "collection", "spreading", "samples", "seed", "communities", "resolution"}
    return RunDescription(
        input=f"{coll.name if coll else 'the workspace'}: {what}",
        collection=coll,
        parameters=parameters + _rest(params, shown),
        results=[(run.n_nodes, "accounts"), (run.n_edges, "edges")],
    )


def _wtf(run: ComputeRun, params: dict) -> RunDescription:
    if params.get("accounts") is not None:
        accounts = list(params["accounts"])
        seeds = [
            (
                "accounts",
                f"{len(accounts):,}" if len(accounts) > 1 else _account(run.workspace_id, twitter_id=int(accounts[0])),
            )
        ]
    else:
        seeds = [
            ("publisher", _account(run.workspace_id, twitter_id=int(params["publisher"]))),
            ("top spreaders", f"{params.get('spreaders', '–')}"),
        ]
    named = [(k, str(params[k])) for k in ("direction", "circle", "top") if params.get(k) is not None]
    from django.db.models import Count, Max

    from ..models import WtfResult

    got = WtfResult.objects.filter(run_id=run.pk).aggregate(lists=Count("id"), nodes=Max("n_nodes"))
    return RunDescription(
        input="the workspace's follower graph",
        parameters=seeds + named + _rest(params, {"accounts", "publisher", "spreaders", "direction", "circle", "top"}),
        results=[
            (got["lists"] or 0, "seed lists"),
            (got["nodes"] or run.n_nodes, "accounts"),
            (run.n_edges, "follow edges"),
        ],
    )


def _influence_max(run: ComputeRun, params: dict) -> RunDescription:
    model = params.get("model", "uniform")
    if model == "uniform" and params.get("p") is not None:
        model = f"uniform p = {params['p']:g}"
    elif model == "estimated" and params.get("strength") is not None:
        model = f"estimated, strength {params['strength']:g}"
    elif model == "wc":
        model = "weighted cascade"
    parameters = [
        ("publisher", _account(run.workspace_id, pk=int(params["publisher"])) if params.get("publisher") else "–"),
        ("K", f"{params['k']:,}" if params.get("k") is not None else "–"),
        ("model", model),
    ]
    parameters += [(k, str(params[k])) for k in ("unit", "method", "eps", "seed") if params.get(k) is not None]
    shown = {"publisher", "k", "model", "p", "strength", "unit", "method", "eps", "seed", "batches", "evaluate"}
    from ..models import InfluenceMaxSeed

    return RunDescription(
        input="the publisher's audience in the follower graph",
        parameters=parameters + _rest(params, shown),
        results=[
            (InfluenceMaxSeed.objects.filter(run_id=run.pk).count(), "accounts chosen"),
            (run.n_nodes, "accounts in the audience"),
            (run.n_edges, "edges among them"),
        ],
    )


def _coordination(run: ComputeRun, params: dict) -> RunDescription:
    coll = None
    if params.get("collection") is not None:
        coll = Collection.objects.filter(workspace_id=run.workspace_id, pk=params["collection"]).first()
    method = params.get("method", "co-retweet")
    if method == "co-retweet":
        parameters = [("method", method), ("window", f"{params.get('window', 60):g} s"),
                      ("min count", str(params.get("min_count")))]  # fmt: skip
    else:
        parameters = [("method", method), ("min retweets", str(params.get("min_retweets"))),
                      ("threshold", f"{params.get('threshold', 0.9):g}")]  # fmt: skip
    from ..models import CoordinationSummary

    summary = CoordinationSummary.objects.filter(run_id=run.pk).first()
    return RunDescription(
        input=f"{coll.name if coll else 'the workspace'}: its retweets",
        collection=coll,
        parameters=parameters
        + _rest(params, {"method", "collection", "window", "min_count", "min_retweets", "threshold"}),
        results=[(run.n_nodes, "retweeting accounts"), (run.n_edges, "coordinated pairs")]
        + ([(summary.n_clusters, "clusters")] if summary else []),
    )


def _generic(run: ComputeRun, params: dict) -> RunDescription:
    return RunDescription(
        input=run.collection.name if run.collection_id else "the workspace",
        collection=run.collection if run.collection_id else None,
        parameters=_rest(params, set()),
        results=[(run.n_nodes, "accounts"), (run.n_edges, "edges")],
    )


_DESCRIBE = {
    "influence": _influence,
    "network": _network,
    "wtf": _wtf,
    "influence_max": _influence_max,
    "coordination": _coordination,
}
