"""Who amplifies whom's reads (docs/wtf.md): an account's look-alike accounts and likely next amplifiers, a
publisher's watch list, the runs that compute them and their progress.

Results are read through the data-version cache (:mod:`monitor.cache`) with one more key: the time of the
workspace's newest result (:func:`wtf_marker`, one indexed query). A WTF store does not bump the data version
(it would drop every cached ranking for tables no ranking reads), so the marker is what makes a new result show
at once; an import or an influence run bumps the version, which refreshes the watch list's "already spreading"
column. Which runs are going, and their progress, is read fresh every time.
"""

from __future__ import annotations

import logging
from typing import NamedTuple

from django.conf import settings
from django.db.models import Max
from django.utils import timezone

from ..cache import cached
from ..models import Account, CascadeInfluence, ComputeBatch, ComputeRun, Workspace, WtfEntry, WtfResult

__all__ = [
    "PANELS",
    "wtf_account",
    "wtf_account_lists",
    "wtf_active_run",
    "wtf_marker",
    "wtf_run_progress",
    "wtf_watchlist",
    "wtf_watchlist_publishers",
    "wtf_watchlist_rule",
]

log = logging.getLogger(__name__)

#: the account page's two panels: (key, direction, list)
PANELS = (("lookalikes", "follows", "similarity"), ("amplifiers", "followers", "relevance"))
# going: a run waiting for the workspace's earlier runs is shown as going too (it is queued once one ends)
ACTIVE = (ComputeRun.Status.WAITING, ComputeRun.Status.QUEUED, ComputeRun.Status.RUNNING)
RECENT_RUNS = 50  # active runs looked at for "is this account being computed" (a workspace runs a few at a time)


def wtf_marker(ws: Workspace) -> str:
    """The time of the workspace's newest stored result ("none" before the first): part of the cache key."""
    latest = WtfResult.objects.filter(workspace=ws).aggregate(t=Max("computed_at"))["t"]
    return latest.isoformat() if latest else "none"


def _rows(entries) -> list[dict]:
    rows = [
        {
            "rank": e.rank,
            "account": e.account_id,
            "twitter_id": e.account.twitter_id,
            "screen_name": e.account.screen_name,
            "score": e.score,
            "ppr": e.ppr,
        }
        for e in entries
    ]
    # Money's scores are shares of a walk's mass: tiny numbers whose leading digits sit past the 4th decimal, so a
    # page printing them as such shows ranks 11-20 as "0.0000". Relative to the first they read as "43.1 %".
    first = rows[0]["score"] if rows else 0.0
    for r in rows:
        r["relative"] = r["score"] / first if first > 0 else None
    return rows


def _latest_results(ws: Workspace, account: Account) -> dict[str, WtfResult]:
    """The newest result of each direction for ``account`` as the seed."""
    out: dict[str, WtfResult] = {}
    for r in WtfResult.objects.filter(workspace=ws, seed=account).select_related("run").order_by("-computed_at"):
        out.setdefault(r.direction, r)
    return out


def _entries(result: WtfResult, name: str):
    return (
        result.entries.filter(list=name)
        .select_related("account")
        .only("rank", "score", "ppr", "account_id", "account__twitter_id", "account__screen_name", "result_id")
        .order_by("rank")
    )


# named anew when its rows gained ``relative`` (issue 40): the name is part of the cache key (see _watchlist_groups)
@cached
def _account_panel_rows(ws: Workspace, account: Account, marker: str) -> dict:
    latest = _latest_results(ws, account)
    out = {}
    for key, direction, name in PANELS:
        r = latest.get(direction)
        out[key] = {"result": r, "rows": _rows(_entries(r, name)) if r is not None else []}
    return out


