"""The ranking page, of one publisher's spreaders or over all publishers: label filter, sortable columns, each
account's share of the reach, the top N's rank over time and the split of the reach by truth label.

The cut: ``monitor.selectors.ranking_page`` reads everything the page shows (rows and shares, the split, the
chart's data); this module reads the form, builds the page's links from the query string (presentation: each
link is the current query with one change) and renders."""

from __future__ import annotations

import datetime as dt

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from monitor import selectors
from monitor.cache import data_version
from monitor.models import Label

from ..forms import RankingForm
from ..forms_wtf import WatchListForm
from .base import workspace_context

# rows per page: the size the warm-up after a compute run reads too (selectors.ranking_page_view)
PAGE = selectors.RANKING_PAGE_SIZE


def window_from_form(form: RankingForm, span: tuple[dt.date | None, dt.date | None]) -> tuple[selectors.Window, str]:
    """The window the ranking form selected (``selectors.window_for_preset``), and its preset."""
    d = form.cleaned_data
    return selectors.window_for_preset(d.get("window") or "all", span, d.get("start"), d.get("end"))


def _query_with(params, drop: tuple[str, ...] = ("page",), **changes) -> str:
    """The GET parameters, urlencoded, less ``drop``, with ``changes`` (``None`` removes one)."""
    q = params.copy()
    for name in drop:
        q.pop(name, None)
    for name, value in changes.items():
        if value is None:
            q.pop(name, None)
        else:
            q[name] = value
    return q.urlencode()


def _hidden(params, skip: tuple[str, ...]) -> list[tuple[str, str]]:
    """(name, value) pairs of the GET parameters other than ``skip``: a second form's hidden inputs, so it
    keeps what the first one chose."""
    return [(k, v) for k in params if k not in skip for v in params.getlist(k) if v != ""]


def _links(params, split: list[dict]) -> dict:
    """The page's links, each the current query with one change; each split row gets its ``href`` (filter by
    that label)."""
    for r in split:
        r["href"] = "?" + _query_with(params, labels=r["label"])
    return {
        "query": _query_with(params),
        "sort_links": {
            key: "?"
            + (
                _query_with(params, sort=None, aggregate=key)
                if key in selectors.AGGREGATES
                else _query_with(params, sort=key)
            )
            for key in selectors.SORTS
        },
        "history_link": "?" + _query_with(params, history="1"),
        "chart_hidden": _hidden(params, skip=("top", "bucket", "page")),
        "filter_hidden": _hidden(params, skip=tuple(f for f in RankingForm.base_fields if f not in ("top", "bucket"))),
        "reset_labels": "?" + _query_with(params, drop=("page", "labels")),
        "widen_window": "?" + _query_with(params, drop=("page", "start", "end"), window="all"),
        "false_link": "?" + _query_with(params, labels=Label.FALSE),
    }


@login_required
@require_GET
def ranking(request: HttpRequest, ws: str, publisher: int | None = None) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    account = selectors.account_get(workspace, publisher) if publisher is not None else None
    # the defaults are bound too, so that the selects show them
    data = request.GET.copy()
    # (as selectors.ranking_page_view opens it: the warm-up after a compute run stores what these defaults read)
    for name, default in (
        ("aggregate", "total"),
        ("window", "all"),
        ("top", str(selectors.RANKING_TOP)),
        ("bucket", "auto"),
    ):
        data.setdefault(name, default)
    form = RankingForm(data)
    if not form.is_valid():
        return render(
            request,
            "frontend/ranking.html",
            workspace_context(request, workspace, form=form, publisher=account, page=None),
            status=400,
        )
    d = form.cleaned_data
    span = selectors.data_span(workspace, account)
    window, preset = window_from_form(form, span)
    aggregate = d.get("aggregate") or "total"
    sort = d.get("sort") or aggregate
    labels = list(d.get("labels") or [])
    page_no = d.get("page") or 1
    top_n = d.get("top") or selectors.RANKING_TOP
    shown = selectors.ranking_page(
        workspace,
        publisher=account,
        window=window,
        span=span,
        aggregate=aggregate,
        sort=sort,
        labels=labels,
        page_no=page_no,
        page_size=PAGE,
        top=top_n,
        bucket=d.get("bucket") or "auto",
        history_requested=bool(request.GET.get("history")),
    )
    ctx = workspace_context(
        request,
        workspace,
        form=form,
        publisher=account,
        page=shown.page,
        own_reach=shown.own_reach,
        window=window,
        preset=preset,
        span=span,
        page_no=page_no,
        n_pages=shown.n_pages,
        sort=sort,
        labels=labels,
        label_names=shown.label_names,
        reach=shown.reach,
        split=shown.split,
        split_reach=shown.split_reach,
        false_top=shown.false_top,
        false_tweets=shown.false_tweets,
        history=shown.history,
        history_deferred=shown.history_deferred,
        chart=shown.chart,
        top_n=top_n,
        bucket=shown.bucket,
        **_links(request.GET, shown.split),
        # the results are rendered once per query and data version (rendering is most of a warm page's time)
        fragment_key=data_version(workspace),
    )
    if account is not None:  # a publisher's page: its watch list (who amplifies whom, docs/wtf.md)
        watchlist = selectors.wtf_watchlist(workspace, account)
        ctx |= {
            "watchlist": watchlist,
            # the alert rule goes with a computed list (the page offers no rule before)
            "watchlist_rule": selectors.wtf_watchlist_rule(workspace, request.user, account)
            if watchlist["run"]
            else None,
            "watchlist_form": WatchListForm(),
        }
    return render(request, "frontend/ranking.html", ctx)
