"""The staff's health page (``/health/``): staff only, its sections without a broker (eager: no queues), the runs
in flight and waiting per workspace, the outbox and stalled work; ``/healthz`` keeps its contract."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from monitor import services
from monitor.models import Lease, OutboxTask
from tests.webapp import THESIS

pytestmark = pytest.mark.django_db


def test_it_is_for_staff_only(client, alice):
    r = client.get("/health/")
    assert r.status_code == 302 and "/login/" in r["Location"]
    client.force_login(alice)
    assert client.get("/health/").status_code == 403


def test_it_shows_runs_waiting_the_outbox_and_stalled_work(client, admin_user, ws_a, import_files, settings):
    settings.SPREADWATCH_MAX_RUNS_IN_FLIGHT = 1
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"], compute=False)
    for _ in range(3):
        services.compute_run_start(workspace=ws_a, backend="cpu", algorithm="network", params={"samples": 0})
    OutboxTask.objects.create(name="monitor.tasks.compute_batch", args=[1], error="ConnectionError: refused")
    old = timezone.now() - dt.timedelta(seconds=600)
    Lease.objects.create(kind=Lease.Kind.BATCH, object_id=7, holder="host-a:42", started_at=old, beat_at=old)
    client.force_login(admin_user)
    page = client.get("/health/").content.decode()
    assert "No broker: every task runs in the web process, where it was queued" in page  # the tests run tasks eagerly
    row = page.split(f'data-workspace="{ws_a.slug}"', 1)[1].split("</tr>", 1)[0]
    assert '<td class="num" data-in-flight>1</td>' in row and '<td class="num" data-waiting>2</td>' in row
    assert "<strong>1</strong> task the broker refused" in page and "ConnectionError: refused" in page
    assert "Compute batch 7: no heartbeat from host-a:42 for 600 s" in page
    assert "<code>host-a:42</code>" in page and "compute batch 7" in page


def test_the_menu_links_it_for_staff(client, admin_user, alice):
    client.force_login(alice)
    assert 'href="/health/"' not in client.get("/help/").content.decode()
    client.force_login(admin_user)
    assert 'href="/health/"' in client.get("/help/").content.decode()


def test_healthz_keeps_its_contract(client):
    r = client.get("/healthz")
    assert r.status_code == 200
    body = r.json()
    assert body["status"] == "ok" and body["checks"] == {"database": "ok", "cache": "ok"} and "stream" in body