def wtf_account(ws: Workspace, account: Account, *, on_open: bool = True) -> dict:
    """The account page's two panels — ``lookalikes`` (similar accounts, walking the accounts it follows) and
    ``amplifiers`` (relevant accounts, walking its followers) — each ``{"result": WtfResult | None, "rows": [...],
    "previous": bool}`` from the newest result of that direction, and ``run``: a run computing this account now,
    if any. ``previous`` is true when ``run`` is going and the panel still shows an earlier run's result (each row
    has ``relative``: its score over the first row's).

    A direction without a stored result is computed when the page opens (``on_open``), if the workspace's
    follower graph is within ``SPREADWATCH_WTF_ON_OPEN_EDGES`` follows: its ``result`` is then an unsaved
    ``WtfResult`` (``pk`` None, no run), kept in the data-version cache. ``on_open`` says what happened:
    ``{"edges", "budget", "computed"}`` (``edges``: the graph's follows, counted up to ``budget + 1``), or None
    when every panel had a stored result or ``on_open`` is false."""
    panels = _account_panel_rows(ws, account, wtf_marker(ws))
    run = wtf_active_run(ws, account=account)
    out: dict = {"run": run, "on_open": None}
    missing = [key for key, panel in panels.items() if panel["result"] is None]
    budget = int(settings.SPREADWATCH_WTF_ON_OPEN_EDGES)
    if missing and on_open and budget > 0:
        now = _panels_on_open(ws, account, budget)
        out["on_open"] = {"edges": now["edges"], "budget": budget, "computed": now["panels"] is not None}
        if now["panels"] is not None:
            panels = panels | {key: now["panels"][key] for key in missing}
    for key, panel in panels.items():
        r = panel["result"]
        out[key] = panel | {"previous": run is not None and r is not None and r.run_id != run.pk}
    return out


@cached
def _panels_on_open(ws: Workspace, account: Account, budget: int) -> dict:
    """Both panels computed now (:func:`monitor.algorithms.wtf_graph.compute_on_open`): ``{"edges": follows of the
    graph, "panels": {key: {"result", "rows"}} or None beyond the budget}``, once per data version."""
    from ..algorithms.wtf_graph import DEFAULT_CIRCLE, DEFAULT_MAX_ITER, DEFAULT_TOP, compute_on_open

    got = compute_on_open(ws, account, max_edges=budget)
    if got.results is None:
        return {"edges": got.n_edges, "panels": None}
    listed = {int(a) for r in got.results.values() for accounts, _, _ in r.lists.values() for a in accounts.tolist()}
    names = {a.pk: a for a in Account.objects.filter(pk__in=listed).only("pk", "twitter_id", "screen_name")}
    computed_at = timezone.now()
    panels = {}
    for key, direction, name in PANELS:
        s = got.results[direction]
        result = WtfResult(
            workspace=ws,
            seed=account,
            direction=direction,
            circle=DEFAULT_CIRCLE,
            top=DEFAULT_TOP,
            in_graph=s.in_graph,
            circle_size=s.circle_size,
            ppr_iterations=s.ppr_iterations,
            ppr_converged=s.ppr_converged,
            money_iterations=s.money_iterations,
            money_converged=s.money_converged,
            max_iter=DEFAULT_MAX_ITER,
            n_nodes=got.n_nodes,
            n_edges=got.n_edges,
            fingerprint=got.fingerprint,
            backend="cpu",
            computed_at=computed_at,
        )
        accounts, scores, ppr = s.lists.get(name, ((), (), ()))
        entries = [
            _Entry(rank, names[int(a)], float(sc), float(pr))
            for rank, (a, sc, pr) in enumerate(zip(list(accounts), list(scores), list(ppr), strict=True), start=1)
        ]
        panels[key] = {"result": result, "rows": _rows(entries)}
    log.info("wtf: account %s's panels computed on open in %.3f s (%d follows)", account.pk, got.seconds, got.n_edges)
    return {"edges": got.n_edges, "panels": panels}


class _Entry(NamedTuple):
    """A row computed on open, shaped as a stored ``WtfEntry`` for :func:`_rows`."""

    rank: int
    account: Account
    score: float
    ppr: float

    @property
    def account_id(self) -> int:
        return self.account.pk


@cached
def _account_lists(ws: Workspace, account: Account, marker: str) -> list[dict]:
    out = []
    for direction, r in sorted(_latest_results(ws, account).items()):
        out.append(
            {
                "result": r,
                "direction": direction,
                "relevance": _rows(_entries(r, "relevance")),
                "similarity": _rows(_entries(r, "similarity")),
            }
        )
    return out


