"""Downloads: the ranking (all publishers or one) as CSV or JSON, a publisher's amplification network and a
cascade's spreading graph as GEXF or GraphML. Every response streams (``monitor.exports`` yields the text a
chunk at a time). The ranking exports take the ranking page's GET parameters (``aggregate``, ``window`` with
``start``/``end`` for ``custom``); the network takes the window and ``max_cascades``."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, StreamingHttpResponse
from django.views.decorators.http import require_GET

from monitor import exports, selectors

from ..forms import RankingForm
from .rankings import window_from_form

MAX_CASCADES = 2000
MAX_CASCADES_LIMIT = 50_000


class TableFormat:
    """URL converter: ``csv`` or ``json``."""

    regex = "csv|json"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


class GraphFormat(TableFormat):
    """URL converter: ``gexf`` or ``graphml``."""

    regex = "gexf|graphml"


def stream(chunks, *, fmt: str, name: str) -> StreamingHttpResponse:
    r = StreamingHttpResponse(chunks, content_type=exports.CONTENT_TYPES[fmt])
    r["Content-Disposition"] = f'attachment; filename="{name}"'
    r["Cache-Control"] = "private, no-store"
    return r


def _bad(form: RankingForm) -> HttpResponse:
    """400 naming each field that is wrong (``window`` for a window whose start is after its end)."""
    lines = []
    for name, errors in form.errors.items():
        for e in errors:
            lines.append(f"{'window' if name == '__all__' else name}: {e}")
    return HttpResponseBadRequest("\n".join(lines) + "\n", content_type="text/plain; charset=utf-8")


def _window(request: HttpRequest, workspace, account) -> tuple[selectors.Window, str] | HttpResponse:
    """The ranking form read from the query string, or a 400 response."""
    data = request.GET.copy()
    data.setdefault("aggregate", "total")
    data.setdefault("window", "all")
    form = RankingForm(data)
    if not form.is_valid():
        return _bad(form)
    window, _preset = window_from_form(form, selectors.data_span(workspace, account))
    request.ranking_filters = {  # the page's other filters, so a download is what the page shows
        "labels": list(form.cleaned_data.get("labels") or []) or None,
        "sort": form.cleaned_data.get("sort") or None,
    }
    return window, form.cleaned_data.get("aggregate") or "total"


@login_required
@require_GET
def ranking_export(request: HttpRequest, ws: str, fmt: str, publisher: int | None = None) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    account = selectors.account_get(workspace, publisher) if publisher is not None else None
    got = _window(request, workspace, account)
    if isinstance(got, HttpResponse):
        return got
    window, aggregate = got
    writer = exports.ranking_csv if fmt == "csv" else exports.ranking_json
    chunks = writer(workspace, publisher=account, aggregate=aggregate, window=window, **request.ranking_filters)
    parts = ["ranking"] if account is None else ["publisher", account.twitter_id, "ranking"]
    name = exports.filename(workspace, *parts, aggregate, window=window, ext=fmt)
    return stream(chunks, fmt=fmt, name=name)


@login_required
@require_GET
def publisher_network(request: HttpRequest, ws: str, publisher: int, fmt: str) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    account = selectors.account_get(workspace, publisher)
    got = _window(request, workspace, account)
    if isinstance(got, HttpResponse):
        return got
    window, _aggregate = got
    try:
        max_cascades = int(request.GET.get("max_cascades") or MAX_CASCADES)
    except ValueError:
        max_cascades = 0
    if not 1 <= max_cascades <= MAX_CASCADES_LIMIT:
        return HttpResponseBadRequest(
            f"max_cascades: an integer from 1 to {MAX_CASCADES_LIMIT}\n", content_type="text/plain; charset=utf-8"
        )
    writer = exports.publisher_network_gexf if fmt == "gexf" else exports.publisher_network_graphml
    chunks = writer(workspace, account, window=window, max_cascades=max_cascades)
    name = exports.filename(workspace, "publisher", account.twitter_id, "network", window=window, ext=fmt)
    return stream(chunks, fmt=fmt, name=name)


@login_required
@require_GET
def tweet_graph(request: HttpRequest, ws: str, tweet_id: int, fmt: str) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    tweet = selectors.tweet_get(workspace, tweet_id)
    writer = exports.cascade_gexf if fmt == "gexf" else exports.cascade_graphml
    return stream(writer(tweet), fmt=fmt, name=exports.filename(workspace, "tweet", tweet.tweet_id, ext=fmt))
