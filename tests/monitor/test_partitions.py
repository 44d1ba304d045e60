"""The follows, the retweets and the follower-count snapshots, one partition per workspace with indexes built after
its first load; the daily aggregates, one partition per workspace with indexes built at the end of its first
compute run (monitor/partitions.py)."""

from __future__ import annotations

import datetime as dt
import importlib
import time

import pytest
from django.core.management import call_command
from django.db import IntegrityError, connection, transaction
from django.db.models import Count, Sum

from monitor import partitions, services
from monitor.models import (
    CascadeInfluence,
    Collection,
    ComputeRun,
    DailyInfluence,
    Follow,
    FollowerCount,
    Retweet,
    Tweet,
)
from tests.webapp import EXPECTED_TOTAL, THESIS, total_by_name

pytestmark = pytest.mark.skipif(connection.vendor != "postgresql", reason="partitions are PostgreSQL's")

FILES = [THESIS / "tweets.csv", THESIS / "follows.csv"]
TABLES = ("monitor_follow", "monitor_retweet", "monitor_followercount")
MODELS = {"monitor_follow": Follow, "monitor_retweet": Retweet, "monitor_followercount": FollowerCount}


def _partitions() -> dict[str, str]:
    """Each partition of the two tables with its bound."""
    with connection.cursor() as cur:
        cur.execute(
            """SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) FROM pg_inherits i
               JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = ANY(%s::regclass[])""",
            [list(TABLES)],
        )
        return dict(cur.fetchall())


def _indexes(table: str) -> dict[str, str]:
    with connection.cursor() as cur:
        cur.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s", [table])
        return dict(cur.fetchall())


def _rows_in(table: str) -> int:
    with connection.cursor() as cur:
        cur.execute(f"SELECT count(*) FROM {table}")
        return cur.fetchone()[0]


def _steps(c: Collection) -> dict:
    return c.timings["merge_steps_s"]


@pytest.mark.parametrize("table", TABLES)
def test_a_workspaces_first_rows_get_a_partition_of_their_own_indexed_after_the_load(table, ws_a, ws_b, import_files):
    assert not {partitions.name(table, ws_a.pk), partitions.name(table, ws_b.pk)} & set(_partitions())
    c = import_files(ws_a, FILES)
    assert c.status == Collection.Status.DONE

    part = partitions.name(table, ws_a.pk)
    assert _partitions()[part] == f"FOR VALUES IN ('{ws_a.pk}')"
    indexes = _indexes(part)
    assert set(indexes) == {f"{part}_{suffix}" for suffix, _, _ in partitions.TABLES[table]}
    for suffix, unique, columns in partitions.TABLES[table]:
        assert ("UNIQUE" in indexes[f"{part}_{suffix}"]) == unique and f"({columns})" in indexes[f"{part}_{suffix}"]
    assert not [d for d in indexes.values() if "(id)" in d]  # nothing finds these rows by id (migration 0045)
    assert not _indexes(table)  # none on the parent
    n = MODELS[table].objects.filter(workspace=ws_a).count()
    assert n > 0 and _rows_in(part) == n
    assert f"index {table}" in _steps(c)  # built once, after the rows

    import_files(ws_b, FILES)  # the other workspace: a partition of its own, the first untouched
    assert _rows_in(partitions.name(table, ws_b.pk)) == n and _rows_in(part) == n


def test_a_retweet_carries_its_tweets_workspace_and_a_snapshot_its_accounts(ws_a, ws_b, import_files):
    import_files(ws_a, FILES)
    import_files(ws_b, FILES)
    for ws in (ws_a, ws_b):
        rts = Retweet.objects.filter(workspace=ws)
        assert rts.exists() and set(rts.values_list("tweet__workspace", flat=True)) == {ws.pk}
        snapshots = FollowerCount.objects.filter(workspace=ws)
        assert snapshots.exists() and set(snapshots.values_list("account__workspace", flat=True)) == {ws.pk}
    assert Retweet.objects.count() == 2 * Retweet.objects.filter(workspace=ws_a).count()
    assert FollowerCount.objects.count() == 2 * FollowerCount.objects.filter(workspace=ws_a).count()


