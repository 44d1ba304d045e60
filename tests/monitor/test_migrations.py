"""Migrations that move data: run from the migration before them on rows written by the models of that time."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE_ARRIVALS = ("monitor", "0021_account_name_index_dropped")
ARRIVALS = ("monitor", "0022_stream_arrival")


def _migrate_latest() -> None:
    """Every app to its latest migration: those that depend on monitor's (alerts' claim rules) were unapplied
    when monitor went back, and the tests after this one need them."""
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())


def _migrate(target: tuple[str, str]):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate([target])
    return executor.loader.project_state([target]).apps


def test_upgrading_counts_the_last_two_hours_of_applied_events_and_deletes_every_clean_applied_one():
    apps = _migrate(BEFORE_ARRIVALS)
    try:
        Workspace = apps.get_model("monitor", "Workspace")
        StreamEvent = apps.get_model("monitor", "StreamEvent")
        ws = Workspace.objects.create(name="Desk", slug="desk")
        now = timezone.now().replace(microsecond=0)
        second = now - dt.timedelta(minutes=5)

        def event(kind: str, key: int | None, received, status: str = "applied", error: str = "") -> int:
            return StreamEvent.objects.create(
                workspace=ws, partition=0, kind=kind, cascade_key=key, body="{}", received_at=received,
                status=status, error=error, applied_at=received if status == "applied" else None,
            ).pk  # fmt: skip

        for k in range(3):  # three retweets of cascade 1000 and its original, in one second
            event("retweet", 1000, second + dt.timedelta(microseconds=k))
        event("tweet", 1000, second)
        event("follow", None, second)
        old = event("retweet", 2000, now - dt.timedelta(hours=3))  # applied before the window: deleted, not counted
        noted = event("retweet", 1000, second, error="applied without a row: conflicts with a stored tweet")
        queued = event("retweet", 1000, now, status="queued")
        dead = event("retweet", 3000, now, status="dead", error="original 3000 never arrived")

        apps = _migrate(ARRIVALS)
        StreamEvent = apps.get_model("monitor", "StreamEvent")
        StreamArrival = apps.get_model("monitor", "StreamArrival")
        assert set(StreamEvent.objects.values_list("pk", flat=True)) == {noted, queued, dead}
        assert old not in set(StreamEvent.objects.values_list("pk", flat=True))
        counts = {
            (a.cascade_key, a.second): (a.events, a.retweets) for a in StreamArrival.objects.filter(workspace_id=ws.pk)
        }
        assert counts == {(1000, second): (5, 4), (0, second): (1, 0)}  # the noted retweet counts: it was applied
    finally:
        _migrate_latest()


def test_upgrading_gives_each_workspace_the_unit_its_stored_data_gives():
    """Migration 0026 (issue 40): followers where any tweet or retweet carries a count, retweeters where tweets
    carry none, not fixed where there is no tweet yet."""
    apps = _migrate(("monitor", "0025_wtfresult_max_iter"))
    try:
        Workspace, Account, Tweet, Retweet = (apps.get_model("monitor", m) for m in ("Workspace", "Account", "Tweet",
                                                                                     "Retweet"))  # fmt: skip
        now = timezone.now()

        def workspace(slug: str, author_followers=None, retweet_followers=None, tweets: bool = True) -> int:
            ws = Workspace.objects.create(name=slug, slug=slug)
            if tweets:
                a, b = (Account.objects.create(workspace=ws, twitter_id=k) for k in (1, 2))
                t = Tweet.objects.create(workspace=ws, tweet_id=10, author=a, created_at=now,
                                         author_followers=author_followers)  # fmt: skip
                Retweet.objects.create(tweet=t, retweeter=b, created_at=now, followers_count=retweet_followers)
            return ws.pk

        ids = {
            "trees": workspace("trees"),
            "counted-original": workspace("counted-original", author_followers=5.0),
            "counted-retweet": workspace("counted-retweet", retweet_followers=0.0),
            "empty": workspace("empty", tweets=False),
        }
        apps = _migrate(("monitor", "0026_workspace_unit"))
        units = dict(apps.get_model("monitor", "Workspace").objects.values_list("pk", "unit"))
        assert {slug: units[pk] for slug, pk in ids.items()} == {
            "trees": "retweeters",
            "counted-original": "followers",
            "counted-retweet": "followers",
            "empty": "",
        }
    finally:
        _migrate_latest()


@pytest.mark.skipif(connection.vendor != "postgresql", reason="partitions are PostgreSQL's")
def test_upgrading_moves_each_workspaces_follows_into_a_partition_of_its_own_with_their_ids():
    """Migration 0040 (issue 42): the follows, with their ids, one indexed partition per workspace; the next id
    follows the largest; and back again."""
    apps = _migrate(("monitor", "0039_search_pairs"))
    try:
        Workspace, Account, Follow = (apps.get_model("monitor", m) for m in ("Workspace", "Account", "Follow"))
        rows = {}
        for slug in ("desk", "lab"):
            ws = Workspace.objects.create(name=slug, slug=slug)
            a, b, c = (Account.objects.create(workspace=ws, twitter_id=k) for k in (1, 2, 3))
            made = [Follow.objects.create(workspace=ws, follower=x, followee=y) for x, y in ((a, b), (b, c), (c, a))]
            rows[ws.pk] = {(f.pk, f.follower_id, f.followee_id) for f in made}

        apps = _migrate(("monitor", "0040_follows_partitioned"))
        Follow = apps.get_model("monitor", "Follow")
        for ws, want in rows.items():
            assert set(Follow.objects.filter(workspace_id=ws).values_list("pk", "follower_id", "followee_id")) == want
        with connection.cursor() as cur:
            cur.execute("SELECT count(*) FROM pg_inherits WHERE inhparent = 'monitor_follow'::regclass")
            assert cur.fetchone()[0] == 2
            cur.execute("SELECT indexname FROM pg_indexes WHERE tablename = %s", [f"monitor_follow_w{min(rows)}"])
            assert {r[0] for r in cur.fetchall()} == {
                f"monitor_follow_w{min(rows)}_pair",
                f"monitor_follow_w{min(rows)}_id",
            }
        ws = max(rows)
        Account = apps.get_model("monitor", "Account")
        a, b = Account.objects.filter(workspace_id=ws, twitter_id__in=(1, 3)).order_by("twitter_id")
        new = Follow.objects.create(workspace_id=ws, follower_id=a.pk, followee_id=b.pk)
        assert new.pk > max(pk for want in rows.values() for pk, _, _ in want)

        apps = _migrate(("monitor", "0039_search_pairs"))  # back: one plain table with every row
        Follow = apps.get_model("monitor", "Follow")
        assert Follow.objects.count() == 7
    finally:
        _migrate_latest()


def test_upgrading_gives_each_retweet_its_tweets_workspace_and_partitions_them_on_postgresql():
    """Migration 0041 (issue 42): every retweet carries its tweet's workspace; on PostgreSQL the retweets move, with
    their ids, into one indexed partition per workspace; and back again."""
    apps = _migrate(("monitor", "0040_follows_partitioned"))
    try:
        Workspace, Account, Tweet, Retweet = (apps.get_model("monitor", m) for m in ("Workspace", "Account", "Tweet",
                                                                                     "Retweet"))  # fmt: skip
        now = timezone.now()
        rows = {}
        for slug in ("desk", "lab"):
            ws = Workspace.objects.create(name=slug, slug=slug)
            a, b, c = (Account.objects.create(workspace=ws, twitter_id=k) for k in (1, 2, 3))
            t = Tweet.objects.create(workspace=ws, tweet_id=10, author=a, created_at=now)
            made = [Retweet.objects.create(tweet=t, retweeter=x, created_at=now) for x in (b, c)]
            rows[ws.pk] = {(r.pk, r.tweet_id, r.retweeter_id) for r in made}

        apps = _migrate(("monitor", "0041_retweets_partitioned"))
        Retweet = apps.get_model("monitor", "Retweet")
        for ws, want in rows.items():
            assert set(Retweet.objects.filter(workspace_id=ws).values_list("pk", "tweet_id", "retweeter_id")) == want
        if connection.vendor == "postgresql":
            with connection.cursor() as cur:
                cur.execute("SELECT count(*) FROM pg_inherits WHERE inhparent = 'monitor_retweet'::regclass")
                assert cur.fetchone()[0] == 2
                part = f"monitor_retweet_w{min(rows)}"
                cur.execute("SELECT indexname FROM pg_indexes WHERE tablename = %s", [part])
                assert {r[0] for r in cur.fetchall()} == {f"{part}_pair", f"{part}_by_account", f"{part}_id"}

        apps = _migrate(("monitor", "0040_follows_partitioned"))  # back: one plain table with every row
        assert apps.get_model("monitor", "Retweet").objects.count() == 4
    finally:
        _migrate_latest()


def test_upgrading_gives_each_snapshot_its_accounts_workspace_and_partitions_them_on_postgresql():
    """Migration 0042 (issue 42): every follower-count snapshot carries its account's workspace; on PostgreSQL they
    move, with their ids, into one indexed partition per workspace; and back again."""
    apps = _migrate(("monitor", "0041_retweets_partitioned"))
    try:
        Workspace, Account, FollowerCount = (apps.get_model("monitor", m) for m in ("Workspace", "Account",
                                                                                    "FollowerCount"))  # fmt: skip
        now = timezone.now()
        rows = {}
        for slug in ("desk", "lab"):
            ws = Workspace.objects.create(name=slug, slug=slug)
            a, b = (Account.objects.create(workspace=ws, twitter_id=k) for k in (1, 2))
            made = [FollowerCount.objects.create(account=x, observed_at=now, count=n) for x, n in ((a, 5), (b, 7))]
            rows[ws.pk] = {(s.pk, s.account_id, s.count) for s in made}

        apps = _migrate(("monitor", "0042_follower_counts_partitioned"))
        FollowerCount = apps.get_model("monitor", "FollowerCount")
        for ws, want in rows.items():
            assert set(FollowerCount.objects.filter(workspace_id=ws).values_list("pk", "account_id", "count")) == want
        if connection.vendor == "postgresql":
            with connection.cursor() as cur:
                cur.execute("SELECT count(*) FROM pg_inherits WHERE inhparent = 'monitor_followercount'::regclass")
                assert cur.fetchone()[0] == 2

        apps = _migrate(("monitor", "0041_retweets_partitioned"))  # back: one plain table with every row
        assert apps.get_model("monitor", "FollowerCount").objects.count() == 4
    finally:
        _migrate_latest()


def _one_daily_row(apps) -> None:
    """A workspace, an account and one daily row of it (influence 2.5), by the models of ``apps``."""
    Workspace, Account, DailyInfluence = (apps.get_model("monitor", m) for m in ("Workspace", "Account",
                                                                                 "DailyInfluence"))  # fmt: skip
    ws = Workspace.objects.create(name="desk", slug="desk")
    a = Account.objects.create(workspace=ws, twitter_id=1)
    DailyInfluence.objects.create(
        workspace=ws, publisher=a, account=a, day=dt.date(2020, 1, 1), influence=2.5, cascades=1
    )


@pytest.mark.skipif(connection.vendor != "postgresql", reason="unlogged tables are PostgreSQL's")
def test_upgrading_makes_the_engines_results_unlogged_keeping_their_rows_and_writes_the_mark():
    """Migration 0043 (issue 42): the derived tables become unlogged with their rows, the mark is written; and back."""

    def persistence() -> set[str]:
        with connection.cursor() as cur:
            cur.execute("SELECT relpersistence FROM pg_class WHERE relname = 'monitor_dailyinfluence'")
            return {r[0] for r in cur.fetchall()}

    apps = _migrate(("monitor", "0042_follower_counts_partitioned"))
    try:
        _one_daily_row(apps)
        assert persistence() == {"p"}

        apps = _migrate(("monitor", "0043_derived_rows_unlogged"))
        assert persistence() == {"u"}
        assert list(apps.get_model("monitor", "DailyInfluence").objects.values_list("influence", flat=True)) == [2.5]
        assert apps.get_model("monitor", "DerivedRowsMark").objects.filter(pk=1).exists()

        apps = _migrate(("monitor", "0042_follower_counts_partitioned"))  # back: logged, the rows kept
        assert persistence() == {"p"}
        assert apps.get_model("monitor", "DailyInfluence").objects.count() == 1
    finally:
        _migrate_latest()


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the index is dropped on PostgreSQL only")
def test_upgrading_drops_the_derived_rows_id_index_keeping_their_unique_keys_and_back():
    """Migration 0044 (issue 42): the per-cascade and daily rows lose the index on ``id``, not their unique keys
    nor their rows; the way back builds it again."""
    tables = ("monitor_cascadeinfluence", "monitor_dailyinfluence")

    def indexes() -> dict[str, set[str]]:
        with connection.cursor() as cur:
            cur.execute(
                """SELECT c.relname, pg_get_indexdef(i.indexrelid) FROM pg_index i
                   JOIN pg_class c ON c.oid = i.indrelid WHERE c.relname = ANY(%s)""",
                [list(tables)],
            )
            got: dict[str, set[str]] = {t: set() for t in tables}
            for table, definition in cur.fetchall():
                got[table].add(definition.split(" USING btree ")[1])
            return got

    apps = _migrate(("monitor", "0043_derived_rows_unlogged"))
    try:
        _one_daily_row(apps)
        assert all("(id)" in found for found in indexes().values())

        apps = _migrate(("monitor", "0044_derived_rows_without_id_index"))
        after = indexes()
        assert not any("(id)" in found for found in after.values())
        assert "(tweet_id, account_id)" in after["monitor_cascadeinfluence"]
        assert "(workspace_id, publisher_id, day, label, account_id)" in after["monitor_dailyinfluence"]
        assert list(apps.get_model("monitor", "DailyInfluence").objects.values_list("influence", flat=True)) == [2.5]

        _migrate(("monitor", "0043_derived_rows_unlogged"))  # back: the primary key again
        assert all("(id)" in found for found in indexes().values())
    finally:
        _migrate_latest()


@pytest.mark.skipif(connection.vendor != "postgresql", reason="partitions are PostgreSQL's")
def test_upgrading_drops_the_bulk_partitions_id_index_keeping_their_keys_and_rows_and_back():
    """Migration 0045 (issue 42): every workspace's partition of the follows, retweets and snapshots loses its
    index on ``id``, not its unique key nor its rows; the way back builds it again."""
    tables = ("monitor_follow", "monitor_retweet", "monitor_followercount")
    keys = {  # the partitions' indexes before 0045, as monitor/partitions.py built them then: (unique, columns)
        "monitor_follow": {"pair": (True, "(follower_id, followee_id)"), "id": (True, "(id)")},
        "monitor_retweet": {
            "pair": (True, "(tweet_id, retweeter_id)"),
            "by_account": (False, "(retweeter_id)"),
            "id": (True, "(id)"),
        },
        "monitor_followercount": {"snapshot": (True, "(account_id, observed_at)"), "id": (True, "(id)")},
    }

    def indexes(part: str) -> set[str]:
        with connection.cursor() as cur:
            cur.execute("SELECT indexdef FROM pg_indexes WHERE tablename = %s", [part])
            return {d.split(" USING btree ")[1] for (d,) in cur.fetchall()}

    apps = _migrate(("monitor", "0044_derived_rows_without_id_index"))
    try:
        Workspace, Account, Follow = (apps.get_model("monitor", n) for n in ("Workspace", "Account", "Follow"))
        parts = []
        with connection.cursor() as cur:
            for slug in ("desk", "wire"):
                ws = Workspace.objects.create(name=slug, slug=slug)
                for table in tables:
                    part = f"{table}_w{ws.pk}"
                    parts.append(part)
                    cur.execute(f"CREATE TABLE {part} (LIKE {table} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)")
                    cur.execute(f"ALTER TABLE {table} ATTACH PARTITION {part} FOR VALUES IN ({ws.pk})")
                    for suffix, (unique, columns) in keys[table].items():
                        cur.execute(f"CREATE {'UNIQUE ' if unique else ''}INDEX {part}_{suffix} ON {part} {columns}")
                a, b = (Account.objects.create(workspace=ws, twitter_id=i) for i in (1, 2))
                Follow.objects.create(workspace=ws, follower=a, followee=b)
        assert all("(id)" in indexes(p) for p in parts)

        _migrate(("monitor", "0045_bulk_partitions_without_id_index"))
        for part in parts:
            table = part.rsplit("_w", 1)[0]
            assert indexes(part) == {columns for suffix, (_, columns) in keys[table].items() if suffix != "id"}
        assert Follow.objects.count() == 2

        _migrate(("monitor", "0044_derived_rows_without_id_index"))  # back: the id index again
        assert all("(id)" in indexes(p) for p in parts)
    finally:
        _migrate_latest()


@pytest.mark.skipif(connection.vendor != "postgresql", reason="partitions are PostgreSQL's")
def test_upgrading_moves_each_workspaces_daily_rows_into_an_unlogged_partition_with_their_ids_and_back():
    """Migration 0046 (issue 42): the daily aggregates become a table partitioned by workspace, each workspace's
    rows in an unlogged partition of their own with the unique key and the days' index, none on the parent, their
    ids kept and the sequence going on after them; the way back gives the plain table its two indexes again."""
    apps = _migrate(("monitor", "0045_bulk_partitions_without_id_index"))
    try:
        Workspace, Account, Daily = (apps.get_model("monitor", n) for n in ("Workspace", "Account", "DailyInfluence"))
        rows = {}
        for slug in ("desk", "wire"):
            ws = Workspace.objects.create(name=slug, slug=slug)
            p, a = (Account.objects.create(workspace=ws, twitter_id=i) for i in (1, 2))
            for n, acc in enumerate((p, a)):
                d = Daily.objects.create(
                    workspace=ws, publisher=p, account=acc, day=dt.date(2020, 1, 1 + n), influence=1.5 + n, cascades=1
                )
                rows[d.pk] = (ws.pk, acc.pk, 1.5 + n)
        top = max(rows)

        apps = _migrate(("monitor", "0046_daily_partitioned"))
        Daily = apps.get_model("monitor", "DailyInfluence")
        assert {d.pk: (d.workspace_id, d.account_id, d.influence) for d in Daily.objects.all()} == rows
        with connection.cursor() as cur:
            cur.execute("SELECT relkind FROM pg_class WHERE relname = 'monitor_dailyinfluence'")
            assert cur.fetchone()[0] == "p"
            cur.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'monitor_dailyinfluence'")
            assert cur.fetchall() == []  # none on the parent
            for ws in {w for w, _, _ in rows.values()}:
                part = f"monitor_dailyinfluence_w{ws}"
                cur.execute("SELECT relpersistence FROM pg_class WHERE relname = %s", [part])
                assert cur.fetchone()[0] == "u"
                cur.execute("SELECT indexdef FROM pg_indexes WHERE tablename = %s", [part])
                defs = sorted(d.split(" USING btree ")[1] for (d,) in cur.fetchall())
                assert defs == ["(day)", "(publisher_id, day, label, account_id)"]
                cur.execute(f"SELECT count(*) FROM {part}")
                assert cur.fetchone()[0] == 2
        ws, acc = Workspace.objects.first(), Account.objects.first()
        new = Daily.objects.create(
            workspace_id=ws.pk, publisher_id=acc.pk, account_id=acc.pk, day=dt.date(2021, 1, 1), influence=1.0,
            cascades=1,
        )  # fmt: skip
        assert new.pk > top  # the identity goes on after the moved rows

        _migrate(("monitor", "0045_bulk_partitions_without_id_index"))  # back: the plain table, its two indexes
        with connection.cursor() as cur:
            cur.execute("SELECT relkind, relpersistence FROM pg_class WHERE relname = 'monitor_dailyinfluence'")
            assert cur.fetchone() == ("r", "u")
            cur.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'monitor_dailyinfluence'")
            assert {r[0] for r in cur.fetchall()} == {"daily_unique", "daily_for_workspace_ranking"}
            cur.execute("SELECT count(*) FROM monitor_dailyinfluence")
            assert cur.fetchone()[0] == 5
    finally:
        _migrate_latest()


@pytest.mark.skipif(connection.vendor != "postgresql", reason="sequence caches are PostgreSQL's")
def test_upgrading_caches_the_bulk_tables_keys_but_not_the_accounts_or_tweets_and_back():
    """Migration 0047 (issue 42): the bulk tables' ``id`` sequences hand out 1,000 values at a time; the accounts'
    and tweets', whose keys the import reads in the order they were drawn, one; the way back, one everywhere."""
    names = ("retweet", "follow", "followercount", "givenedge", "cascadeinfluence", "dailyinfluence", "publisherday")
    bulk = {f"monitor_{n}" for n in names}

    def caches() -> dict[str, int]:
        with connection.cursor() as cur:
            cur.execute(
                """SELECT t, s.cache_size FROM unnest(%s::text[]) t
                   JOIN pg_sequences s ON s.schemaname || '.' || s.sequencename = pg_get_serial_sequence(t, 'id')""",
                [sorted(bulk | {"monitor_account", "monitor_tweet"})],
            )
            return dict(cur.fetchall())

    _migrate(("monitor", "0046_daily_partitioned"))
    try:
        assert set(caches().values()) == {1}
        _migrate(("monitor", "0047_bulk_sequences_cached"))
        got = caches()
        assert {t for t, size in got.items() if size == 1000} == bulk
        assert got["monitor_account"] == got["monitor_tweet"] == 1
        _migrate(("monitor", "0046_daily_partitioned"))  # back
        assert set(caches().values()) == {1}
    finally:
        _migrate_latest()
