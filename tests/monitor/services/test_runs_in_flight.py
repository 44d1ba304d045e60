"""At most M analysis runs of a workspace in flight (``monitor.services.runs``): the rest wait, in order, and are
released when one ends (done, failed, cancelled); a waiting run can be cancelled; runs started by uploads are not
counted; the stalled-work sweep releases what an end did not."""

from __future__ import annotations

import threading

import pytest
from django.db import connections

from monitor import services
from monitor.models import ComputeBatch, ComputeRun
from monitor.services.runs import compute_run_cancel, compute_run_retry
from tests.monitor.test_api_v1 import base
from tests.webapp import THESIS


@pytest.fixture
def thesis(ws_a, alice, import_files):
    c = import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    assert c.status == c.Status.DONE, c.error
    return ws_a


PLAN = {"k": 2, "p": 0.3, "evaluate": 1000, "batches": 2, "seed": 1, "backend": "cpu"}


def _statuses(ws) -> list[str]:
    runs = ComputeRun.objects.filter(workspace=ws, collection=None).order_by("pk")
    return list(runs.values_list("status", flat=True))


def _start(ws, **kw) -> ComputeRun:
    params = {"publisher": ws.accounts.get(twitter_id=102).pk, **{k: v for k, v in PLAN.items() if k != "backend"}}
    return services.compute_run_start(workspace=ws, algorithm="influence_max", params=params, backend="cpu", **kw)


def test_ten_planner_runs_at_once_put_two_in_flight_and_the_rest_waiting(api, thesis, settings):
    settings.SPREADWATCH_MAX_RUNS_IN_FLIGHT = 2
    ids = []
    for _ in range(10):  # their commit callbacks are not run: nothing computes, the first ones stay queued
        r = api.post(f"{base(thesis)}/publishers/102/counter-campaign/runs/", PLAN, format="json")
        assert r.status_code == 201, r.content
        ids.append(r.json()["id"])
    assert _statuses(thesis) == ["queued"] * 2 + ["waiting"] * 8
    # a waiting run's batches were not sent to the broker: they stay queued, but nothing will take them
    assert r.json()["status"] == "waiting"
    assert ComputeBatch.objects.filter(run_id__in=ids[2:]).exclude(status=ComputeBatch.Status.QUEUED).count() == 0


def test_a_run_that_ends_releases_the_oldest_waiting_run(thesis, settings, django_capture_on_commit_callbacks):
    settings.SPREADWATCH_MAX_RUNS_IN_FLIGHT = 1
    first, second, third = _start(thesis), _start(thesis), _start(thesis)
    assert _statuses(thesis) == ["queued", "waiting", "waiting"]
    # the first run's batches compute (eager): its end releases the second, whose batches are queued on commit
    # and run too, and so on: every run ends done, one after the other
    with django_capture_on_commit_callbacks(execute=True):
        for b in first.batches.all():
            services.compute_batch_run(batch_id=b.pk)
    assert _statuses(thesis) == ["done", "done", "done"]
    for r in (first, second, third):
        r.refresh_from_db()
    assert first.finished_at <= second.started_at and second.finished_at <= third.started_at


def test_a_cancelled_run_releases_the_next_and_a_waiting_run_can_be_cancelled(thesis, settings, alice):
    settings.SPREADWATCH_MAX_RUNS_IN_FLIGHT = 1
    first, _second, third = _start(thesis), _start(thesis), _start(thesis)
    third = compute_run_cancel(run=third, user=alice)  # waiting: cancelled, releases nothing
    assert _statuses(thesis) == ["queued", "waiting", "cancelled"]
    assert set(third.batches.values_list("status", flat=True)) == {ComputeBatch.Status.CANCELLED}
    compute_run_cancel(run=first, user=alice)
    assert _statuses(thesis) == ["cancelled", "queued", "cancelled"]
    # a retried run takes its turn like a new one
    compute_run_retry(run=first)
    assert _statuses(thesis) == ["waiting", "queued", "cancelled"]


def test_a_failed_run_releases_the_next(thesis, settings, monkeypatch):
    from monitor.algorithms import influence_max

    settings.SPREADWATCH_MAX_RUNS_IN_FLIGHT = 1
    first, _second = _start(thesis), _start(thesis)
    assert _statuses(thesis) == ["queued", "waiting"]

    def broken(**kw):
        raise RuntimeError("the batch broke")

    monkeypatch.setattr(influence_max.InfluenceMax, "compute", lambda self, **kw: broken(**kw))
    with pytest.raises(RuntimeError):
        services.compute_batch_run(batch_id=first.batches.order_by("index").first().pk)
    assert _statuses(thesis) == ["failed", "queued"]