def test_a_later_import_writes_through_the_partitions_indexes_and_stores_each_row_once(ws_a, import_files):
    import_files(ws_a, FILES)
    follows, retweets, snapshots = (M.objects.filter(workspace=ws_a).count() for M in (Follow, Retweet, FollowerCount))
    again = import_files(ws_a, FILES)
    assert again.status == Collection.Status.DONE
    assert again.counts["follows_new"] == 0 and not {f"index {t}" for t in TABLES} & set(_steps(again))
    assert Follow.objects.filter(workspace=ws_a).count() == follows
    assert Retweet.objects.filter(workspace=ws_a).count() == retweets
    assert FollowerCount.objects.filter(workspace=ws_a).count() == snapshots
    f = Follow.objects.filter(workspace=ws_a).first()
    with pytest.raises(IntegrityError, match=r"monitor_follow_w\d+_pair"), connection.cursor() as cur:  # the key
        cur.execute(
            "INSERT INTO monitor_follow (workspace_id, follower_id, followee_id) VALUES (%s, %s, %s)",
            [ws_a.pk, f.follower_id, f.followee_id],
        )


def test_a_stored_retweet_said_to_be_earlier_moves_in_its_partition_beside_a_new_snapshot(ws_a, import_files, tmp_path):
    import_files(ws_a, FILES)
    r = Retweet.objects.filter(workspace=ws_a).select_related("tweet", "retweeter").order_by("pk").first()
    earlier = r.created_at - dt.timedelta(seconds=1)
    header = (THESIS / "tweets.csv").read_text().splitlines()[0]
    row = f"{10**15},{r.tweet.tweet_id},{r.retweeter.twitter_id},{earlier:%Y-%m-%dT%H:%M:%SZ},42,"
    (tmp_path / "tweets.csv").write_text(f"{header}\n{row}\n")
    c = import_files(ws_a, [tmp_path / "tweets.csv"])
    assert c.status == Collection.Status.DONE, c.report
    r.refresh_from_db()
    assert r.created_at == earlier and r.retweet_id == 10**15
    assert FollowerCount.objects.get(workspace=ws_a, account=r.retweeter, observed_at=earlier).count == 42


def test_an_import_that_fails_after_its_rows_leaves_no_partition(ws_a, import_files, monkeypatch):
    def fail(*args, **kwargs):
        raise RuntimeError("the disk is full")

    # the merge's step after the follows, which come after the retweets
    monkeypatch.setattr(importlib.import_module("monitor.services.ingest.merge"), "_given_edges", fail)
    c = import_files(ws_a, FILES)
    assert c.status == Collection.Status.FAILED
    assert not {partitions.name(t, ws_a.pk) for t in TABLES} & set(_partitions())
    assert not Follow.objects.filter(workspace=ws_a).exists() and not Tweet.objects.filter(workspace=ws_a).exists()

    monkeypatch.undo()  # the upload again: a first load as if nothing had happened
    c = import_files(ws_a, FILES)
    assert c.status == Collection.Status.DONE and {f"index {t}" for t in TABLES} <= set(_steps(c))


def test_a_purge_empties_the_partitions_and_a_deleted_workspace_loses_them(
    ws_a, ws_b, import_files, django_capture_on_commit_callbacks
):
    import_files(ws_a, FILES)
    import_files(ws_b, FILES)
    rows = {t: _rows_in(partitions.name(t, ws_a.pk)) for t in TABLES}

    counts = services.workspace_purge(workspace=ws_a, delete_workspace=False)
    assert counts["follow"] == rows["monitor_follow"] and counts["retweet"] == rows["monitor_retweet"]
    assert counts["followercount"] == rows["monitor_followercount"]
    for t in TABLES:
        assert _rows_in(partitions.name(t, ws_a.pk)) == 0 and partitions.name(t, ws_a.pk) in _partitions()
    import_files(ws_a, FILES)  # into the emptied partitions, through their indexes
    assert {t: _rows_in(partitions.name(t, ws_a.pk)) for t in TABLES} == rows

    a = ws_a.pk  # None once deleted
    with django_capture_on_commit_callbacks(execute=True):
        services.workspace_purge(workspace=ws_a)
    for t in TABLES:
        assert partitions.name(t, a) not in _partitions() and partitions.name(t, ws_b.pk) in _partitions()
        assert _rows_in(partitions.name(t, ws_b.pk)) == rows[t]


