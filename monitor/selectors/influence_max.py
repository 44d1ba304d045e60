"""The counter-campaign planner (docs/influence_max.md): a publisher's planner runs, a finished run's result, its
chosen accounts and the publisher's top spreaders by influence beside them, and the rows of its CSV export.

Runs are looked up within the workspace (404 for another workspace's run or a run of another algorithm); a
publisher's runs are those whose parameters name its account."""

from __future__ import annotations

from django.http import Http404

from ..cache import cached
from ..models import Account, ComputeRun, InfluenceMaxResult, InfluenceMaxSeed, Workspace

__all__ = [
    "SEED_COLUMNS",
    "influence_max_latest",
    "influence_max_plan",
    "influence_max_publisher",
    "influence_max_result",
    "influence_max_run_get",
    "influence_max_runs",
    "influence_max_seed_rows",
]

SEED_COLUMNS = (
    "rank",
    "account_id",
    "account__twitter_id",
    "account__screen_name",
    "gain",
    "cumulative",
    "influence_rank",
    "in_baseline",
)


def _scope(ws: Workspace, publisher: Account | None):
    runs = ComputeRun.objects.filter(workspace=ws, algorithm="influence_max")
    return runs if publisher is None else runs.filter(params__publisher=publisher.pk)


def influence_max_runs(ws: Workspace, *, publisher: Account | None = None, limit: int = 10) -> list[ComputeRun]:
    """The newest planner runs of the workspace (or for one publisher), any status, newest first."""
    return list(_scope(ws, publisher).select_related("created_by").order_by("-pk")[:limit])


def influence_max_latest(ws: Workspace, publisher: Account) -> ComputeRun | None:
    """The newest finished planner run for ``publisher`` that stored a result."""
    return (
        _scope(ws, publisher)
        .filter(status=ComputeRun.Status.DONE, influence_max_result__isnull=False)
        .order_by("-pk")
        .first()
    )


def influence_max_run_get(ws: Workspace, pk: int) -> ComputeRun:
    """A planner run of the workspace (404 for another workspace's run, or a run of another algorithm)."""
    r = (
        ComputeRun.objects.filter(workspace=ws, pk=pk, algorithm="influence_max")
        .select_related("created_by", "collection")
        .first()
    )
    if r is None:
        raise Http404("no such counter-campaign run in this workspace")
    return r


def influence_max_publisher(ws: Workspace, run: ComputeRun) -> Account:
    """The account whose audience the run plans for (404 when it is no longer in the workspace)."""
    acc = Account.objects.filter(workspace=ws, pk=run.params.get("publisher")).first()
    if acc is None:
        raise Http404("the run's publisher is no longer in this workspace")
    return acc


def influence_max_result(run: ComputeRun) -> InfluenceMaxResult | None:
    """The run's result once it is done (None before)."""
    return InfluenceMaxResult.objects.filter(run=run).select_related("publisher").first()


def _names(pks: list[int]) -> dict[int, tuple[int, str]]:
    return {
        pk: (tid, name)
        for pk, tid, name in Account.objects.filter(pk__in=pks).values_list("pk", "twitter_id", "screen_name")
    }


@cached
def influence_max_plan(ws: Workspace, run: ComputeRun) -> dict | None:
    """What the planner page and the API show of a finished run, in three queries: the result, the chosen accounts
    in order (with their gains, the running estimate, their rank among the publisher's spreaders by influence),
    the publisher's top spreaders by influence (each marked when it was chosen too), and the comparison of the
    two sets' evaluated reach. None while the run has no result."""
    result = influence_max_result(run)
    if result is None:
        return None
    seeds = [
        {
            "rank": r["rank"],
            "account": r["account_id"],
            "twitter_id": r["account__twitter_id"],
            "screen_name": r["account__screen_name"],
            "gain": r["gain"],
            "cumulative": r["cumulative"],
            "influence_rank": r["influence_rank"],
            "in_baseline": r["in_baseline"],
        }
        for r in InfluenceMaxSeed.objects.filter(run=run).order_by("rank").values(*SEED_COLUMNS)
    ]
    chosen = {s["account"] for s in seeds}
    base = result.baseline or {}
    accounts = [int(pk) for pk in base.get("accounts", [])]
    names = _names(accounts)
    baseline_rows = [
        {
            "rank": i + 1,
            "account": pk,
            "twitter_id": names.get(pk, (pk, ""))[0],
            "screen_name": names.get(pk, (pk, ""))[1],
            "influence": float(score),
            "chosen": pk in chosen,
        }
        for i, (pk, score) in enumerate(zip(accounts, base.get("scores", []), strict=True))
    ]
    has_baseline = "spread" in base
    return {
        "result": result,
        "seeds": seeds,
        "baseline": baseline_rows,
        "comparison": {
            "chosen": {"spread": result.spread, "ci_low": result.spread_ci_low, "ci_high": result.spread_ci_high},
            "baseline": (
                {"spread": base["spread"], "ci_low": base["ci_low"], "ci_high": base["ci_high"]}
                if has_baseline
                else None
            ),
            "overlap": int(base.get("overlap", 0)),
            "baseline_size": len(accounts),
            # how much more (or less) the plan reaches than the top spreaders would, in the result's unit
            "difference": result.spread - base["spread"] if has_baseline else None,
            "share": result.spread / result.total_weight if result.total_weight else 0.0,
        },
        "curve": [[j + 1, v] for j, v in enumerate(result.curve)],
    }


def influence_max_seed_rows(run: ComputeRun):
    """The run's chosen accounts in order as tuples of :data:`SEED_COLUMNS` (the CSV export)."""
    return InfluenceMaxSeed.objects.filter(run=run).order_by("rank").values_list(*SEED_COLUMNS)
