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
