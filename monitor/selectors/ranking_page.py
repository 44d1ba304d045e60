"""What the ranking page shows, read in one call: the page of ranked accounts with their share of the reach,
the split of the reach by truth label, the top spreaders of false claims, and the rank chart's data.

The page's links (sorting, filters, pagination) are not here: they are built from the request's query string
by the view (``frontend.views.rankings``), which is presentation."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from ..models import Account, Label, Workspace
from ..numbers import account_display
from .history import rank_history
from .rankings import RankingPage, ranking, reach_by_label, top_spreaders
from .windows import Window, bucket_for, data_span, window_for_preset

#: rows per ranking page (the page's ``?page=``; the API pages by its own ``page_size``)
RANKING_PAGE_SIZE = 50
#: the rank chart's accounts when the page's form does not say (``?top=``)
RANKING_TOP = 10


@dataclass
class RankingPageData:
    """Everything the ranking page renders besides its links."""

    page: RankingPage  # rows carry ``share``: their total over ``reach``
    n_pages: int
    own_reach: dict | None  # one publisher: its tweets (T) and their reach, apart from its spreaders' ranking
    label_names: list[str]  # the names of the filter's labels
    reach: float  # the reach the shares divide: of the filter's labels
    split: list[dict]  # reach_by_label rows with ``name`` and ``selected`` (in the filter)
    split_reach: float
    false_top: list[dict]
    false_tweets: int
    bucket: str
    history: dict | None  # rank_history, each series with ``cells``: (rank, score) per period
    history_deferred: bool  # the chart is drawn on request (all publishers), and there is something to draw
    chart: dict | None  # the chart's data island


def ranking_page(
    ws: Workspace,
    *,
    publisher: Account | None,
    window: Window,
    span: tuple[dt.date | None, dt.date | None],
    aggregate: str,
    sort: str,
    labels: list[str],
    page_no: int,
    page_size: int,
    top: int,
    bucket: str,
    history_requested: bool,
) -> RankingPageData:
    """The ranking of ``publisher`` (None: every publisher) over ``window`` for the page ``page_no``, with what
    the page draws beside it (``bucket``: as the form asked, ``auto`` included).

    The ranking, the chart and the false claims' spreaders are of the accounts that spread the tweets, as on the
    overview: each publisher's own influence on its tweets is their reach (every spreader's share divides it).
    For one publisher that reach is shown apart as ``own_reach`` rather than as "#1 with 100 %"; across
    publishers a publisher ranks by what it spread of the others' tweets."""
    spreaders_only = True
    page = ranking(
        ws,
        publisher=publisher,
        aggregate=aggregate,
        window=window,
        labels=labels or None,
        sort=sort,
        limit=page_size,
        offset=(page_no - 1) * page_size,
        spreaders_only=spreaders_only,
    )
    # the split of the reach by label (whatever the filter), and the reach the shares divide: the filter's labels
    label_names = dict(Label.choices)
    split = [
        {**r, "name": label_names.get(r["label"], r["label"]), "selected": not labels or r["label"] in labels}
        for r in reach_by_label(ws, publisher=publisher, window=window)
    ]
    reach = sum(r["reach"] or 0.0 for r in split if not labels or r["label"] in labels)
    for r in page.rows:
        r["share"] = r["total"] / reach if reach else None
    bucket = bucket_for(window, span, bucket)
    history = None
    # across all publishers the chart ranks every account in every period (2.8 s at 1M daily rows): drawn on
    # request there, always for one publisher (tens of ms)
    history_deferred = publisher is None and not history_requested
    if page.total_rows and not history_deferred:
        history = rank_history(
            ws,
            publisher=publisher,
            aggregate=aggregate,
            window=window,
            labels=labels or None,
            top=top,
            bucket=bucket,
            spreaders_only=spreaders_only,
        )
    false_tweets = sum(r["tweets"] or 0 for r in split if r["label"] == Label.FALSE)
    false_top = (
        top_spreaders(
            ws, publisher=publisher, window=window, labels=[Label.FALSE], limit=5, spreaders_only=spreaders_only
        )
        if false_tweets
        else []
    )
    return RankingPageData(
        page=page,
        n_pages=max(1, -(-page.total_rows // page_size)),
        own_reach=(
            {"tweets": page.tweets, "reach": reach, "per_tweet": reach / page.tweets if page.tweets else None}
            if publisher is not None
            else None
        ),
        label_names=[label_names[k] for k in labels],
        reach=reach,
        split=split,
        split_reach=sum(r["reach"] or 0.0 for r in split),
        false_top=false_top,
        false_tweets=false_tweets,
        bucket=bucket,
        history=history,
        history_deferred=history_deferred and bool(page.total_rows),
        chart=_chart(history, aggregate, page.unit),
    )


def ranking_page_view(
    ws: Workspace,
    *,
    publisher: Account | None,
    aggregate: str = "total",
    sort: str | None = None,
    preset: str = "all",
    page_no: int = 1,
) -> RankingPageData:
    """The ranking page as a link with only these parameters opens it (no labels, the chart's defaults): what
    the warm-up after a compute run reads (``monitor.services.warmup``), with the same arguments as the view
    (``frontend.views.rankings``) passes for that query string, so the page finds what the warm-up stored."""
    span = data_span(ws, publisher)
    window, _ = window_for_preset(preset, span)
    return ranking_page(
        ws,
        publisher=publisher,
        window=window,
        span=span,
        aggregate=aggregate,
        sort=sort or aggregate,
        labels=[],
        page_no=page_no,
        page_size=RANKING_PAGE_SIZE,
        top=RANKING_TOP,
        bucket="auto",
        history_requested=False,
    )


def _chart(history: dict | None, aggregate: str, unit: str) -> dict | None:
    """The rank chart's data island (and each series' ``cells`` for the table beside it), or None when there is
    nothing to draw."""
    if not history or not history["series"]:
        return None
    for s in history["series"]:
        s["cells"] = list(zip(s["ranks"], s["scores"], strict=True))
    return {
        "periods": [p.isoformat() for p in history["periods"]],
        "bucket": history["bucket"],
        "aggregate": aggregate,
        "unit": unit,
        "ranked": history["ranked"],
        "series": [
            {
                "name": account_display(s["twitter_id"], s["screen_name"]),
                "rank": s["rank"],
                "ranks": s["ranks"],
                "scores": s["scores"],
            }
            for s in history["series"]
        ],
    }
