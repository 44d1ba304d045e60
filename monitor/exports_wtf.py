"""Who amplifies whom's downloads (docs/wtf.md): an account's lists and a publisher's watch list, as CSV or JSON.
Generators of ``str`` chunks like :mod:`monitor.exports` (the lists are at most a few thousand rows, so one chunk
each); Twitter ids are strings in JSON (JavaScript loses digits past 2**53)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator

from . import selectors
from .exports import csv_text
from .models import Account, Workspace

ACCOUNT_COLUMNS = (
    "seed_twitter_id",
    "direction",
    "list",
    "rank",
    "twitter_id",
    "screen_name",
    "score",
    "ppr",
    "circle",
    "top",
    "computed_at",
    "method",
)
WATCHLIST_COLUMNS = ("rank", "twitter_id", "screen_name", "spreaders", "score", "already_spreading", "pointed_by")


def _csv(header: tuple[str, ...], rows) -> Iterator[str]:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    yield buf.getvalue()


def _result_facts(r) -> dict:
    return {
        "direction": r.direction,
        "circle": r.circle,
        "top": r.top,
        "in_graph": r.in_graph,
        "circle_size": r.circle_size,
        "ppr_iterations": r.ppr_iterations,
        "ppr_converged": r.ppr_converged,
        "money_iterations": r.money_iterations,
        "money_converged": r.money_converged,
        "max_iter": r.max_iter,
        "method": r.method,
        "epsilon": r.epsilon,
        "walks": r.walks,
        "computed_at": r.computed_at.isoformat(),
        "run": r.run_id,
    }


def _entry(row: dict) -> dict:
    return {
        "rank": row["rank"],
        "twitter_id": str(row["twitter_id"]),
        "screen_name": row["screen_name"],
        "score": row["score"],
        "ppr": row["ppr"],
    }


def account_data(ws: Workspace, account: Account) -> dict:
    """The account's newest result in each direction with both lists (the JSON download and the API)."""
    return {
        "account": str(account.twitter_id),
        "screen_name": account.screen_name,
        "results": [
            _result_facts(d["result"])
            | {"relevance": [_entry(r) for r in d["relevance"]], "similarity": [_entry(r) for r in d["similarity"]]}
            for d in selectors.wtf_account_lists(ws, account)
        ],
    }


def account_csv(ws: Workspace, account: Account) -> Iterator[str]:
    rows = []
    for d in selectors.wtf_account_lists(ws, account):
        r = d["result"]
        for name in ("relevance", "similarity"):
            rows += [
                (
                    account.twitter_id,
                    r.direction,
                    name,
                    e["rank"],
                    e["twitter_id"],
                    csv_text(e["screen_name"] or ""),
                    repr(e["score"]),
                    repr(e["ppr"]),
                    r.circle,
                    r.top,
                    r.computed_at.isoformat(),
                    r.method,
                )
                for e in d[name]
            ]
    return _csv(ACCOUNT_COLUMNS, rows)


def account_json(ws: Workspace, account: Account) -> Iterator[str]:
    yield json.dumps(account_data(ws, account), indent=1)


def watchlist_data(ws: Workspace, publisher: Account) -> dict:
    """The publisher's watch list (the JSON download and the API)."""
    wl = selectors.wtf_watchlist(ws, publisher)
    return {
        "publisher": str(publisher.twitter_id),
        "run": wl["run"].pk if wl["run"] else None,
        "params": wl["params"],
        "computed_at": wl["computed_at"].isoformat() if wl["computed_at"] else None,
        "spreaders": [
            {k: str(s[k]) if k == "twitter_id" else s[k] for k in ("rank", "twitter_id", "screen_name", "computed")}
            for s in wl["spreaders"]
        ],
        "accounts": [
            {
                "rank": i + 1,
                "twitter_id": str(r["twitter_id"]),
                "screen_name": r["screen_name"],
                "score": r["score"],
                "already_spreading": r["spreading"],
                "pointed_by": [p | {"twitter_id": str(p["twitter_id"])} for p in r["pointed_by"]],
            }
            for i, r in enumerate(wl["rows"])
        ],
    }


def watchlist_csv(ws: Workspace, publisher: Account) -> Iterator[str]:
    rows = [
        (
            i + 1,
            r["twitter_id"],
            csv_text(r["screen_name"] or ""),
            len(r["pointed_by"]),
            repr(r["score"]),
            "yes" if r["spreading"] else "no",
            " ".join(f"{p['twitter_id']}:{p['rank']}" for p in r["pointed_by"]),
        )
        for i, r in enumerate(selectors.wtf_watchlist(ws, publisher)["rows"])
    ]
    return _csv(WATCHLIST_COLUMNS, rows)


def watchlist_json(ws: Workspace, publisher: Account) -> Iterator[str]:
    yield json.dumps(watchlist_data(ws, publisher), indent=1)
