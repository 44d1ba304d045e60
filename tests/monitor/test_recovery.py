"""Recovery without a human, in one process (issue 20; the real-process versions are in tests/faults): the sweep
that queues again a batch or an import whose worker stopped beating, capped attempts ending in a failure with a
notice; the outbox of tasks the broker refused; Redis as a soft dependency (pages, logins and the data version
with the cache unreachable)."""

from __future__ import annotations

import datetime as dt
import socket

import pytest
from django.urls import reverse
from django.utils import timezone

from monitor import jobs, selectors, services
from monitor.models import Collection, ComputeBatch, ComputeRun, Lease, Notice, OutboxTask, Workspace
from monitor.services import recovery
from tests.webapp import EXPECTED_TOTAL, THESIS, total_by_name


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


# --- the stalled-work sweep ---------------------------------------------------------------------------------------


@pytest.fixture
def stuck_batch(ws_a, alice, import_files, django_capture_on_commit_callbacks, settings):
    """A run whose only batch a worker claimed and then died with: marked running, its lease's last beat old."""
    settings.SPREADWATCH_STALL_SECONDS = 60
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"], compute=False)
    with django_capture_on_commit_callbacks(execute=False):  # queued, never delivered
        run = services.compute_run_start(workspace=ws_a, backend="cpu", user=alice)
    batch = run.batches.get()
    old = timezone.now() - dt.timedelta(seconds=90)
    ComputeBatch.objects.filter(pk=batch.pk).update(status=ComputeBatch.Status.RUNNING, attempts=1, started_at=old)
    ComputeRun.objects.filter(pk=run.pk).update(status=ComputeRun.Status.RUNNING, started_at=old)
    Lease.objects.create(kind=Lease.Kind.BATCH, object_id=batch.pk, holder="gone:4242", started_at=old, beat_at=old)
    return run, batch


def test_the_run_page_shows_a_stalled_batch_and_its_age(client, alice, stuck_batch):
    run, _ = stuck_batch
    client.force_login(alice)
    page = client.get(reverse("run", kwargs={"ws": run.workspace.slug, "pk": run.pk})).content.decode()
    assert "Stalled work" in page and "gone:4242" in page and "for 9" in page  # 90 s and counting


def test_a_batch_whose_worker_stopped_beating_is_queued_again_and_computed_once(stuck_batch, run_tasks):
    run, batch = stuck_batch
    out = run_tasks(services.stalled_requeue)  # on commit, the re-sent task runs here (eager)
    assert out["batches_requeued"] == 1
    batch.refresh_from_db()
    run.refresh_from_db()
    assert batch.status == ComputeBatch.Status.DONE and batch.attempts == 2
    assert run.status == ComputeRun.Status.DONE and run.batches_done == 1
    assert any("no heartbeat for 9" in n for n in run.notes), run.notes
    assert total_by_name(run.workspace) == EXPECTED_TOTAL
    assert not Lease.objects.exists()  # released when the batch ended
    assert run_tasks(services.stalled_requeue) == dict.fromkeys(out, 0)  # nothing stalled any more


def test_a_batch_that_beats_is_left_alone(stuck_batch, run_tasks):
    _, batch = stuck_batch
    Lease.objects.filter(object_id=batch.pk).update(beat_at=timezone.now())
    assert run_tasks(services.stalled_requeue)["batches_requeued"] == 0
    batch.refresh_from_db()
    assert batch.status == ComputeBatch.Status.RUNNING


def test_after_the_last_attempt_a_stalled_batch_fails_and_its_analyst_gets_a_notice(
    client, alice, stuck_batch, run_tasks, settings
):
    run, batch = stuck_batch
    settings.SPREADWATCH_STALL_MAX_ATTEMPTS = 1
    assert run_tasks(services.stalled_requeue)["batches_failed"] == 1
    run.refresh_from_db()
    batch.refresh_from_db()
    assert batch.status == ComputeBatch.Status.FAILED and "stopped responding" in batch.error
    assert run.status == ComputeRun.Status.FAILED and "no heartbeat" in run.error
    notice = Notice.objects.get(user=alice)
    assert f"Compute run {run.pk} failed" in notice.message
    client.force_login(alice)
    page = client.get(reverse("overview", kwargs={"ws": run.workspace.slug})).content.decode()
    assert f"Compute run {run.pk} failed" in page
    r = client.post(
        reverse("notice-dismiss", kwargs={"ws": run.workspace.slug, "pk": notice.pk}), {"next": "https://evil.example/"}
    )
    assert r.status_code == 302 and r["Location"] == reverse("overview", kwargs={"ws": run.workspace.slug})
    assert f"Compute run {run.pk} failed" not in client.get(r["Location"]).content.decode()


