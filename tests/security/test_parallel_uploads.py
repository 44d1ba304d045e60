"""Two uploads of the same files at the same moment are stored once: two browsers POST the same collection to
the upload page concurrently (two threads, each its own request and its own PostgreSQL connection and
transaction), both imports are held at the start of their merge until both have got there, so their merges
really overlap, and the workspace ends with one set of rows and the ranking of one import — no duplicate, no
failed import, nothing counted twice. What guarantees it: every bulk table's natural unique key and the
merge's ``INSERT … ON CONFLICT`` (a second transaction waits for the first's row and then skips or updates it,
where a check-then-insert would fail with a unique violation or, without the key, store the rows twice)."""

from __future__ import annotations

import threading

import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse

from monitor.models import (
    Account,
    CascadeInfluence,
    Collection,
    DailyInfluence,
    Follow,
    PublisherDay,
    Retweet,
    Tweet,
)
from tests.webapp import EXPECTED_TOTAL, THESIS, total_by_name

pytestmark = pytest.mark.django_db(transaction=True)


def _rows(ws) -> dict[str, int]:
    return {
        "accounts": Account.objects.filter(workspace=ws).count(),
        "tweets": Tweet.objects.filter(workspace=ws).count(),
        "retweets": Retweet.objects.filter(tweet__workspace=ws).count(),
        "follows": Follow.objects.filter(workspace=ws).count(),
        "influence": CascadeInfluence.objects.filter(tweet__workspace=ws).count(),
        "publisher_days": PublisherDay.objects.filter(workspace=ws).count(),
        "daily": DailyInfluence.objects.filter(workspace=ws).count(),
    }


def test_two_simultaneous_uploads_of_the_same_files_store_one_set_of_rows(ws_a, ws_b, alice, monkeypatch):
    import monitor.services.ingest as ingest
    from monitor import services

    # the reference: one import of the same files, alone, in another workspace
    ref = services.collection_create(workspace=ws_b, files=[THESIS / "tweets.csv", THESIS / "follows.csv"])
    ref.refresh_from_db()
    assert ref.status == Collection.Status.DONE, ref.error
    want = _rows(ws_b)
    assert want["retweets"] == 9 and want["follows"] == 8 and want["influence"] > 0

    merge = ingest.merge
    both_merging = threading.Barrier(2, timeout=120)
    entered = []

    def merge_together(cur, st, ws, coll, progress=None):
        entered.append(coll)
        both_merging.wait()  # BrokenBarrierError if the other import never gets here
        return merge(cur, st, ws, coll, progress)

    monkeypatch.setattr(ingest, "merge", merge_together)
    url = reverse("upload", kwargs={"ws": ws_a.slug})
    answers, errors = [], []

    def upload():
        try:
            c = Client()
            c.force_login(alice)
            with (THESIS / "tweets.csv").open("rb") as t, (THESIS / "follows.csv").open("rb") as f:
                r = c.post(url, {"files": [t, f], "format": "auto", "mode": "strict", "compute": "on"})
            answers.append(r.status_code)
        except Exception as exc:  # reported below, with the other thread's outcome
            errors.append(repr(exc))
        finally:
            connection.close()  # this thread's connection

    threads = [threading.Thread(target=upload) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not errors, errors
    assert answers == [302, 302]
    assert len(set(entered)) == 2, "both imports merged at the same time"
    cs = list(Collection.objects.filter(workspace=ws_a))
    assert [c.status for c in cs] == [Collection.Status.DONE] * 2, [(c.status, c.error) for c in cs]
    assert _rows(ws_a) == want  # one set of rows, as one import alone stores
    assert total_by_name(ws_a) == EXPECTED_TOTAL == total_by_name(ws_b)  # nothing counted twice
