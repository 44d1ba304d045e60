"""REST API v1: cancelling and retrying a compute run."""

from __future__ import annotations

import pytest

from monitor import services
from monitor.models import ComputeRun
from tests.webapp import EXPECTED_TOTAL, THESIS, token_client, total_by_name


@pytest.fixture
def queued_run(ws_a, import_files, settings):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"], compute=False)
    settings.SPREADWATCH_BATCH_NODES = 6
    return services.compute_run_start(workspace=ws_a, backend="cpu")


def _url(run, action: str, ws: str = "newsroom") -> str:
    return f"/api/v1/workspaces/{ws}/runs/{run.pk}/{action}/"


def test_it_cancels_then_retries_a_run(alice, queued_run, run_tasks):
    api = token_client(alice)
    r = api.post(_url(queued_run, "cancel"))
    assert r.status_code == 200 and r.json()["status"] == "cancelled"
    assert r.json()["error"].startswith("cancelled by alice")
    r = run_tasks(api.post, _url(queued_run, "retry"))
    assert r.status_code == 200 and r.json()["status"] == "queued"  # as it was when the request answered
    assert ComputeRun.objects.get(pk=queued_run.pk).status == ComputeRun.Status.DONE
    assert total_by_name(queued_run.workspace) == EXPECTED_TOTAL


def test_it_answers_400_when_the_run_cannot_be_cancelled_or_retried(alice, queued_run):
    api = token_client(alice)
    r = api.post(_url(queued_run, "retry"))
    assert r.status_code == 400 and "only a failed or cancelled run can be retried" in str(r.json())
    api.post(_url(queued_run, "cancel"))
    r = api.post(_url(queued_run, "cancel"))
    assert r.status_code == 400 and "a run that is cancelled cannot be cancelled" in str(r.json())


def test_it_answers_404_for_another_workspaces_run(bob, queued_run):
    api = token_client(bob)
    for action in ("cancel", "retry"):
        assert api.post(_url(queued_run, action)).status_code == 404
        assert api.post(_url(queued_run, action, ws="lab")).status_code == 404
    assert ComputeRun.objects.get(pk=queued_run.pk).status == ComputeRun.Status.QUEUED
