"""The demo's background mode (``SPREADWATCH_EAGER_IN_BACKGROUND``, no broker): an upload answers before its
import ran, the tasks run on one background thread of the web process in the order they were queued, and the
collection's progress passes through every named phase to done."""

from __future__ import annotations

import threading

import pytest
from django.urls import reverse

from monitor import jobs
from monitor import progress as P
from monitor.models import Collection, ComputeRun
from monitor.selectors import collection_progress
from tests.webapp import THESIS

pytestmark = pytest.mark.django_db(transaction=True)  # the background thread reads what the request committed


def test_it_is_off_unless_asked(settings):
    settings.SPREADWATCH_EAGER_IN_BACKGROUND = False
    assert jobs.eager() and not jobs.in_background()
    settings.SPREADWATCH_EAGER_IN_BACKGROUND = True
    assert jobs.in_background()


def test_an_upload_answers_before_its_import_and_its_progress_passes_every_phase_to_done(
    client, alice, ws_a, settings, monkeypatch
):
    import monitor.services.collections as collections_service
    import monitor.services.runs as runs_service

    settings.SPREADWATCH_EAGER_IN_BACKGROUND = True
    phases: list[str] = []
    real_import_percent, real_phase = collections_service.import_percent, runs_service._phase

    def import_percent(frac, **kw):
        phase, pct = real_import_percent(frac, **kw)
        phases.append(phase)
        return phase, pct

    def run_phase(run, batch, phase):
        phases.append(phase)
        return real_phase(run, batch, phase)

    monkeypatch.setattr(collections_service, "import_percent", import_percent)
    monkeypatch.setattr(runs_service, "_phase", run_phase)

    gate = threading.Event()
    jobs._background().submit(gate.wait, 60)  # the background thread is busy until the upload has answered
    client.force_login(alice)
    try:
        with open(THESIS / "tweets.csv", "rb") as t, open(THESIS / "follows.csv", "rb") as f:
            r = client.post(
                reverse("upload", kwargs={"ws": ws_a.slug}),
                {"files": [t, f], "name": "worked example", "format": "auto", "mode": "strict", "compute": "on"},
                HTTP_X_REQUESTED_WITH="XMLHttpRequest",
            )
        c = Collection.objects.get(workspace=ws_a)
        assert r.status_code == 200 and r.json()["redirect"].endswith(f"/collections/{c.pk}/")
        assert c.status == Collection.Status.QUEUED  # the request answered; the import has not run
        page = client.get(r.json()["redirect"]).content.decode()
        assert "data-progress-url" in page and "the import has started" in page
    finally:
        gate.set()

    seen = []
    while not jobs.background_idle(timeout=0.05):
        c.refresh_from_db()
        seen.append((c.status, collection_progress(c)))
    assert jobs.background_idle(timeout=120)
    c.refresh_from_db()
    seen.append((c.status, collection_progress(c)))

    assert c.status == Collection.Status.DONE, c.error
    assert c.compute_runs.get().status == ComputeRun.Status.DONE
    ordered = [p for i, p in enumerate(phases) if i == 0 or phases[i - 1] != p]
    assert ordered == ["reading", "storing", "computing", "storing results", "aggregates"]
    percents = [p["percent"] for _, p in seen]
    assert percents == sorted(percents)
    assert all(p["percent"] < 100 for status, p in seen if status != Collection.Status.DONE)
    assert seen[-1][1]["percent"] == 100.0 and seen[-1][1]["phase"] == "done"
    assert P.TOP_WHILE_ACTIVE < 100


def test_the_background_thread_runs_tasks_in_the_order_they_were_queued_and_survives_a_failure(settings):
    settings.SPREADWATCH_EAGER_IN_BACKGROUND = True
    ran: list[str] = []
    from monitor.celery import app

    @app.task(name="tests.background.record")
    def record(n: int) -> None:
        ran.append(n)
        if n == 1:
            raise RuntimeError("a task that fails")

    try:
        for n in range(4):
            assert jobs.send("tests.background.record", n)
        assert jobs.background_idle(timeout=30)
        assert ran == [0, 1, 2, 3]
    finally:
        app.tasks.pop("tests.background.record", None)