def test_runs_started_by_uploads_are_not_counted_nor_held(thesis, settings, import_files):
    settings.SPREADWATCH_MAX_RUNS_IN_FLIGHT = 1
    _start(thesis), _start(thesis)
    c = import_files(thesis, [THESIS / "tweets.csv"])
    assert c.status == c.Status.DONE, c.error  # its influence run was queued and computed at once
    assert _statuses(thesis) == ["queued", "waiting"]


def test_the_sweep_releases_waiting_runs_an_end_left_behind(thesis, settings):
    settings.SPREADWATCH_MAX_RUNS_IN_FLIGHT = 1
    first, _second = _start(thesis), _start(thesis)
    # an end that did not release (a run failed by a path that does not know about the queue, say)
    ComputeRun.objects.filter(pk=first.pk).update(status=ComputeRun.Status.FAILED)
    out = services.stalled_requeue()
    assert out["runs_released"] == 1
    assert _statuses(thesis) == ["failed", "queued"]


@pytest.mark.django_db(transaction=True)
def test_two_runs_started_at_once_never_both_pass_the_count(settings, monkeypatch):
    """Two threads, each with its own connection and transaction, start a run at the same moment: one is
    queued, the other waits (the workspace's queue lock makes the second count see the first)."""
    settings.SPREADWATCH_MAX_RUNS_IN_FLIGHT = 1
    ws = services.workspace_create(name="Race", slug="race")
    # no transaction around it: the import runs (eager) as its own commit lands
    services.collection_create(workspace=ws, files=[THESIS / "tweets.csv", THESIS / "follows.csv"], compute=False)
    monkeypatch.setattr("monitor.jobs.enqueue_on_commit", lambda *a: None)  # nothing computes: statuses stay
    go = threading.Barrier(2)
    errors: list[BaseException] = []
    started: list[str] = []

    def start() -> None:
        from django.db import transaction

        try:
            with transaction.atomic():
                go.wait(timeout=10)
                started.append(_start(ws).status)
                # hold the transaction open a little: without the lock both would count zero in flight
                import time

                time.sleep(0.3)
        except BaseException as exc:  # reported below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=start) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors, errors
    assert sorted(started) == ["queued", "waiting"]
    assert sorted(_statuses(ws)) == ["queued", "waiting"]


def test_the_run_page_and_the_runs_list_say_a_run_waits_and_behind_what(thesis, settings, client, alice):
    settings.SPREADWATCH_MAX_RUNS_IN_FLIGHT = 1
    first, _second, third = _start(thesis), _start(thesis), _start(thesis)
    client.force_login(alice)
    page = client.get(f"/w/{thesis.slug}/runs/{third.pk}/").content.decode()
    assert "Waiting for the workspace&#x27;s earlier runs" in page
    assert f'href="/w/{thesis.slug}/runs/{first.pk}/">run {first.pk}</a>' in page
    assert "1 waiting run started before this one goes first" in page
    assert "Cancel run" in page
    listed = client.get(f"/w/{thesis.slug}/runs/").content.decode()
    assert listed.count("behind the workspace's earlier runs") == 2


def test_a_waiting_who_to_follow_run_shows_as_going_and_says_it_waits(thesis, settings, client, alice):
    from django.urls import reverse

    settings.SPREADWATCH_MAX_RUNS_IN_FLIGHT = 1
    _start(thesis)
    wtf = services.compute_run_start(workspace=thesis, tweet_pks=[], algorithm="wtf", params={"accounts": ["105"]})
    assert wtf.status == ComputeRun.Status.WAITING
    client.force_login(alice)
    page = client.get(reverse("account", kwargs={"ws": thesis.slug, "twitter_id": 105})).content.decode()
    assert "Waiting for the workspace's earlier runs: queued as soon as one of them ends" in page
    progress = client.get(reverse("wtf-progress", kwargs={"ws": thesis.slug, "pk": wtf.pk})).json()
    assert progress["active"] is True and progress["stage"].startswith("waiting for the workspace's earlier runs")