def test_reads_of_a_workspaces_rows_open_only_its_partition(ws_a, ws_b, import_files):
    import_files(ws_a, FILES)
    import_files(ws_b, FILES)
    with connection.cursor() as cur:
        for sql in (
            "SELECT f.follower_id FROM monitor_follow f WHERE f.workspace_id = %s AND f.follower_id = 1",
            # the tweets' workspace given, the retweets' is derived from the join's equality
            """SELECT r.retweeter_id FROM monitor_retweet r
               JOIN monitor_tweet t ON t.id = r.tweet_id AND t.workspace_id = r.workspace_id
               WHERE t.workspace_id = %s""",
        ):
            cur.execute("EXPLAIN " + sql, [ws_a.pk])
            plan = "\n".join(r[0] for r in cur.fetchall())
            table = "monitor_follow" if "monitor_follow" in sql else "monitor_retweet"
            assert partitions.name(table, ws_a.pk) in plan and partitions.name(table, ws_b.pk) not in plan, plan


@pytest.mark.django_db(transaction=True)
def test_the_test_suites_flush_drops_the_partitions_it_emptied(ws_a, import_files):
    """A transactional test's flush empties every table and drops none: the suite's plugin (``tests/webapp.py``)
    drops the partitions of the workspaces it deleted, or every later flush would truncate them all again."""
    import_files(ws_a, FILES)
    assert {partitions.name(t, ws_a.pk) for t in TABLES} <= set(_partitions())
    call_command("flush", interactive=False, verbosity=0)
    assert not _partitions()


# --- the daily aggregates: a partition per workspace, loaded without indexes by the workspace's first run ---------

DAILY = "monitor_dailyinfluence"


def _comment(part: str):
    with connection.cursor() as cur:
        cur.execute("SELECT obj_description(to_regclass(%s), 'pg_class')", [part])
        return cur.fetchone()[0]


def _daily_rows(ws) -> list:
    return sorted(
        DailyInfluence.objects.filter(workspace=ws).values_list(
            "publisher_id", "account_id", "day", "label", "influence", "cascades"
        )
    )


def _daily_by_definition(ws) -> list:
    """The daily rows as their definition gives them: the per-cascade rows summed by (publisher, account, day,
    label)."""
    rows = (
        CascadeInfluence.objects.filter(tweet__workspace=ws)
        .values_list("publisher_id", "account_id", "day", "label")
        .annotate(s=Sum("influence"), n=Count("id"))
    )
    return sorted(rows)


def _spied_loads(monkeypatch, table: str) -> list:
    """What happens to ``table``'s partitions, in order: ("batch", loading, without indexes) for each
    ``derived_begin``, ("build", table) for each index build."""
    events: list = []
    begin, build = partitions.derived_begin, partitions.build_indexes

    def spy_begin(cur, t, ws, run_pk):
        loading = begin(cur, t, ws, run_pk)
        if t == table:
            events.append(("batch", loading, _indexes(partitions.name(t, ws)) == {}))
        return loading

    def spy_build(cur, t, ws):
        if t == table:
            events.append(("build", t))
        build(cur, t, ws)

    monkeypatch.setattr(partitions, "derived_begin", spy_begin)
    monkeypatch.setattr(partitions, "build_indexes", spy_build)
    return events


def _one_pair_two_cascades(tmp_path) -> list:
    """The worked example with its second cascade moved to the first one's day: one (publisher, day) pair, which a
    run of two batches cuts."""
    same_day = tmp_path / "tweets.csv"
    same_day.write_text((THESIS / "tweets.csv").read_text().replace("2020-01-02T00", "2020-01-01T12"))
    return [same_day, THESIS / "follows.csv"]


