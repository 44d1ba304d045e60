"""Planner statistics are refreshed after a bulk import or compute (stale ones made a ranking 25x slower)."""

from __future__ import annotations

import pytest
from django.db import connection

from monitor.db import analyze_after_bulk_write
from tests.webapp import EXPECTED_TOTAL, THESIS, total_by_name

pytestmark = pytest.mark.skipif(connection.vendor != "postgresql", reason="ANALYZE statistics are PostgreSQL's")


def _reltuples(table: str) -> float:
    with connection.cursor() as cur:
        cur.execute("SELECT reltuples FROM pg_class WHERE relname = %s", [table])
        return float(cur.fetchone()[0])


def test_a_small_write_leaves_the_statistics_to_autovacuum(settings, db):
    settings.SPREADWATCH_ANALYZE_MIN_ROWS = 1000
    with connection.cursor() as cur:
        assert analyze_after_bulk_write(cur, ["monitor_retweet"], 999) is False
        assert analyze_after_bulk_write(cur, ["monitor_retweet"], 1000) is True


def test_an_import_and_its_compute_refresh_the_statistics_of_what_they_wrote(ws_a, import_files, settings):
    settings.SPREADWATCH_ANALYZE_MIN_ROWS = 1  # the thesis example is tiny: every write counts as bulk here
    with connection.cursor() as cur:  # statistics of empty tables first (as after a migration)
        cur.execute("ANALYZE monitor_retweet, monitor_cascadeinfluence, monitor_dailyinfluence")
    assert _reltuples("monitor_retweet") <= 0 and _reltuples("monitor_cascadeinfluence") <= 0
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    assert total_by_name(ws_a) == EXPECTED_TOTAL
    assert _reltuples("monitor_retweet") >= 5  # the import's 5 retweets (and any other test's rows)
    assert _reltuples("monitor_cascadeinfluence") >= 6  # the compute's 6 participants
    assert _reltuples("monitor_dailyinfluence") >= 1


def test_a_table_is_analysed_once_it_has_grown_by_a_tenth_not_at_every_bulk_write(settings, ws_a):
    """A live stream's micro-batches rewrite many rows each but add few: only growth makes statistics stale."""
    from monitor.models import Account

    settings.SPREADWATCH_ANALYZE_MIN_ROWS = 100
    Account.objects.bulk_create([Account(workspace=ws_a, twitter_id=i) for i in range(1, 5001)])
    with connection.cursor() as cur:
        cur.execute("ANALYZE monitor_account")
        assert _reltuples("monitor_account") >= 5000
        seen = _reltuples("monitor_account")
        cur.execute("SELECT n_live_tup FROM pg_stat_user_tables WHERE relname = 'monitor_account'")
        committed = cur.fetchone()[0]  # rows other tests left committed (this test's are not, so ``rows`` counts them)
        grown_by = seen - committed  # ``rows`` that put the table exactly where the ANALYZE saw it
        assert analyze_after_bulk_write(cur, ["monitor_account"], grown_by + 0.09 * seen) is False
        assert analyze_after_bulk_write(cur, ["monitor_account"], grown_by + 0.11 * seen) is True
