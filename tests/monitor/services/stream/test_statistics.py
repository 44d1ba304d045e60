"""The planner statistics of a stream's tables refreshed beside the consumer's micro-batches, after their commit
(monitor.services.stream._statistics)."""

from __future__ import annotations

import time

import pytest
from django.db import connection, transaction

from monitor.models import Account
from monitor.services.stream._statistics import StatisticsRefresher

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="ANALYZE statistics are PostgreSQL's"),
]


def _reltuples(table: str) -> float:
    with connection.cursor() as cur:
        cur.execute("SELECT reltuples FROM pg_class WHERE relname = %s", [table])
        return float(cur.fetchone()[0])


def _commit_accounts(ws, first: int, n: int) -> None:
    """``n`` accounts, committed, with this connection's row counts sent to the server at the commit (it sends
    them at most once a second otherwise)."""
    with transaction.atomic():
        Account.objects.bulk_create([Account(workspace=ws, twitter_id=i) for i in range(first, first + n)])
        with connection.cursor() as cur:
            cur.execute("SELECT pg_stat_force_next_flush()")


@pytest.fixture
def refresher():
    r = StatisticsRefresher("test statistics")
    yield r
    r.stop()  # its connection closed before the test database is emptied


def _refresh(r: StatisticsRefresher, tables: list[str], rows: int, before: int) -> int:
    """Submit until a check has analysed something (the server may take a moment to count the rows), at most 10 s;
    returns ``r.refreshed``."""
    deadline = time.monotonic() + 10
    while True:
        r.submit(tables, rows)
        assert r.wait_idle(timeout=30)
        if r.refreshed > before or time.monotonic() > deadline:
            return r.refreshed
        time.sleep(0.2)


def test_a_grown_table_is_analysed_in_the_thread_after_the_commit_and_a_fresh_one_is_not(ws_a, settings, refresher):
    settings.SPREADWATCH_ANALYZE_MIN_ROWS = 100
    with connection.cursor() as cur:
        cur.execute("ANALYZE monitor_account")
    seen = _reltuples("monitor_account")
    _commit_accounts(ws_a, 1, 3000)
    assert _refresh(refresher, ["monitor_account"], 3000, 0) == 1
    assert _reltuples("monitor_account") >= seen + 3000
    # nothing grew since: checked, not analysed
    refresher.submit(["monitor_account"], 1)
    assert refresher.wait_idle(timeout=30)
    assert (refresher.refreshed, refresher.failed) == (1, 0)


def test_a_write_that_added_no_rows_starts_nothing(refresher):
    refresher.submit(["monitor_account"], 0)
    assert refresher._thread is None and refresher.wait_idle(timeout=1)


def test_a_failed_refresh_is_counted_and_the_next_one_still_runs(ws_a, settings, refresher):
    settings.SPREADWATCH_ANALYZE_MIN_ROWS = 100
    refresher.submit(["monitor_no_such_table"], 10)
    assert refresher.wait_idle(timeout=30)
    assert refresher.failed == 1
    with connection.cursor() as cur:
        cur.execute("ANALYZE monitor_account")
    _commit_accounts(ws_a, 10_001, 3000)
    assert _refresh(refresher, ["monitor_account"], 3000, 0) == 1


def test_stop_runs_what_is_due_then_ends_the_thread(ws_a, settings):
    settings.SPREADWATCH_ANALYZE_MIN_ROWS = 100
    r = StatisticsRefresher("test statistics")
    with connection.cursor() as cur:
        cur.execute("ANALYZE monitor_account")
    _commit_accounts(ws_a, 20_001, 3000)
    time.sleep(0.1)
    r.submit(["monitor_account"], 3000)
    r.stop()
    assert not r._thread.is_alive()
    r.submit(["monitor_account"], 3000)  # after stop: ignored, no thread started again
    assert not r._thread.is_alive()


def test_the_check_runs_outside_a_transaction_block_so_each_table_s_lock_is_let_go_at_once(monkeypatch, refresher):
    """A compute run's batch analyses the same tables inside its transaction: the thread must never hold one
    table's lock while it waits for another's."""
    import monitor.services.stream._statistics as statistics

    seen = []

    def check(cur, tables, rows, *, committed=False):
        seen.append((connection.get_autocommit(), connection.in_atomic_block, tables, rows))
        return False

    monkeypatch.setattr(statistics, "analyze_after_bulk_write", check)
    refresher.submit(["monitor_dailyinfluence", "monitor_cascadeinfluence"], 5)
    assert refresher.wait_idle(timeout=30)
    assert seen == [(True, False, ["monitor_cascadeinfluence", "monitor_dailyinfluence"], 0)]
