"""The dashboard: small view functions over ``monitor.selectors``; writes go through ``monitor.services``."""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from monitor import selectors, services
from monitor.models import ComputeRun, Label

from .forms import RankingForm, RecomputeForm, UploadForm

PAGE = 50


def _ctx(request: HttpRequest, ws, **kw) -> dict:
    return {"ws": ws, "workspaces": selectors.workspaces_for_user(request.user), **kw}


@login_required
def home(request: HttpRequest) -> HttpResponse:
    wss = list(selectors.workspaces_for_user(request.user))
    if len(wss) == 1:
        return redirect("overview", ws=wss[0].slug)
    return render(request, "frontend/home.html", {"workspaces": wss})


@login_required
@require_GET
def overview(request: HttpRequest, ws: str) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    lo, hi = selectors.data_span(workspace)
    ctx = _ctx(
        request,
        workspace,
        counts=selectors.workspace_counts(workspace),
        publishers=selectors.publishers_summary(workspace, limit=25),
        weeks=selectors.publishers_reach_weeks(workspace, 10, end=hi),
        top=selectors.ranking(workspace, limit=10),
        collections=selectors.collections_list(workspace, limit=5),
        runs=selectors.runs_list(workspace, limit=5),
        alerts=_unread_alerts(request, workspace),
        span=(lo, hi),
    )
    return render(request, "frontend/overview.html", ctx)


def _unread_alerts(request: HttpRequest, workspace) -> dict | None:
    """The unread alerts of the user's rules in this workspace, and the inbox's URL (``None`` until the inbox
    page exists); ``None`` when the alerts app is not installed."""
    from django.apps import apps
    from django.urls import NoReverseMatch

    if not apps.is_installed("monitor.alerts"):
        return None
    from monitor.alerts.models import Alert

    unread = Alert.objects.filter(workspace=workspace, rule__owner=request.user, read_at__isnull=True).count()
    try:
        url = reverse("alerts", kwargs={"ws": workspace.slug})
    except NoReverseMatch:
        url = None
    return {"unread": unread, "url": url}


def _window_from(form: RankingForm, span: tuple[dt.date | None, dt.date | None]) -> tuple[selectors.Window, str]:
    """The selected time window. Presets count back from the newest day with data (collections are often
    historical, so 'the last 30 days' of the calendar would be empty)."""
    d = form.cleaned_data
    _lo, hi = span
    preset = d.get("window") or "all"
    if preset == "custom":
        return selectors.Window(d.get("start"), d.get("end")), "custom"
    if preset != "all" and hi is not None:
        days = {"7d": 7, "30d": 30, "90d": 90, "365d": 365}[preset]
        return selectors.Window(hi - dt.timedelta(days=days - 1), hi), preset
    return selectors.Window(), "all"


def _bucket_for(window: selectors.Window, span: tuple[dt.date | None, dt.date | None], asked: str) -> str:
    """The rank chart's period: as asked, or (``auto``) days for up to 6 weeks, weeks up to about a year and
    a half, else months."""
    if asked in selectors.BUCKETS:
        return asked
    lo, hi = window.start or span[0], window.end or span[1]
    days = (hi - lo).days + 1 if lo and hi else 0
    return "day" if days <= 42 else "week" if days <= 550 else "month"


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


