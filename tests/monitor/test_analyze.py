"""Planner statistics are refreshed after a bulk import or compute (stale ones made a ranking 25x slower)."""

from __future__ import annotations

import pytest
from django.db import connection

from monitor import partitions
from monitor.db import analyze_after_bulk_write
from tests.webapp import EXPECTED_TOTAL, THESIS, publisher_day_lines, total_by_name

pytestmark = pytest.mark.skipif(connection.vendor != "postgresql", reason="ANALYZE statistics are PostgreSQL's")


def _reltuples(table: str) -> float:
    with connection.cursor() as cur:
        cur.execute("SELECT reltuples FROM pg_class WHERE relname = %s", [table])
        return float(cur.fetchone()[0])


def _rows_to_stale(table: str, floor: int) -> int:
    """The ``rows`` a write must add for ``table`` to have grown past its statistics by the threshold: what
    ANALYZE last saw (which a rolled-back transaction's ANALYZE may have left above the table's rows: PostgreSQL
    writes it in place), less the rows committed now, plus the larger of ``floor`` and a tenth."""
    seen = _reltuples(table)
    with connection.cursor() as cur:
        cur.execute("SELECT pg_stat_get_live_tuples(%s::regclass)", [table])
        committed = cur.fetchone()[0]
    return int(max(seen, 0) - committed + max(floor, 0.1 * max(seen, 0)))


def test_a_small_write_leaves_the_statistics_to_autovacuum(settings, db):
    settings.SPREADWATCH_ANALYZE_MIN_ROWS = 1000
    need = _rows_to_stale("monitor_retweet", 1000)
    with connection.cursor() as cur:
        assert analyze_after_bulk_write(cur, ["monitor_retweet"], need - 1) is False
        assert analyze_after_bulk_write(cur, ["monitor_retweet"], need) is True


def test_an_import_and_its_compute_refresh_the_statistics_of_what_they_wrote(ws_a, import_files, settings):
    settings.SPREADWATCH_ANALYZE_MIN_ROWS = 1  # the thesis example is tiny: every write counts as bulk here
    with connection.cursor() as cur:  # statistics of empty tables first (as after a migration)
        cur.execute("ANALYZE monitor_retweet, monitor_cascadeinfluence, monitor_dailyinfluence")
    assert _reltuples("monitor_retweet") <= 0 and _reltuples("monitor_cascadeinfluence") <= 0
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    assert total_by_name(ws_a) == EXPECTED_TOTAL
    # the import's 5 retweets, in its workspace's partition: the import analyses that, not the parent, whose
    # ANALYZE would sample every workspace's (monitor/partitions.py)
    assert _reltuples(partitions.name("monitor_retweet", ws_a.pk)) >= 5
    assert _reltuples(partitions.name("monitor_cascadeinfluence", ws_a.pk)) >= 6  # the compute's 6 participants
    # the daily rows in the workspace's partition too (migration 0046): the compute analyses that
    assert _reltuples(partitions.name("monitor_dailyinfluence", ws_a.pk)) >= 1


def test_a_table_is_analysed_once_it_has_grown_by_a_tenth_not_at_every_bulk_write(settings, ws_a):
    """A live stream's micro-batches rewrite many rows each but add few: only growth makes statistics stale."""
    from monitor.models import Account

    settings.SPREADWATCH_ANALYZE_MIN_ROWS = 100
    Account.objects.bulk_create([Account(workspace=ws_a, twitter_id=i) for i in range(1, 5001)])
    with connection.cursor() as cur:
        cur.execute("ANALYZE monitor_account")
        assert _reltuples("monitor_account") >= 5000
        # this test's rows are not committed, so ``rows`` counts them: a tenth of the table more is needed
        need = _rows_to_stale("monitor_account", 100)
        assert analyze_after_bulk_write(cur, ["monitor_account"], need - 1) is False
        assert analyze_after_bulk_write(cur, ["monitor_account"], need) is True


def _analysed_columns(table: str) -> set[str]:
    with connection.cursor() as cur:
        cur.execute("SELECT attname FROM pg_stats WHERE tablename = %s", [table])
        return {row[0] for row in cur.fetchall()}


def test_a_compute_refreshes_its_tweets_outcome_statistics_not_their_texts(ws_a, import_files, run_tasks, settings):
    """The tweets' text and search document do not change in a compute: their statistics (the search's samples
    every row) are not rebuilt by each batch."""
    from monitor import services

    settings.SPREADWATCH_ANALYZE_MIN_ROWS = 1
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    with connection.cursor() as cur:  # the statistics forgotten (in this test's transaction), then a compute
        cur.execute("DELETE FROM pg_statistic WHERE starelid = 'monitor_tweet'::regclass")
    assert not _analysed_columns("monitor_tweet")
    run_tasks(services.compute_run_start, workspace=ws_a, backend="cpu")
    analysed = _analysed_columns("monitor_tweet")
    assert {"compute_status", "reach", "compute_run_id"} <= analysed
    assert not analysed & {"text", "search", "created_at"}
    assert total_by_name(ws_a) == EXPECTED_TOTAL


