"""Cancelling and retrying imports."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.core.exceptions import ValidationError

from monitor import services
from monitor.models import Collection, Tweet
from monitor.services.collections import cancel_key
from tests.webapp import EXPECTED_TOTAL, THESIS, total_by_name


def test_it_cancels_a_queued_import_before_it_starts(ws_a, run_tasks):
    # created outside the on-commit capture: the ingest task is not run
    c = services.collection_create(workspace=ws_a, files=[THESIS / "tweets.csv"])
    services.collection_cancel(collection=c)
    c.refresh_from_db()
    assert c.status == Collection.Status.CANCELLED
    services.collection_ingest(collection_id=c.pk)  # the task, delivered late, leaves it alone
    c.refresh_from_db()
    assert c.status == Collection.Status.CANCELLED and not Tweet.objects.filter(workspace=ws_a).exists()


def test_it_rolls_back_an_import_cancelled_while_it_runs(ws_a):
    c = services.collection_create(workspace=ws_a, files=[THESIS / "tweets.csv", THESIS / "follows.csv"])
    cache.set(cancel_key(c.pk), True)  # what collection_cancel does for a running import
    services.collection_ingest(collection_id=c.pk)
    c.refresh_from_db()
    assert c.status == Collection.Status.CANCELLED and "nothing was stored" in c.error
    assert not Tweet.objects.filter(workspace=ws_a).exists()


def test_a_new_import_is_not_cancelled_by_what_an_earlier_one_of_its_number_left_in_the_cache(ws_a, import_files):
    """A database re-created or restored beside a cache that was not numbers its collections again from where the
    cache's keys already are: the keys of the number a new collection takes are its own."""
    from monitor.progress import progress_key

    nxt = (Collection.objects.order_by("-pk").values_list("pk", flat=True).first() or 0) + 1
    for pk in range(nxt, nxt + 20):  # the sequence may skip numbers a rolled-back test took
        cache.set(cancel_key(pk), True)
        cache.set(progress_key(pk), {"stage": "storing", "phase": "storing", "percent": 50.0, "at": 0.0})
    c = import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    assert c.status == Collection.Status.DONE, c.error
    assert total_by_name(ws_a) == EXPECTED_TOTAL


def test_it_retries_a_cancelled_import_with_the_same_files(ws_a, run_tasks):
    c = services.collection_create(workspace=ws_a, files=[THESIS / "tweets.csv", THESIS / "follows.csv"])
    services.collection_cancel(collection=c)
    run_tasks(services.collection_retry, collection=Collection.objects.get(pk=c.pk))
    c.refresh_from_db()
    assert c.status == Collection.Status.DONE, c.error
    assert total_by_name(ws_a) == EXPECTED_TOTAL


def test_it_refuses_to_cancel_a_finished_import_or_retry_a_good_one(ws_a, import_files):
    c = import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    with pytest.raises(ValidationError, match="cannot be cancelled"):
        services.collection_cancel(collection=c)
    with pytest.raises(ValidationError, match="only a failed or cancelled import"):
        services.collection_retry(collection=c)


def _orphaned_import(ws):
    """An import left 'importing' by a worker that died (or lost its database for longer than its retries):
    its transaction is gone, no lock is held, and its last progress report is old."""
    import time

    from monitor.services.collections import ORPHANED_AFTER_S, progress_key

    c = services.collection_create(workspace=ws, files=[THESIS / "tweets.csv", THESIS / "follows.csv"])
    Collection.objects.filter(pk=c.pk).update(status=Collection.Status.INGESTING)
    cache.set(progress_key(c.pk), {"stage": "reading", "percent": 40.0, "at": time.time() - ORPHANED_AFTER_S - 1})
    c.refresh_from_db()
    return c


@pytest.mark.django_db(transaction=True)
def test_an_import_whose_worker_is_gone_is_cancelled_at_once_and_can_be_retried(ws_a, run_tasks):
    c = _orphaned_import(ws_a)
    services.collection_cancel(collection=c)
    c.refresh_from_db()
    assert c.status == Collection.Status.CANCELLED and "no worker" in c.error
    assert cache.get(cancel_key(c.pk)) is None  # a retried import must not stop at once
    run_tasks(services.collection_retry, collection=c)
    c.refresh_from_db()
    assert c.status == Collection.Status.DONE, c.error
    assert total_by_name(ws_a) == EXPECTED_TOTAL


@pytest.mark.django_db(transaction=True)
def test_an_import_that_holds_its_lock_is_only_asked_to_stop(ws_a):
    import threading

    from django.db import connection, transaction

    c = _orphaned_import(ws_a)  # old progress, but a live import holds the row (here: another connection)
    locked, release = threading.Event(), threading.Event()

    def live_import():
        with transaction.atomic():
            list(Collection.objects.select_for_update().filter(pk=c.pk).values_list("pk", flat=True))
            locked.set()
            release.wait(30)
        connection.close()

    t = threading.Thread(target=live_import)
    t.start()
    try:
        assert locked.wait(30)
        services.collection_cancel(collection=c)
        c.refresh_from_db()
        assert c.status == Collection.Status.INGESTING  # not marked: its worker will stop and roll back
        assert cache.get(cancel_key(c.pk)) is True
    finally:
        release.set()
        t.join(30)


def test_an_import_marked_cancelled_before_it_took_its_lock_stores_nothing(ws_a):
    from monitor.services import collections as module

    c = services.collection_create(workspace=ws_a, files=[THESIS / "tweets.csv", THESIS / "follows.csv"])
    real_mark = module._mark_ingesting

    def cancelled_meanwhile(collection):  # the reaper lands between 'importing' and the lock
        started = real_mark(collection)
        Collection.objects.filter(pk=collection.pk).update(status=Collection.Status.CANCELLED)
        return started

    import unittest.mock

    with unittest.mock.patch.object(module, "_mark_ingesting", cancelled_meanwhile):
        services.collection_ingest(collection_id=c.pk)
    c.refresh_from_db()
    assert c.status == Collection.Status.CANCELLED
    assert not Tweet.objects.filter(workspace=ws_a).exists()
