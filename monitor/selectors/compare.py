"""Compare publishers: two to five publishers' top spreaders side by side, how much their top N overlap, and the
accounts in the top N of two or more of them.

Each publisher's column is its ranking of spreaders (:func:`.rankings.ranking` with ``spreaders_only``: the
publisher's own row left out, as on its page) over the same window and aggregate. The overlap of two publishers
is the number of accounts in both top N lists and its Jaccard index, |A ∩ B| / |A ∪ B|. A shared account's
score under a publisher whose top N it missed is read too (one grouped query), so the table says how far it
was from that list rather than leaving a blank."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

from django.db.models import Q, Sum

from ..models import Account, DailyInfluence, Publisher, Workspace
from ..numbers import account_display
from .rankings import AGGREGATES, RankingPage, ranking
from .windows import ALL_TIME, Window

MIN_PUBLISHERS = 2
MAX_PUBLISHERS = 5


class CompareError(ValueError):
    """The publishers asked for cannot be compared: too few, too many, repeated, or not publishers of the
    workspace. The message says which, in words for the page and the API."""


@dataclass
class Comparison:
    publishers: list[Account]
    columns: list[RankingPage]  # each publisher's top N spreaders, in the order asked
    top: int
    aggregate: str
    sizes: list[int]  # |top N| of each (fewer than N when a publisher has fewer spreaders)
    matrix: list[list[dict]]  # [i][j]: {"overlap", "jaccard"} (the diagonal: the list's own size, 1.0)
    pairs: list[dict]  # one per pair i < j: {"a", "b", "overlap", "jaccard"}
    shared: list[dict]  # in the top N of >= 2: account, twitter_id, screen_name, name, in_top, cells


def compare_publishers_get(ws: Workspace, twitter_ids: list[int], *, partial: bool = False) -> list[Account]:
    """The publishers of ``ws`` with these Twitter ids, in the order given; :class:`CompareError` when there
    are fewer than 2 (unless ``partial``: a list still being chosen) or more than 5, when one is repeated, or
    when one is not a publisher of the workspace."""
    if len(twitter_ids) < MIN_PUBLISHERS and not partial:
        raise CompareError(f"Choose at least {MIN_PUBLISHERS} publishers to compare.")
    if len(twitter_ids) > MAX_PUBLISHERS:
        raise CompareError(f"Compare at most {MAX_PUBLISHERS} publishers at once ({len(twitter_ids)} were chosen).")
    seen: set[int] = set()
    repeated = [t for t in twitter_ids if t in seen or seen.add(t)]
    if repeated:
        raise CompareError(f"Each publisher once: {', '.join(map(str, dict.fromkeys(repeated)))} was chosen twice.")
    found = {
        p.account.twitter_id: p.account
        for p in Publisher.objects.filter(workspace=ws, account__twitter_id__in=twitter_ids).select_related("account")
    }
    unknown = [t for t in twitter_ids if t not in found]
    if unknown:
        what = "is not a publisher" if len(unknown) == 1 else "are not publishers"
        raise CompareError(f"{', '.join(map(str, unknown))} {what} of this workspace.")
    return [found[t] for t in twitter_ids]


def publisher_choices(ws: Workspace) -> list[tuple[int, str | None]]:
    """(twitter id, screen name) of every publisher of ``ws``, by screen name then id: the compare page's
    picker (one query)."""
    return list(
        Publisher.objects.filter(workspace=ws)
        .order_by("account__screen_name", "account__twitter_id")
        .values_list("account__twitter_id", "account__screen_name")
    )


def compare_publishers(
    ws: Workspace,
    publishers: list[Account],
    *,
    window: Window = ALL_TIME,
    aggregate: str = "total",
    top: int = 10,
    labels: list[str] | None = None,
) -> Comparison:
    """``publishers`` (from :func:`compare_publishers_get`) compared over ``window`` and the tweets of ``labels``
    (None: every label): each one's top ``top`` spreaders by ``aggregate``, the overlap of those lists per pair,
    and the accounts in two or more of them."""
    if aggregate not in AGGREGATES:
        raise ValueError(f"aggregate must be one of {', '.join(AGGREGATES)}")
    if top < 1:
        raise ValueError("top must be at least 1")
    columns = [
        ranking(ws, publisher=p, aggregate=aggregate, window=window, labels=labels, limit=top, spreaders_only=True)
        for p in publishers
    ]
    tops = [{r["account"]: r for r in col.rows} for col in columns]
    sets = [set(t) for t in tops]
    n = len(publishers)

    def cell(i: int, j: int) -> dict:
        inter, union = len(sets[i] & sets[j]), len(sets[i] | sets[j])
        return {"overlap": inter, "jaccard": inter / union if union else None}

    matrix = [[cell(i, j) for j in range(n)] for i in range(n)]
    pairs = [{"a": publishers[i], "b": publishers[j], **matrix[i][j]} for i, j in combinations(range(n), 2)]

    counts: dict[int, int] = {}
    for s in sets:
        for pk in s:
            counts[pk] = counts.get(pk, 0) + 1
    shared_pks = [pk for pk, c in counts.items() if c >= 2]
    outside = _scores_outside(ws, publishers, columns, tops, shared_pks, window, aggregate, labels)
    accounts = {a.pk: a for a in Account.objects.filter(pk__in=shared_pks).only("twitter_id", "screen_name")}
    shared = []
    for pk in shared_pks:
        acc = accounts[pk]
        cells = []
        for i in range(n):
            row = tops[i].get(pk)
            if row is not None:
                cells.append({"rank": row["rank"], "score": row["score"], "in_top": True})
            else:
                cells.append({"rank": None, "score": outside.get((i, pk)), "in_top": False})
        shared.append(
            {
                "account": pk,
                "twitter_id": acc.twitter_id,
                "screen_name": acc.screen_name,
                "name": account_display(acc.twitter_id, acc.screen_name),
                "in_top": counts[pk],
                "cells": cells,
            }
        )
    # in the most lists first, then by the best mean rank among the lists it is in, then by id
    shared.sort(
        key=lambda r: (
            -r["in_top"],
            sum(c["rank"] for c in r["cells"] if c["in_top"]) / r["in_top"],
            r["twitter_id"],
        )
    )
    return Comparison(
        publishers=publishers,
        columns=columns,
        top=top,
        aggregate=aggregate,
        sizes=[len(s) for s in sets],
        matrix=matrix,
        pairs=pairs,
        shared=shared,
    )


def _scores_outside(
    ws: Workspace,
    publishers: list[Account],
    columns: list[RankingPage],
    tops: list[dict],
    shared_pks: list[int],
    window: Window,
    aggregate: str,
    labels: list[str] | None,
) -> dict[tuple[int, int], float]:
    """(publisher index, account pk) -> the account's ``aggregate`` score for a publisher whose top N it is not
    in (absent: it spread none of that publisher's tweets in the window). One grouped query."""
    wanted = [(i, pk) for pk in shared_pks for i in range(len(publishers)) if pk not in tops[i]]
    if not wanted:
        return {}
    index = {p.pk: i for i, p in enumerate(publishers)}
    q = Q(workspace=ws, publisher__in=[publishers[i].pk for i, _ in wanted], account__in=shared_pks) & window.filter()
    if labels:
        q &= Q(label__in=labels)
    rows = (
        DailyInfluence.objects.filter(q)
        .values("publisher", "account")
        .annotate(total=Sum("influence"), cascades=Sum("cascades"))
    )
    out: dict[tuple[int, int], float] = {}
    want = set(wanted)
    for r in rows:
        key = (index[r["publisher"]], r["account"])
        if key not in want:
            continue
        total, tv = float(r["total"] or 0.0), int(r["cascades"] or 0)
        tweets = columns[key[0]].tweets
        out[key] = {
            "total": total,
            "cascades": float(tv),
            "mean": total / tweets if tweets else 0.0,
            "participation": total / tv if tv else 0.0,
        }[aggregate]
    return out