@login_required
@require_GET
def ranking(request: HttpRequest, ws: str, publisher: int | None = None) -> HttpResponse:
    """A ranking (of one publisher's spreaders, or over all publishers): label filter, sortable columns, each
    account's share of the reach, the top N's rank over time and the split of the reach by truth label."""
    workspace = selectors.workspace_for_user(request.user, ws)
    account = selectors.account_get(workspace, publisher) if publisher is not None else None
    # the defaults are bound too, so that the selects show them
    data = request.GET.copy()
    for name, default in (("aggregate", "total"), ("window", "all"), ("top", "10"), ("bucket", "auto")):
        data.setdefault(name, default)
    form = RankingForm(data)
    if not form.is_valid():
        return render(
            request,
            "frontend/ranking.html",
            _ctx(request, workspace, form=form, publisher=account, page=None),
            status=400,
        )
    d = form.cleaned_data
    span = selectors.data_span(workspace, account)
    window, preset = _window_from(form, span)
    aggregate = d.get("aggregate") or "total"
    sort = d.get("sort") or aggregate
    labels = list(d.get("labels") or [])
    page_no = d.get("page") or 1
    page = selectors.ranking(
        workspace,
        publisher=account,
        aggregate=aggregate,
        window=window,
        labels=labels or None,
        sort=sort,
        limit=PAGE,
        offset=(page_no - 1) * PAGE,
    )
    # the split of the reach by label (whatever the filter), and the reach the shares divide: the filter's labels
    split = selectors.reach_by_label(workspace, publisher=account, window=window)
    reach = sum(r["reach"] or 0.0 for r in split if not labels or r["label"] in labels)
    for r in page.rows:
        r["share"] = r["total"] / reach if reach else None
    label_names = dict(Label.choices)
    params = request.GET
    for r in split:
        r["name"] = label_names.get(r["label"], r["label"])
        r["selected"] = not labels or r["label"] in labels
        r["href"] = "?" + _query_with(params, labels=r["label"])
    top_n = d.get("top") or 10
    bucket = _bucket_for(window, span, d.get("bucket") or "auto")
    history = None
    # across all publishers the chart ranks every account in every period (2.8 s at 1M daily rows): drawn on
    # request there, always for one publisher (tens of ms)
    history_deferred = account is None and not request.GET.get("history")
    if page.total_rows and not history_deferred:
        history = selectors.rank_history(
            workspace,
            publisher=account,
            aggregate=aggregate,
            window=window,
            labels=labels or None,
            top=top_n,
            bucket=bucket,
        )
    false_tweets = sum(r["tweets"] or 0 for r in split if r["label"] == Label.FALSE)
    false_top = (
        selectors.top_spreaders(workspace, publisher=account, window=window, labels=[Label.FALSE], limit=5)
        if false_tweets
        else []
    )
    n_pages = max(1, -(-page.total_rows // PAGE))
    sort_links = {
        key: "?"
        + (
            _query_with(params, sort=None, aggregate=key)
            if key in selectors.AGGREGATES
            else _query_with(params, sort=key)
        )
        for key in selectors.SORTS
    }
    chart = None
    if history and history["series"]:
        for s in history["series"]:
            s["cells"] = list(zip(s["ranks"], s["scores"], strict=True))
        chart = {
            "periods": [p.isoformat() for p in history["periods"]],
            "bucket": history["bucket"],
            "aggregate": aggregate,
            "unit": page.unit,
            "ranked": history["ranked"],
            "series": [
                {
                    "name": f"@{s['screen_name']}" if s["screen_name"] else str(s["twitter_id"]),
                    "rank": s["rank"],
                    "ranks": s["ranks"],
                    "scores": s["scores"],
                }
                for s in history["series"]
            ],
        }
    ctx = _ctx(
        request,
        workspace,
        form=form,
        publisher=account,
        page=page,
        window=window,
        preset=preset,
        span=span,
        page_no=page_no,
        n_pages=n_pages,
        query=_query_with(params),
        sort=sort,
        sort_links=sort_links,
        labels=labels,
        label_names=[label_names[k] for k in labels],
        reach=reach,
        split=split,
        split_reach=sum(r["reach"] or 0.0 for r in split),
        false_top=false_top,
        false_tweets=false_tweets,
        history=history,
        history_deferred=history_deferred and bool(page.total_rows),
        history_link="?" + _query_with(params, history="1"),
        chart=chart,
        top_n=top_n,
        bucket=bucket,
        chart_hidden=_hidden(params, skip=("top", "bucket", "page")),
        filter_hidden=_hidden(params, skip=tuple(f for f in RankingForm.base_fields if f not in ("top", "bucket"))),
        reset_labels="?" + _query_with(params, drop=("page", "labels")),
        widen_window="?" + _query_with(params, drop=("page", "start", "end"), window="all"),
        false_link="?" + _query_with(params, labels=Label.FALSE),
        # the results are rendered once per query and data version (rendering is most of a warm page's time)
        fragment_key=selectors.data_version(workspace),
        fragment_ttl=settings.SPREADWATCH_READ_CACHE_SECONDS,
    )
    return render(request, "frontend/ranking.html", ctx)


@login_required
@require_GET
def account(request: HttpRequest, ws: str, twitter_id: int) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    acc = selectors.account_get(workspace, twitter_id)
    ctx = _ctx(
        request,
        workspace,
        account=acc,
        summary=selectors.account_summary(workspace, acc),
        amplification=selectors.account_amplification(workspace, acc),
    )
    return render(request, "frontend/account.html", ctx)


@login_required
@require_GET
def tweet(request: HttpRequest, ws: str, tweet_id: int) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    t = selectors.tweet_get(workspace, tweet_id)
    ctx = _ctx(request, workspace, tweet=t, participants=selectors.tweet_participants(t))
    return render(request, "frontend/tweet.html", ctx)


@login_required
@require_GET
def collections(request: HttpRequest, ws: str) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    pager = Paginator(selectors.collections_list(workspace, limit=10_000), PAGE)
    page = pager.get_page(request.GET.get("page"))
    return render(request, "frontend/collections.html", _ctx(request, workspace, page=page))


@login_required
@require_http_methods(["GET", "POST"])
def upload(request: HttpRequest, ws: str) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    form = UploadForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        try:
            c = services.collection_create(
                workspace=workspace,
                files=request.FILES.getlist("files"),
                user=request.user,
                name=d["name"],
                mode=d["mode"],
                validate_only=d["validate_only"],
                format=d["format"],
                compute=d["compute"],
            )
        except ValidationError as exc:
            for msg in exc.messages:
                form.add_error("files", msg)
        else:
            c.refresh_from_db()
            if c.is_active:
                messages.success(request, f"Uploaded {c.name}: the import has started.")
            else:  # no broker: the import ran inside this request
                messages.info(request, f"Uploaded {c.name}: {c.get_status_display().lower()}.")
            url = reverse("collection", kwargs={"ws": workspace.slug, "pk": c.pk})
            if request.headers.get("X-Requested-With") == "XMLHttpRequest":
                # upload.js sent the form in the background (for its progress bar): it navigates itself
                return JsonResponse({"redirect": url})
            return redirect(url)
    return render(request, "frontend/upload.html", _ctx(request, workspace, form=form))


@login_required
@require_GET
def collection(request: HttpRequest, ws: str, pk: int) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    c = selectors.collection_get(workspace, pk)
    ctx = _ctx(
        request,
        workspace,
        c=c,
        progress=services.collection_progress(c),
        files=list(c.files.all()),
        runs=list(c.compute_runs.order_by("-pk")),
    )
    return render(request, "frontend/collection.html", ctx)


@login_required
@require_GET
def collection_progress(request: HttpRequest, ws: str, pk: int) -> JsonResponse:
    """Polled by the collection page while the import runs."""
    workspace = selectors.workspace_for_user(request.user, ws)
    c = selectors.collection_get(workspace, pk)
    return JsonResponse(
        {
            "status": c.status,
            "status_display": c.get_status_display(),
            "active": c.is_active,
            **services.collection_progress(c),
        }
    )


@login_required
@require_GET
def runs(request: HttpRequest, ws: str) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    pager = Paginator(selectors.runs_list(workspace, limit=10_000), PAGE)
    page = pager.get_page(request.GET.get("page"))
    return render(request, "frontend/runs.html", _ctx(request, workspace, page=page, form=RecomputeForm()))


@login_required
@require_GET
def run(request: HttpRequest, ws: str, pk: int) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    r = selectors.run_get(workspace, pk)
    return render(request, "frontend/run.html", _ctx(request, workspace, run=r, batches=selectors.run_batches(r)))


@login_required
@require_POST
def recompute(request: HttpRequest, ws: str) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    form = RecomputeForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose an orphan policy and a backend.")
        return redirect("runs", ws=workspace.slug)
    r = services.compute_run_start(
        workspace=workspace,
        user=request.user,
        orphans=form.cleaned_data["orphans"],
        backend=form.cleaned_data["backend"],
        aggregate=ComputeRun.Aggregate.TOTAL,
    )
    messages.success(request, f"Run {r.pk} queued: {r.n_cascades:,} cascades in {r.n_batches} batch(es).")
    return redirect(reverse("run", kwargs={"ws": workspace.slug, "pk": r.pk}))


EXPLORER_LIMIT = 150  # nodes drawn by default: beyond that a layered drawing stops being readable on one screen


@login_required
@require_GET
def cascade(request: HttpRequest, ws: str, tweet_id: int) -> HttpResponse:
    """The cascade explorer: one tweet's spreading graph drawn as a layered DAG flowing to the publisher.

    Large cascades are cut to the ``limit`` most influential participants (the publisher always stays) and
    the edges among them; the page says how many nodes and edges are hidden."""
    workspace = selectors.workspace_for_user(request.user, ws)
    t = selectors.tweet_get(workspace, tweet_id)
    try:
        limit = min(max(int(request.GET.get("limit", EXPLORER_LIMIT)), 10), 5000)
    except ValueError:
        return HttpResponse("limit: not an integer", status=400, content_type="text/plain")
    data = selectors.cascade_explorer_data(workspace, t, limit=limit)
    return render(request, "frontend/cascade.html", _ctx(request, workspace, tweet=t, data=data, limit=limit))


def _collection_post(request: HttpRequest, ws: str, pk: int, service, done: str) -> HttpResponse:
    """Run one collection service on a POST and come back to the collection page with its outcome."""
    workspace = selectors.workspace_for_user(request.user, ws)
    c = selectors.collection_get(workspace, pk)
    try:
        service(collection=c)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, done)
    return redirect("collection", ws=workspace.slug, pk=c.pk)


@login_required
@require_POST
def collection_cancel(request: HttpRequest, ws: str, pk: int) -> HttpResponse:
    return _collection_post(
        request, ws, pk, services.collection_cancel, "Cancelling: nothing of this import will be stored."
    )


@login_required
@require_POST
def collection_retry(request: HttpRequest, ws: str, pk: int) -> HttpResponse:
    return _collection_post(request, ws, pk, services.collection_retry, "Import queued again.")