@pytest.fixture
def stuck_import(ws_a, alice, settings):
    settings.SPREADWATCH_STALL_SECONDS = 60
    c = services.collection_create(
        workspace=ws_a, files=[THESIS / "tweets.csv", THESIS / "follows.csv"], user=alice
    )  # not in a capture: its task is never delivered
    old = timezone.now() - dt.timedelta(seconds=75)
    Collection.objects.filter(pk=c.pk).update(status=Collection.Status.INGESTING, attempts=1, started_at=old)
    Lease.objects.create(kind=Lease.Kind.IMPORT, object_id=c.pk, holder="gone:7", started_at=old, beat_at=old)
    return c


def test_an_import_whose_worker_stopped_beating_is_queued_again_and_completes(client, alice, stuck_import, run_tasks):
    c = stuck_import
    client.force_login(alice)
    page = client.get(reverse("collection", kwargs={"ws": c.workspace.slug, "pk": c.pk})).content.decode()
    assert "Stalled work" in page and "The import: no heartbeat" in page
    assert run_tasks(services.stalled_requeue)["imports_requeued"] == 1
    c.refresh_from_db()
    assert c.status == Collection.Status.DONE and c.attempts == 2, c.error
    assert total_by_name(c.workspace) == EXPECTED_TOTAL


def test_after_the_last_attempt_a_stalled_import_fails_with_a_notice(alice, stuck_import, run_tasks, settings):
    settings.SPREADWATCH_STALL_MAX_ATTEMPTS = 1
    assert run_tasks(services.stalled_requeue)["imports_failed"] == 1
    c = Collection.objects.get(pk=stuck_import.pk)
    assert c.status == Collection.Status.FAILED and "stopped responding" in c.error
    assert Notice.objects.filter(user=alice, message__contains="The import of").exists()


@pytest.fixture
def orphaned_session(stuck_import, settings):
    """The stuck import's row locked by a session of its own whose client went quiet, named in the lease as the
    worker's: what a killed worker leaves when another process keeps its socket (tests/faults has the real one)."""
    import time

    import psycopg
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("database sessions are PostgreSQL's")
    s = connection.settings_dict
    other = psycopg.connect(
        dbname=s["NAME"], user=s["USER"], password=s["PASSWORD"] or None, host=s["HOST"] or None, port=s["PORT"] or None
    )
    other.execute("SELECT id FROM monitor_collection WHERE id = %s FOR UPDATE", [stuck_import.pk])  # stays open
    pid, started = other.execute(
        "SELECT pid, backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid()"
    ).fetchone()
    Lease.objects.filter(object_id=stuck_import.pk).update(backend_pid=pid, backend_started_at=started)
    settings.SPREADWATCH_STALL_SECONDS = 1
    time.sleep(1.2)  # quiet for longer than the stall time
    yield other, pid
    other.close()


def _session_alive(other) -> bool:
    import psycopg

    try:
        other.execute("SELECT 1")
    except psycopg.OperationalError:
        return False
    other.rollback()
    return True


@pytest.mark.django_db(transaction=True)
def test_a_dead_workers_session_that_still_holds_the_import_is_ended_and_the_import_queued_again(
    orphaned_session, stuck_import, run_tasks
):
    other, _ = orphaned_session
    assert run_tasks(services.stalled_requeue)["imports_requeued"] == 1
    assert not _session_alive(other)  # ended: its transaction rolled back, its lock released
    c = Collection.objects.get(pk=stuck_import.pk)
    assert c.status == Collection.Status.DONE and c.attempts == 2, c.error
    assert total_by_name(c.workspace) == EXPECTED_TOTAL


@pytest.mark.django_db(transaction=True)
def test_after_the_last_attempt_the_import_of_an_ended_session_fails_saying_so(
    alice, orphaned_session, stuck_import, run_tasks, settings
):
    other, pid = orphaned_session
    settings.SPREADWATCH_STALL_MAX_ATTEMPTS = 1
    assert run_tasks(services.stalled_requeue)["imports_failed"] == 1
    assert not _session_alive(other)
    c = Collection.objects.get(pk=stuck_import.pk)
    assert c.status == Collection.Status.FAILED
    assert f"its database session (pid {pid}), left open with the import's lock, was ended" in c.error
    assert Notice.objects.filter(user=alice, message__contains="The import of").exists()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("case", ["fresh heartbeat", "another session", "no session recorded"])