def test_a_workspaces_first_run_writes_its_daily_rows_unindexed_and_builds_the_indexes_at_its_end(
    ws_a, import_files, run_tasks, settings, monkeypatch, tmp_path
):
    settings.SPREADWATCH_RUN_WORKERS, settings.SPREADWATCH_BATCH_MIN_NODES = 3, 1  # a batch per cascade
    events = _spied_loads(monkeypatch, DAILY)
    c = import_files(ws_a, _one_pair_two_cascades(tmp_path))
    assert c.status == Collection.Status.DONE, c.error
    run = ComputeRun.objects.get(workspace=ws_a)
    assert run.status == ComputeRun.Status.DONE and run.batches.count() == 2
    # both batches wrote into the partition without indexes (the second read the pair the first had cut by a scan),
    # and the run's end built them once
    daily_events = [e for e in events if e[0] == "batch" or e[1] == DAILY]
    assert daily_events == [("batch", True, True), ("batch", True, True), ("build", DAILY)]
    part = partitions.name(DAILY, ws_a.pk)
    indexes = _indexes(part)
    assert set(indexes) == {f"{part}_{suffix}" for suffix, _, _ in partitions.DERIVED[DAILY]}
    assert not _indexes(DAILY) and _comment(part) is None
    assert _daily_rows(ws_a) == _daily_by_definition(ws_a)
    assert sum(n for *_, n in _daily_rows(ws_a)) == CascadeInfluence.objects.filter(tweet__workspace=ws_a).count()
    assert total_by_name(ws_a) == EXPECTED_TOTAL

    events.clear()  # a later run writes through the indexes, and leaves the same rows
    again = run_tasks(services.compute_run_start, workspace=ws_a, backend="cpu")
    again.refresh_from_db()
    assert again.status == ComputeRun.Status.DONE
    assert [e for e in events if e[0] == "batch" or e[1] == DAILY] == [("batch", False, False)] * 2
    assert _daily_rows(ws_a) == _daily_by_definition(ws_a) and total_by_name(ws_a) == EXPECTED_TOTAL


def test_a_run_finds_the_partition_another_run_left_loading_and_builds_its_indexes_first(
    ws_a, import_files, run_tasks, tmp_path
):
    c = import_files(ws_a, _one_pair_two_cascades(tmp_path))
    assert c.status == Collection.Status.DONE, c.error
    expected = _daily_rows(ws_a)
    part = partitions.name(DAILY, ws_a.pk)
    stopped = ComputeRun.objects.get(workspace=ws_a)
    # as a first run leaves it when it fails or is cancelled before its end: its rows in, no indexes
    with connection.cursor() as cur:
        for suffix, _, _ in partitions.DERIVED[DAILY]:
            cur.execute(f"DROP INDEX {part}_{suffix}")
        cur.execute(f"COMMENT ON TABLE {part} IS 'loading by compute run {stopped.pk}'")

    run = run_tasks(services.compute_run_start, workspace=ws_a, backend="cpu")
    run.refresh_from_db()
    assert run.status == ComputeRun.Status.DONE
    assert set(_indexes(part)) == {f"{part}_{suffix}" for suffix, _, _ in partitions.DERIVED[DAILY]}
    assert _comment(part) is None
    assert _daily_rows(ws_a) == expected == _daily_by_definition(ws_a)


@pytest.mark.parametrize(("status", "built"), [("failed", True), ("cancelled", True), ("running", False)])
def test_the_recovery_sweep_builds_the_indexes_a_stopped_first_run_left_unbuilt(
    status, built, ws_a, import_files, run_tasks
):
    import_files(ws_a, FILES)
    part = partitions.name(DAILY, ws_a.pk)
    run = ComputeRun.objects.get(workspace=ws_a)
    ComputeRun.objects.filter(pk=run.pk).update(status=status)
    with connection.cursor() as cur:
        for suffix, _, _ in partitions.DERIVED[DAILY]:
            cur.execute(f"DROP INDEX {part}_{suffix}")
        cur.execute(f"COMMENT ON TABLE {part} IS 'loading by compute run {run.pk}'")

    out = run_tasks(services.stalled_requeue)

    assert out["daily_indexes_built"] == int(built)
    assert bool(_indexes(part)) == built and (_comment(part) is None) == built


def test_a_live_stream_batch_into_a_workspace_without_daily_rows_creates_the_partition_with_its_indexes(ws_a):
    part = partitions.name(DAILY, ws_a.pk)
    with connection.cursor() as cur:
        assert partitions.derived_begin(cur, DAILY, ws_a.pk, None) is False
    assert set(_indexes(part)) == {f"{part}_{suffix}" for suffix, _, _ in partitions.DERIVED[DAILY]}
    with connection.cursor() as cur:
        cur.execute("SELECT relpersistence FROM pg_class WHERE relname = %s", [part])
        assert cur.fetchone()[0] == "u"  # as the table was (migration 0043): its rows are computed again
    assert _comment(part) is None


CASCADE = "monitor_cascadeinfluence"


