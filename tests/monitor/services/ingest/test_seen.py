"""The duplicate check of an import in parts keeps the earlier parts' references in a temporary table behind a
Bloom filter (``monitor.services.ingest.seen``)."""

from __future__ import annotations

import numpy as np
import pytest
from django.db import connection

from monitor.services.ingest.seen import DatabaseSeenTweets


def _times(sec: np.ndarray) -> np.ndarray:
    return sec.astype(np.float64) + 0.25


@pytest.mark.django_db
def test_spilled_references_are_found_with_their_file_and_line_and_new_ids_are_rarely_asked_for():
    rng = np.random.default_rng(7)
    ids = np.unique(rng.integers(1, 2**62, 200_000))
    rng.shuffle(ids)
    n = len(ids)
    rt, uid, sec = rng.integers(0, 9, n), rng.integers(1, 10**9, n), rng.integers(1.2e9, 1.6e9, n)
    lines = np.arange(n) + 2
    with connection.cursor() as cur:
        seen = DatabaseSeenTweets(cur)
        src = seen.file("a.jsonl")
        assert seen.check(src, ids, rt, uid, _times(sec), lines) == []
        seen.spill()
        assert len(seen) == 0 and seen.spilled == n  # memory holds nothing of them now

        # every spilled id is found, with the reference it had (no false negatives)
        src_b = seen.file("b.jsonl")
        known = seen._known(np.sort(ids))
        order = np.argsort(ids)
        assert known.hit.all()
        assert (known.uid == uid[order]).all() and (known.line == lines[order]).all()
        assert (known.src == src).all()
        # a contradicting row names the first one's file and line
        k = 123
        bad = seen.check(
            src_b, ids[k : k + 1], rt[k : k + 1], uid[k : k + 1] + 1, _times(sec[k : k + 1]), np.array([5])
        )
        assert bad == [
            (0, f"tweet {ids[k]} was read before (a.jsonl:{lines[k]}) by user {uid[k]}; here by user {uid[k] + 1}")
        ]

        # ids never read: none found, and the table is asked for only the filter's false positives
        fresh = np.setdiff1d(np.unique(rng.integers(1, 2**62, 300_000)), ids)
        asked = seen.asked
        assert not seen._known(fresh).hit.any()
        assert seen.asked - asked < 0.01 * len(fresh)
        seen.drop()