def test_a_session_holding_an_import_is_left_alone_unless_it_is_the_dead_workers(
    orphaned_session, stuck_import, run_tasks, case
):
    other, _ = orphaned_session
    lease = Lease.objects.filter(object_id=stuck_import.pk)
    if case == "fresh heartbeat":  # a live worker, however quiet its session: never ended
        lease.update(beat_at=timezone.now())
    elif case == "another session":  # the pid was reused: the start time tells
        lease.update(backend_started_at=lease.get().backend_started_at - dt.timedelta(seconds=1))
    else:  # a lease written before sessions were recorded (or on SQLite)
        lease.update(backend_pid=None, backend_started_at=None)
    out = run_tasks(services.stalled_requeue)
    assert out["imports_requeued"] == out["imports_failed"] == 0
    assert _session_alive(other)
    assert Collection.objects.get(pk=stuck_import.pk).status == Collection.Status.INGESTING


def test_a_lease_names_the_session_its_work_runs_on(ws_a):
    from django.db import connection

    with recovery.holding(Lease.Kind.IMPORT, 12345):
        lease = Lease.objects.get(object_id=12345)
        if connection.vendor == "postgresql":
            with connection.cursor() as cur:
                cur.execute("SELECT pid, backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid()")
                assert (lease.backend_pid, lease.backend_started_at) == cur.fetchone()
        else:
            assert lease.backend_pid is None and lease.backend_started_at is None
    assert not Lease.objects.filter(object_id=12345).exists()


def test_a_second_delivery_of_a_finished_import_leaves_it_alone(ws_a, import_files):
    c = import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    Collection.objects.filter(pk=c.pk).update(status=Collection.Status.INGESTING)  # what the late copy would see
    import unittest.mock

    from monitor.services import collections as module

    with unittest.mock.patch.object(module, "_mark_ingesting", return_value=False):
        services.collection_ingest(collection_id=c.pk)
    assert Collection.objects.get(pk=c.pk).attempts == 1


def test_a_frozen_worker_that_wakes_after_its_import_was_taken_over_does_not_fail_it(ws_a, alice, settings):
    """A worker frozen past the stall time has its import queued again and finished by another delivery; when it
    wakes and its import raises (its session was ended), its failure must not be written over the finished one."""
    import unittest.mock

    from monitor.services import collections as module

    c = services.collection_create(workspace=ws_a, files=[THESIS / "tweets.csv", THESIS / "follows.csv"], user=alice)

    def frozen_then_taken_over(col, *args, **kwargs):
        # meanwhile: the sweep queued it again and a second delivery imported it
        Collection.objects.filter(pk=col.pk).update(status=Collection.Status.DONE, attempts=col.attempts + 1)
        raise RuntimeError("the connection was closed by the server")

    with unittest.mock.patch.object(module, "_import", side_effect=frozen_then_taken_over):
        services.collection_ingest(collection_id=c.pk)
    c.refresh_from_db()
    assert (c.status, c.attempts, c.error) == (Collection.Status.DONE, 2, "")
    assert all(cf.file.storage.exists(cf.file.name) for cf in c.files.all())  # the files the new delivery reads


# --- the outbox ---------------------------------------------------------------------------------------------------


@pytest.fixture
def broker_down(_eager_celery):
    """This process publishes to a broker nobody listens on."""
    from tests.faults.fixtures import _publish_to

    app = _eager_celery
    old = app.conf.get("broker_write_url"), app.conf.task_always_eager
    _publish_to(app, f"redis://127.0.0.1:{_closed_port()}/0")
    app.conf.task_always_eager = False
    yield app
    _publish_to(app, old[0])
    app.conf.task_always_eager = old[1]


def test_a_task_the_broker_refuses_is_kept_and_sent_when_it_is_back(ws_a, broker_down, run_tasks):
    c = run_tasks(services.collection_create, workspace=ws_a, files=[THESIS / "tweets.csv", THESIS / "follows.csv"])
    kept = OutboxTask.objects.get()
    assert (kept.name, kept.args) == (jobs.INGEST_COLLECTION, [c.pk]) and kept.error
    assert jobs.send_outbox() == {"sent": 0, "left": 1}  # still away
    assert OutboxTask.objects.get().attempts == 2
    broker_down.conf.task_always_eager = True  # "back": here the task runs in this process
    assert run_tasks(jobs.send_outbox) == {"sent": 1, "left": 0}
    c.refresh_from_db()
    assert c.status == Collection.Status.DONE and total_by_name(ws_a) == EXPECTED_TOTAL


# --- Redis unreachable ----------------------------------------------------------------------------------------------


@pytest.fixture
def cache_down(settings):
    from django.core.cache import cache

    settings.CACHES = {
        "default": {"BACKEND": "monitor.softcache.SoftRedisCache", "LOCATION": f"redis://127.0.0.1:{_closed_port()}/1"}
    }
    settings.SPREADWATCH_READ_CACHE_SECONDS = 300
    assert cache.get("anything") is None  # a miss, not an error
    yield