def _cascade_rows(ws) -> list:
    return sorted(
        CascadeInfluence.objects.filter(workspace=ws).values_list(
            "tweet_id", "account_id", "publisher_id", "day", "label", "influence", "followers", "role"
        )
    )


def _loading_again(ws, run) -> None:
    """The workspace's per-cascade partition as ``run`` would leave it loading: its rows in, no index."""
    part = partitions.name(CASCADE, ws.pk)
    with connection.cursor() as cur:
        for suffix, _, _ in partitions.DERIVED[CASCADE]:
            cur.execute(f"DROP INDEX {part}_{suffix}")
        cur.execute(f"COMMENT ON TABLE {part} IS 'loading by compute run {run.pk}'")


def test_a_workspaces_first_run_writes_its_per_cascade_rows_unindexed_and_builds_their_key_at_its_end(
    ws_a, import_files, run_tasks, settings, monkeypatch, tmp_path
):
    settings.SPREADWATCH_RUN_WORKERS, settings.SPREADWATCH_BATCH_MIN_NODES = 3, 1  # a batch per cascade
    from monitor.algorithms.influence import store

    events = _spied_loads(monkeypatch, CASCADE)
    deletes: list = []
    stored = store._stored_by_run

    def spy_stored(cur, batch_table, run_pk):
        deletes.append(stored(cur, batch_table, run_pk))
        return deletes[-1]

    monkeypatch.setattr(store, "_stored_by_run", spy_stored)
    c = import_files(ws_a, _one_pair_two_cascades(tmp_path))
    assert c.status == Collection.Status.DONE, c.error
    run = ComputeRun.objects.get(workspace=ws_a)
    assert run.status == ComputeRun.Status.DONE and run.batches.count() == 2
    # the first batch made the partition before it computed; both wrote into it without its index, neither
    # deleted (nothing of theirs was stored), the second read the rows of the pair the first had cut, and the
    # run's end built the key once
    assert events == [("batch", True, True), ("build", CASCADE)]
    assert deletes == [False, False]
    part = partitions.name(CASCADE, ws_a.pk)
    assert set(_indexes(part)) == {f"{part}_unique"} and _comment(part) is None and not _indexes(CASCADE)
    first = _cascade_rows(ws_a)
    assert first and {r[0] for r in first} == set(Tweet.objects.filter(workspace=ws_a).values_list("pk", flat=True))
    assert _daily_rows(ws_a) == _daily_by_definition(ws_a) and total_by_name(ws_a) == EXPECTED_TOTAL

    events.clear()  # a later run writes through the index and deletes what it replaces: the same rows
    again = run_tasks(services.compute_run_start, workspace=ws_a, backend="cpu")
    again.refresh_from_db()
    assert again.status == ComputeRun.Status.DONE
    assert events == [] and _cascade_rows(ws_a) == first
    assert _daily_rows(ws_a) == _daily_by_definition(ws_a) and total_by_name(ws_a) == EXPECTED_TOTAL


@pytest.mark.django_db(transaction=True)
def test_a_batch_that_waited_for_the_aggregate_lock_finds_the_partition_its_holder_made(ws_a):
    # two workers of one run begin its first batches at once: one makes the partition under the workspace's
    # aggregate lock while the other, which found none, waits for the lock; once let in, the second must see the
    # partition (not create it again: "relation already exists", the failure CI met with two workers)
    import threading

    from monitor.algorithms.influence.rows import AGGREGATE_LOCK_CLASS
    from monitor.algorithms.influence.store import begin_cascade_load

    run_pk, failed = 7_000_001, []

    def second_worker():
        try:
            begin_cascade_load(ws_a.pk, run_pk)
        except Exception as e:  # reported by the assertion below
            failed.append(e)
        finally:
            connection.close()

    t = threading.Thread(target=second_worker)
    with transaction.atomic(), connection.cursor() as cur:
        cur.execute("SELECT pg_advisory_xact_lock(%s, %s)", [AGGREGATE_LOCK_CLASS, ws_a.pk])
        assert partitions.derived_begin(cur, CASCADE, ws_a.pk, run_pk)  # made, loading by the run
        t.start()
        waiting = False
        for _ in range(300):  # until the second waits for the lock (after its look found no partition)
            cur.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")
            if waiting := cur.fetchone()[0] > 0:
                break
            time.sleep(0.02)
        assert waiting
    t.join(30)
    assert not t.is_alive() and failed == []
    with connection.cursor() as cur:
        assert partitions.loading_state(cur, CASCADE, ws_a.pk) == (True, run_pk)


