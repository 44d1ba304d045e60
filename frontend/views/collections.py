"""Collections: the list, the upload form, a collection's page and its progress (polled while the import
runs), and cancelling or retrying its import."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from monitor import selectors, services

from ..forms import UploadForm
from .base import PAGE, workspace_context


@login_required
@require_GET
def collections(request: HttpRequest, ws: str) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    pager = Paginator(selectors.collections_list(workspace, limit=10_000), PAGE)
    page = pager.get_page(request.GET.get("page"))
    return render(request, "frontend/collections.html", workspace_context(request, workspace, page=page))


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
    return render(request, "frontend/upload.html", workspace_context(request, workspace, form=form))


@login_required
@require_GET
def collection(request: HttpRequest, ws: str, pk: int) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    c = selectors.collection_get(workspace, pk)
    ctx = workspace_context(
        request,
        workspace,
        c=c,
        progress=selectors.collection_progress(c),
        files=selectors.collection_files(c),
        runs=selectors.collection_runs(c),
        stalled=selectors.stalled_work(collection=c),
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
            **selectors.collection_progress(c),
        }
    )


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


@login_required
@require_POST
def notice_dismiss(request: HttpRequest, ws: str, pk: int) -> HttpResponse:
    """Dismiss one of the user's notices, and go back to the page it was dismissed on (or the overview)."""
    workspace = selectors.workspace_for_user(request.user, ws)
    services.notice_dismiss(notice=selectors.notice_get(request.user, workspace, pk))
    back = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        back = reverse("overview", kwargs={"ws": workspace.slug})
    return redirect(back)