def _statistics_of_empty_tables() -> None:
    """The result tables' statistics as after a migration: analysed empty, and their row counters zero. The
    counters are the server's, shared by the suite's tests and sent by each session at most once a second:
    left as earlier tests' commits and truncations made them, a run's analyses varied from 4 to 6 and were once
    none."""
    from monitor.algorithms.influence import RESULT_TABLES

    with connection.cursor() as cur:
        for table in RESULT_TABLES:
            cur.execute(f"ANALYZE {table}")
            cur.execute("SELECT pg_stat_reset_single_table_counters(%s::regclass)", [table])


def _publisher_days(folder) -> list:
    """3 publishers x 4 days x 5 tweets, each retweeted by 5-14 of 60 accounts, without follows: a run of many
    batches when they hold 60 participants each."""
    import numpy as np

    lines = publisher_day_lines(np.random.default_rng(3), publishers=3, days=4, tweets=5, accounts=60, retweets=(5, 15))
    (folder / "tweets.csv").write_text("\n".join(lines) + "\n")
    return [folder / "tweets.csv"]


def test_a_runs_batches_analyse_their_results_as_they_double_and_its_end_once_more(
    ws_a, import_files, settings, tmp_path
):
    """The 10M benchmark's eleven batches each analysed the result tables (5.0-5.5 s of the run): now a batch
    analyses a table once it has doubled since its last ANALYZE, and the run's end once it has grown by a tenth,
    so the pages and the warm-up plan with statistics of every row."""
    from monitor.models import CascadeInfluence, ComputeRun

    settings.SPREADWATCH_ANALYZE_MIN_ROWS = 1
    settings.SPREADWATCH_BATCH_NODES = 60  # of about 600 participants; a publisher's day has about 50
    _statistics_of_empty_tables()
    analyses: list[str] = []

    def spy(execute, sql, params, many, context):  # not CaptureQueriesContext: its log keeps 9,000 queries at most
        if sql.startswith("ANALYZE") and "monitor_cascadeinfluence" in sql:
            analyses.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(spy):
        c = import_files(ws_a, _publisher_days(tmp_path))
    assert c.status == c.Status.DONE, c.error
    run = ComputeRun.objects.get(workspace=ws_a)
    batches = run.batches.count()
    assert run.status == "done" and batches >= 8
    assert 2 <= len(analyses) <= batches // 2 + 1, (len(analyses), batches)
    rows = CascadeInfluence.objects.filter(tweet__workspace=ws_a).count()
    assert _reltuples(partitions.name("monitor_cascadeinfluence", ws_a.pk)) == rows  # the last batches' rows too


def test_a_small_runs_result_tables_are_analysed_at_its_end_whatever_the_floor(ws_a, import_files, tmp_path):
    """The floor (``SPREADWATCH_ANALYZE_MIN_ROWS``, 50,000 by default) keeps small writes from analysing big
    tables; a run's end analyses what the run grew by a tenth however few its rows (the per-day totals of a
    1M-retweet run are 25K rows, and a server may run without autovacuum)."""
    from monitor.models import PublisherDay

    _statistics_of_empty_tables()
    c = import_files(ws_a, _publisher_days(tmp_path))
    assert c.status == c.Status.DONE, c.error
    assert _reltuples("monitor_publisherday") == PublisherDay.objects.filter(workspace=ws_a).count() > 0


def test_a_table_with_a_raised_statistics_target_is_analysed_as_two_samples(ws_a):
    """The tweets' search column (target 2,000) is analysed on its own, over its large sample, and the other
    columns over the default one, once the table has more rows than that sample (instead of every text detoasted
    for a sample of every row); a smaller table is analysed whole."""
    from datetime import UTC, datetime

    from django.test.utils import CaptureQueriesContext

    from monitor.models import Account, Tweet

    author = Account.objects.create(workspace=ws_a, twitter_id=1)
    at = datetime(2020, 1, 1, tzinfo=UTC)

    def analyse() -> str:
        with CaptureQueriesContext(connection) as queries, connection.cursor() as cur:
            assert analyze_after_bulk_write(cur, ["monitor_tweet", "monitor_account"], 10**9) is True
        (sql,) = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("ANALYZE")]
        return sql

    def rows_counted() -> int:  # the tweets the split counts: live ones, plus this transaction's inserts
        with connection.cursor() as cur:
            cur.execute("SELECT pg_stat_get_live_tuples(%s::regclass) + pg_stat_get_xact_tuples_inserted(%s::regclass)",
                        ["monitor_tweet", "monitor_tweet"])  # fmt: skip
            return int(cur.fetchone()[0])

    Tweet.objects.bulk_create([Tweet(workspace=ws_a, tweet_id=k, author=author, created_at=at) for k in range(5)])
    # a default sample just above the rows counted now (300 rows per unit of target), whatever other tests left
    target = rows_counted() // 300 + 1
    with connection.cursor() as cur:
        cur.execute(f"SET LOCAL default_statistics_target = {target}")
    assert analyse() == "ANALYZE monitor_account, monitor_tweet"
    more = 300 * target - rows_counted() + 1  # then one row more than that sample
    Tweet.objects.bulk_create(
        [Tweet(workspace=ws_a, tweet_id=k, author=author, created_at=at, text=f"t {k}") for k in range(5, 5 + more)]
    )
    sql = analyse()
    assert sql.startswith('ANALYZE monitor_account, monitor_tweet ("search"), monitor_tweet ("id", '), sql
    assert '"text"' in sql and sql.count('"search"') == 1
    assert {"search", "text", "created_at", "author_id"} <= _analysed_columns("monitor_tweet")