def wtf_account_lists(ws: Workspace, account: Account) -> list[dict]:
    """Every list of the account's newest result in each direction (the API and the downloads): ``[{"result",
    "direction", "relevance": rows, "similarity": rows}, ...]``, ``followers`` before ``follows``."""
    return _account_lists(ws, account, wtf_marker(ws))


def wtf_active_run(ws: Workspace, *, account: Account | None = None, publisher: Account | None = None):
    """The newest queued or running WTF run of ``account`` (among its ``accounts``) or of ``publisher``'s watch
    list; None when none is going."""
    runs = ComputeRun.objects.filter(workspace=ws, algorithm="wtf", status__in=ACTIVE).order_by("-created_at")
    for r in runs[:RECENT_RUNS]:
        if account is not None and str(account.twitter_id) in r.params.get("accounts", ()):
            return r
        if publisher is not None and r.params.get("publisher") == str(publisher.twitter_id):
            return r
    return None


def wtf_run_progress(run: ComputeRun) -> dict:
    """A WTF run's progress as the pages' poller (``progress.js``) reads it."""
    return {
        "run": run.pk,
        "status": run.status,
        "status_display": run.get_status_display(),
        "percent": round(100.0 * run.progress, 1),
        "stage": "waiting for the workspace's earlier runs: queued as soon as one of them ends"
        if run.status == ComputeRun.Status.WAITING
        else f"{run.batches_done} of {run.n_batches} batch{'es' if run.n_batches != 1 else ''} of seeds done",
        "active": run.is_active,
    }


def _watchlist_runs(ws: Workspace, publisher: Account) -> tuple[ComputeRun | None, ComputeRun | None]:
    """The run whose watch list is shown — the newest that walks the spreaders' followers and has ended, else (a
    first run still going) the newest such run — and the newest run going now (one query). While a recompute runs,
    the list shown is the previous run's, named as such, not the new run's half-filled one."""
    runs = ComputeRun.objects.filter(workspace=ws, algorithm="wtf", params__publisher=str(publisher.twitter_id))
    ended = newest = active = None
    for r in runs.order_by("-created_at")[:RECENT_RUNS]:
        if active is None and r.status in ACTIVE:
            active = r
        if r.params.get("direction") in ("followers", "both"):
            newest = newest or r
            if ended is None and r.status not in ACTIVE:
                ended = r
    return ended or newest, active


# the function's name is part of its cache key: named anew when what it returns changed (issue 40 added the new and
# already-spreading groups, the spreaders not converged, the run of each result), so a week-long cache entry that
# the previous code wrote, without those keys, is never read by this code
@cached
def _watchlist_groups(ws: Workspace, publisher: Account, run: ComputeRun, marker: str) -> dict:
    seeds: list[int] = []
    for params in ComputeBatch.objects.filter(run=run).order_by("index").values_list("params", flat=True):
        seeds += [int(s) for s in params.get("seeds", ())]
    accounts = Account.objects.only("twitter_id", "screen_name").in_bulk(seeds)
    results = {
        r.seed_id: r
        for r in WtfResult.objects.filter(
            workspace=ws, seed_id__in=seeds, direction="followers", circle=run.params["circle"], top=run.params["top"]
        )
    }
    spreaders = [
        {
            "rank": i + 1,
            "account": s,
            "twitter_id": accounts[s].twitter_id,
            "screen_name": accounts[s].screen_name,
            "computed": s in results,
            "in_graph": s in results and results[s].in_graph,
        }
        for i, s in enumerate(seeds)
        if s in accounts
    ]
    by_pk = {sp["account"]: sp for sp in spreaders}
    found: dict[int, dict] = {}
    entries = (
        WtfEntry.objects.filter(result__in=list(results.values()), list="relevance")
        .exclude(account_id=publisher.pk)
        .select_related("account", "result")
        .order_by("result__seed_id", "rank")
    )
    for e in entries:
        row = found.setdefault(
            e.account_id,
            {
                "account": e.account_id,
                "twitter_id": e.account.twitter_id,
                "screen_name": e.account.screen_name,
                "score": 0.0,
                "pointed_by": [],
            },
        )
        row["score"] += e.score
        sp = by_pk[e.result.seed_id]
        row["pointed_by"].append(
            {"twitter_id": sp["twitter_id"], "screen_name": sp["screen_name"], "rank": e.rank, "score": e.score}
        )
    spreading = set(
        CascadeInfluence.objects.of_accounts(list(found), ws.pk)
        .filter(publisher=publisher)
        .exclude(role=CascadeInfluence.Role.PUBLISHER)
        .values_list("account_id", flat=True)
        .distinct()
    )
    # by the stored float, never a rounded one: equal counts and equal scores (only those) go by Twitter id
    rows = sorted(found.values(), key=lambda r: (-len(r["pointed_by"]), -r["score"], r["twitter_id"]))
    for r in rows:
        r["spreading"] = r["account"] in spreading
        r["pointed_by"].sort(key=lambda p: (p["rank"], p["twitter_id"]))
    return {
        "params": run.params,
        "spreaders": spreaders,
        "rows": rows,
        # the page's two groups: an account that already spreads the publisher is no longer one to watch for
        "new": [r for r in rows if not r["spreading"]],
        "already": [r for r in rows if r["spreading"]],
        "computed_at": max((r.computed_at for r in results.values()), default=None),
        "result_runs": {seed: r.run_id for seed, r in results.items()},
        # spreaders whose walk stopped at the iteration cap: the page says so and which parameter to raise
        "not_converged": sum(1 for r in results.values() if r.in_graph and not (r.ppr_converged and r.money_converged)),
    }