def test_pages_and_logins_answer_from_postgresql_with_the_cache_unreachable(
    client, alice, ws_a, import_files, cache_down
):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    r = client.post(reverse("login"), {"username": "alice", "password": "alice-pass-123"})
    assert r.status_code == 302
    for name, kw in [("overview", {}), ("ranking", {}), ("publisher", {"publisher": 102})]:
        assert client.get(reverse(name, kwargs={"ws": ws_a.slug, **kw})).status_code == 200, name
    api = client.get(f"/api/v1/workspaces/{ws_a.slug}/publishers/102/ranking/").json()
    assert {row["screen_name"]: row["total"] for row in api["results"]} == EXPECTED_TOTAL


def test_login_rate_limiting_still_holds_per_process_with_the_cache_unreachable(client, alice, cache_down, settings):
    settings.SPREADWATCH_LOGIN_MAX_FAILURES = 3
    for _ in range(3):
        assert client.post(reverse("login"), {"username": "alice", "password": "x"}).status_code == 200
    assert client.post(reverse("login"), {"username": "alice", "password": "alice-pass-123"}).status_code == 429


def test_a_bump_made_while_the_cache_was_down_is_not_lost(ws_a, import_files, settings, run_tasks):
    from django.core.cache import cache

    from monitor.cache import _version_key, current_version

    settings.SPREADWATCH_READ_CACHE_SECONDS = 300
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    before = current_version(ws_a)
    # a batch commits while Redis is away: the version is bumped in PostgreSQL, the copy in the cache is not dropped
    version = Workspace.objects.get(pk=ws_a.pk).data_version
    Workspace.objects.filter(pk=ws_a.pk).update(data_version=version + 1)
    assert current_version(ws_a) == before  # the stale copy, for at most VERSION_COPY_S
    cache.delete(_version_key(ws_a.pk))  # ... which then expires
    assert current_version(ws_a) != before
    assert selectors.ranking(ws_a).tweets == 2


# --- a restarted web process (the demo) ----------------------------------------------------------------------------


def test_a_new_demo_process_resumes_the_import_the_one_before_left(stuck_import, run_tasks):
    """The demo stopped during an import: its row says importing and its lease may look fresh, but in a new web
    process of background mode nothing runs it. The import is queued again and completes."""
    c = stuck_import
    Lease.objects.filter(object_id=c.pk).update(beat_at=timezone.now())
    out = run_tasks(recovery.resume_in_process)
    assert out["imports_requeued"] == 1
    c.refresh_from_db()
    assert c.status == Collection.Status.DONE and c.attempts == 2, c.error
    assert total_by_name(c.workspace) == EXPECTED_TOTAL


def test_a_new_demo_process_sends_again_the_import_left_queued(ws_a, alice, run_tasks):
    c = services.collection_create(workspace=ws_a, files=[THESIS / "tweets.csv", THESIS / "follows.csv"], user=alice)
    assert Collection.objects.get(pk=c.pk).status == Collection.Status.QUEUED  # its task died with the process
    assert run_tasks(recovery.resume_in_process)["imports_resent"] == 1
    c.refresh_from_db()
    assert c.status == Collection.Status.DONE, c.error
    assert total_by_name(c.workspace) == EXPECTED_TOTAL


def test_a_new_demo_process_resumes_a_running_batch_and_says_why(stuck_batch, run_tasks):
    run, batch = stuck_batch
    Lease.objects.filter(object_id=batch.pk).update(beat_at=timezone.now())
    assert run_tasks(recovery.resume_in_process)["batches_requeued"] == 1
    run.refresh_from_db()
    assert run.status == ComputeRun.Status.DONE
    assert any("the web process that ran it stopped" in n for n in run.notes), run.notes
    assert total_by_name(run.workspace) == EXPECTED_TOTAL


def test_a_demo_process_resumes_once_on_its_first_request_and_only_in_background_mode(
    client, alice, monkeypatch, settings
):
    calls = []
    monkeypatch.setattr(recovery, "resume_in_process", lambda **kw: calls.append(1))
    monkeypatch.setattr(recovery, "_resumed", False)
    client.force_login(alice)
    settings.SPREADWATCH_RESUME_IN_PROCESS = True
    client.get("/help/")  # not in background mode (a worker or a test): nothing to resume here
    assert calls == []
    settings.SPREADWATCH_EAGER_IN_BACKGROUND = True
    monkeypatch.setattr(jobs, "eager", lambda: True)
    client.get("/help/")
    client.get("/help/")
    assert calls == [1]