def test_a_batch_stored_again_while_its_run_loads_the_partition_replaces_its_rows(ws_a, import_files):
    from monitor.algorithms.influence import INFLUENCE
    from monitor.algorithms.influence.store import _store

    c = import_files(ws_a, FILES)
    assert c.status == Collection.Status.DONE, c.error
    run = ComputeRun.objects.get(workspace=ws_a)
    first = _cascade_rows(ws_a)
    _loading_again(ws_a, run)
    batch = run.batches.order_by("pk").first()
    result = INFLUENCE.compute(run=run, batch=batch, backend="cpu", stop=lambda: False)
    with transaction.atomic():
        _store(run, batch, result)  # its tweets name the run: their rows are deleted before the COPY
        with connection.cursor() as cur:
            assert partitions.derived_end(cur, CASCADE, ws_a.pk, run.pk)  # a duplicate would fail the unique build
    assert _cascade_rows(ws_a) == first


def test_reads_of_a_tweets_per_cascade_rows_open_only_its_workspaces_partition(ws_a, ws_b, import_files):
    import_files(ws_a, FILES)
    import_files(ws_b, FILES)
    tweet = Tweet.objects.filter(workspace=ws_a).order_by("pk").first()
    with connection.cursor() as cur:
        cur.execute(
            "EXPLAIN SELECT * FROM monitor_cascadeinfluence WHERE workspace_id = %s AND tweet_id = %s",
            [ws_a.pk, tweet.pk],
        )
        plan = "\n".join(r[0] for r in cur.fetchall())
    assert partitions.name(CASCADE, ws_a.pk) in plan and partitions.name(CASCADE, ws_b.pk) not in plan


@pytest.mark.django_db(transaction=True)
def test_writers_attaching_partitions_in_different_orders_wait_for_each_other_without_deadlocking(ws_a, ws_b):
    """One writer attaches the follows' partition and then the snapshots', another the snapshots' and then the
    follows' (as an import loading follows on the side and a live-stream micro-batch may): the first attach takes
    every parent's lock in one order, so the second writer waits at its first attach instead of each holding the
    lock the other needs (a deadlock, which PostgreSQL would end by failing one of them)."""
    import threading

    from django.db import connections

    first_in, errors, order = threading.Event(), [], []

    def writer(ws, tables, go: threading.Event | None):
        try:
            if go is not None:
                go.wait(timeout=10)
            with transaction.atomic(), connection.cursor() as cur:
                cur.execute("SET LOCAL lock_timeout = '20s'")
                for i, table in enumerate(tables):
                    partitions.begin_load(cur, table, ws.pk)
                    order.append((ws.pk, table))
                    if go is None and i == 0:
                        first_in.set()
                        time.sleep(0.5)  # the other writer takes its first lock meanwhile
        except Exception as exc:  # reported by the test
            errors.append(exc)
        finally:
            connections.close_all()

    a = threading.Thread(target=writer, args=(ws_a, ["monitor_follow", "monitor_followercount"], None))
    b = threading.Thread(target=writer, args=(ws_b, ["monitor_followercount", "monitor_follow"], first_in))
    a.start(), b.start()
    a.join(30), b.join(30)
    assert not errors, errors
    assert order == [
        (ws_a.pk, "monitor_follow"),
        (ws_a.pk, "monitor_followercount"),
        (ws_b.pk, "monitor_followercount"),
        (ws_b.pk, "monitor_follow"),
    ]
    assert set(_partitions()) >= {partitions.name(t, ws.pk) for t in ("monitor_follow", "monitor_followercount")
                                  for ws in (ws_a, ws_b)}  # fmt: skip


@pytest.mark.django_db(transaction=True)
def test_a_partition_made_in_autocommit_takes_no_lock_beyond_its_attach(ws_a):
    """Outside a transaction (a browser test's set-up) ``LOCK TABLE`` would be refused; each statement's lock ends
    with it there, so there is no order to keep."""
    assert not connection.in_atomic_block
    partitions.create(connection.cursor(), ws_a.pk, tables=("monitor_follow", "monitor_dailyinfluence"))
    assert {partitions.name("monitor_follow", ws_a.pk)} <= set(_partitions())