def wtf_watchlist(ws: Workspace, publisher: Account) -> dict:
    """A publisher's **watch list**: the union of the likely next amplifiers of its top spreaders (the newest
    ended run of its watch list; a first run's while it goes), each with the spreaders whose list holds it
    (``pointed_by``: their rank in that list and score), the summed score, and ``spreading``: whether it has already
    spread one of the publisher's cascades. ``rows`` (every account) are ordered by how many spreaders point to
    them, then summed score, then Twitter id; ``new`` and ``already`` split them by ``spreading``. ``run`` is the
    run shown (None: never computed), ``active`` a run of it going now, ``previous`` true when the list shown is an
    earlier run's while ``active`` recomputes it, and then ``recomputed`` how many of its spreaders' lists ``active``
    has already replaced; ``not_converged`` counts the spreaders whose walk stopped at the iteration cap."""
    run, active = _watchlist_runs(ws, publisher)
    if run is None:
        return {
            "run": None,
            "active": active,
            "previous": False,
            "recomputed": 0,
            "params": {},
            "spreaders": [],
            "rows": [],
            "new": [],
            "already": [],
            "computed_at": None,
            "not_converged": 0,
        }
    # the run's batches are part of the key through the marker: each stored batch moves the newest result's time
    wl = _watchlist_groups(ws, publisher, run, wtf_marker(ws))
    previous = active is not None and active.pk != run.pk
    recomputed = sum(1 for r in wl["result_runs"].values() if previous and r == active.pk)
    return wl | {"run": run, "active": active, "previous": previous, "recomputed": recomputed}


def wtf_watchlist_publishers(ws: Workspace) -> list[Account]:
    """The publishers of the workspace that have a watch list (a WTF run of their spreaders)."""
    tids = {
        p.get("publisher")
        for p in ComputeRun.objects.filter(workspace=ws, algorithm="wtf").values_list("params", flat=True)
        if p.get("publisher")
    }
    return list(Account.objects.filter(workspace=ws, twitter_id__in=[int(t) for t in tids]).order_by("twitter_id"))


def wtf_watchlist_rule(ws: Workspace, user, publisher: Account):
    """The user's alert rule on ``publisher``'s watch list (the kind the watch list's button subscribes to), if any."""
    from ..alerts.kinds import WATCHLIST_KIND
    from ..alerts.models import AlertRule

    return AlertRule.objects.filter(workspace=ws, owner=user, kind=WATCHLIST_KIND, publisher=publisher).first()
