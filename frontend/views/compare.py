"""Compare publishers: ``/w/<slug>/compare/?p=<id>&p=<id>…`` (2 to 5) shows their top spreaders side by side,
the overlap of those lists (count and Jaccard index per pair) and the accounts in two or more of them; the same
as CSV at ``compare/export.csv``. The reads are ``monitor.selectors.compare``; this module reads the form, builds
the links that add or remove a publisher (each the current query with one change) and renders."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import render
from django.views.decorators.http import require_GET

from monitor import exports, selectors

from ..forms import CompareForm
from .base import workspace_context
from .exports import stream
from .rankings import window_from_form


def _form(request: HttpRequest, workspace) -> CompareForm:
    data = request.GET.copy()
    for name, default in (("aggregate", "total"), ("window", "all"), ("top", "10")):
        data.setdefault(name, default)
    form = CompareForm(data, workspace=workspace)
    form.is_valid()
    return form


def _query_without(params, name: str, value: str | None = None) -> str:
    """The query string less ``name`` (only its ``value`` if given)."""
    q = params.copy()
    if value is None:
        q.pop(name, None)
    else:
        q.setlist(name, [v for v in q.getlist(name) if v != value])
    return q.urlencode()


@login_required
@require_GET
def compare(request: HttpRequest, ws: str) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    form = _form(request, workspace)
    chosen = form.publishers
    ctx = workspace_context(
        request,
        workspace,
        form=form,
        chosen=[{"account": a, "remove": "?" + _query_without(request.GET, "p", str(a.twitter_id))} for a in chosen],
        # the picker offers the publishers not chosen yet, while there is room for one more
        choices=[
            (tid, name)
            for tid, name in selectors.publisher_choices(workspace)
            if tid not in {a.twitter_id for a in chosen}
        ]
        if len(chosen) < selectors.MAX_PUBLISHERS
        else [],
        # the hidden inputs of the forms: the picker's keeps the options, the options' form keeps the publishers
        keep_options=[
            (k, v)
            for k in ("aggregate", "window", "start", "end", "top", "labels")
            for v in request.GET.getlist(k)
            if v
        ],
        keep_publishers=[str(a.twitter_id) for a in chosen],
        max_publishers=selectors.MAX_PUBLISHERS,
        comparison=None,
    )
    if not form.is_valid():
        return render(request, "frontend/compare.html", ctx, status=400)
    if len(chosen) >= selectors.MIN_PUBLISHERS:
        d = form.cleaned_data
        window, preset = window_from_form(form, selectors.data_span(workspace))
        cmp = selectors.compare_publishers(
            workspace,
            chosen,
            window=window,
            aggregate=d.get("aggregate") or "total",
            top=d.get("top") or 10,
            labels=list(d.get("labels") or []) or None,
        )
        ctx |= {
            "comparison": cmp,
            "window": window,
            "preset": preset,
            "export_query": request.GET.urlencode(),
            # the side-by-side columns, each row marked when the account is shared
            "columns": [
                {
                    "publisher": p,
                    "page": col,
                    "rows": [{**r, "shared": r["account"] in {s["account"] for s in cmp.shared}} for r in col.rows],
                }
                for p, col in zip(cmp.publishers, cmp.columns, strict=True)
            ],
            "matrix_rows": list(zip(cmp.publishers, cmp.matrix, strict=True)),
        }
    return render(request, "frontend/compare.html", ctx)


@login_required
@require_GET
def compare_export(request: HttpRequest, ws: str) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    form = _form(request, workspace)
    if form.is_valid() and len(form.publishers) < selectors.MIN_PUBLISHERS:
        form.add_error(None, f"Choose at least {selectors.MIN_PUBLISHERS} publishers to compare.")
    if not form.is_valid():
        lines = [f"{'p' if name == '__all__' else name}: {e}" for name, errors in form.errors.items() for e in errors]
        return HttpResponseBadRequest("\n".join(lines) + "\n", content_type="text/plain; charset=utf-8")
    d = form.cleaned_data
    window, _preset = window_from_form(form, selectors.data_span(workspace))
    aggregate = d.get("aggregate") or "total"
    labels = list(d.get("labels") or []) or None
    cmp = selectors.compare_publishers(
        workspace, form.publishers, window=window, aggregate=aggregate, top=d.get("top") or 10, labels=labels
    )
    ids = "-".join(str(a.twitter_id) for a in form.publishers)
    name = exports.filename(
        workspace, "compare", ids, f"top{cmp.top}", aggregate, *(labels or ()), window=window, ext="csv"
    )
    return stream(exports.comparison_csv(cmp), fmt="csv", name=name)
