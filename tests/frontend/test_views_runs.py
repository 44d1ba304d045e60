"""The run page's cancel and retry buttons (frontend/views/runs.py): POST with CSRF, the user's workspace only."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from monitor import services
from monitor.models import ComputeRun
from tests.webapp import EXPECTED_TOTAL, THESIS, total_by_name


@pytest.fixture
def queued_run(ws_a, import_files, settings):
    """A run over the thesis example whose two batches no worker has taken yet."""
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"], compute=False)
    settings.SPREADWATCH_BATCH_NODES = 6
    return services.compute_run_start(workspace=ws_a, backend="cpu")  # on-commit tasks are not run here


def _url(name: str, run: ComputeRun, ws: str = "newsroom") -> str:
    return reverse(name, kwargs={"ws": ws, "pk": run.pk})


def test_it_cancels_a_queued_run_from_its_page(client, alice, queued_run):
    client.force_login(alice)
    page = client.get(_url("run", queued_run)).content.decode()
    assert "Cancel run" in page and _url("run-cancel", queued_run) in page
    r = client.post(_url("run-cancel", queued_run), follow=True)
    assert r.redirect_chain[-1][0] == _url("run", queued_run)
    page = r.content.decode()
    assert "Run cancelled" in page and "The run was cancelled" in page and "Retry run" in page
    assert "cancelled by alice: 0 of 2 batches had finished" in page
    assert ComputeRun.objects.get(pk=queued_run.pk).status == ComputeRun.Status.CANCELLED


def test_it_retries_a_cancelled_run_from_its_page_to_the_full_results(client, alice, queued_run, run_tasks):
    client.force_login(alice)
    client.post(_url("run-cancel", queued_run))
    r = run_tasks(client.post, _url("run-retry", queued_run), follow=True)
    assert "Run queued again" in r.content.decode()
    run = ComputeRun.objects.get(pk=queued_run.pk)
    assert run.status == ComputeRun.Status.DONE and run.batches_done == 2
    assert total_by_name(queued_run.workspace) == EXPECTED_TOTAL


def test_it_says_why_a_finished_run_cannot_be_cancelled(client, alice, ws_a, import_files):
    c = import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    run = c.compute_runs.get()
    client.force_login(alice)
    page = client.get(_url("run", run)).content.decode()
    assert "Cancel run" not in page and "Retry run" not in page
    r = client.post(_url("run-cancel", run), follow=True)
    assert "a run that is done cannot be cancelled" in r.content.decode()
    assert ComputeRun.objects.get(pk=run.pk).status == ComputeRun.Status.DONE


def test_it_answers_404_for_another_workspaces_run_and_405_to_a_get(client, bob, queued_run):
    client.force_login(bob)
    for name in ("run-cancel", "run-retry"):
        assert client.post(_url(name, queued_run)).status_code == 404
        assert client.post(_url(name, queued_run, ws="lab")).status_code == 404
        assert client.get(_url(name, queued_run)).status_code == 405
    assert ComputeRun.objects.get(pk=queued_run.pk).status == ComputeRun.Status.QUEUED


def test_it_refuses_a_cancel_without_the_csrf_token(alice, queued_run):
    c = Client(enforce_csrf_checks=True)
    c.force_login(alice)
    assert c.post(_url("run-cancel", queued_run)).status_code == 403
    page = c.get(_url("run", queued_run))
    token = page.context["csrf_token"]
    assert c.post(_url("run-cancel", queued_run), {"csrfmiddlewaretoken": str(token)}).status_code == 302
    assert ComputeRun.objects.get(pk=queued_run.pk).status == ComputeRun.Status.CANCELLED
