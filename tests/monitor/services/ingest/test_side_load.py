"""A workspace's first follows and retweets stored on a second connection while the import's own stores the rest,
then attached as the workspace's partitions in the import's transaction (``monitor.services.ingest.side_load``).

Only an import that owns its transaction loads on the side, so these tests run outside a test transaction
(``transaction=True``) and compare with the same upload stored on the import's one connection
(``SPREADWATCH_SIDE_LOAD = False``)."""

from __future__ import annotations

import importlib
import threading

import pytest
from django.db import connection, transaction

from monitor import partitions, services
from monitor.models import Collection, Follow, Retweet
from monitor.partitions import load_name
from monitor.services.ingest.side_load import SideLoad
from tests.monitor.services.ingest.test_parts import CSV_HEAD, T0, _big_upload, _row, _stored
from tests.webapp import THESIS, total_by_name

merge = importlib.import_module("monitor.services.ingest.merge")

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="the side load is PostgreSQL's"),
]

SIDE = ("monitor_follow", "monitor_retweet")


def _import(import_files, settings, ws, paths, *, side: bool, part_rows: int = 0, name: str = "big"):
    settings.SPREADWATCH_SIDE_LOAD = side
    settings.SPREADWATCH_IMPORT_PART_ROWS = part_rows
    settings.SPREADWATCH_READ_CHUNK_ROWS = 4 if part_rows else 0  # chunks of 4 rows: a part ends every few rows
    c = import_files(ws, paths, name=name)
    assert c.status == Collection.Status.DONE, c.error
    return c


def _tables(ws) -> dict[str, list[str]]:
    """The workspace's tables of the side's kinds (partitions and load tables alike), with their indexes."""
    names = [partitions.name(t, ws.pk) + end for t in SIDE for end in ("", partitions.LOAD_SUFFIX)]
    with connection.cursor() as cur:
        cur.execute(
            """SELECT c.relname, c.relispartition, coalesce(array_agg(i.indexname ORDER BY i.indexname)
                   FILTER (WHERE i.indexname IS NOT NULL), '{}')
               FROM pg_class c LEFT JOIN pg_indexes i ON i.tablename = c.relname
               WHERE c.relname = ANY(%s) GROUP BY c.relname, c.relispartition""",
            [names],
        )
        return {name: (part, idx) for name, part, idx in cur.fetchall()}


def _partitions_as_made_without_the_side(ws) -> dict:
    """What :func:`_tables` finds where the import made the partitions on its own connection."""
    parts = {t: partitions.name(t, ws.pk) for t in SIDE}
    return {part: (True, sorted(f"{part}_{s}" for s, _, _ in partitions.TABLES[t])) for t, part in parts.items()}


@pytest.mark.parametrize(
    "part_rows, copies, workers",
    [(0, 1, 0), (9, 1, 0), (9, 3, 2)],
    ids=["one-part", "in-parts", "in-parts-on-three-connections-with-parallel-index-workers"],
)
def test_a_first_import_loaded_on_the_side_stores_and_counts_what_one_connection_stores(
    ws_a, ws_b, import_files, settings, tmp_path, part_rows, copies, workers
):
    settings.SPREADWATCH_SIDE_LOAD_COPIES, settings.SPREADWATCH_SIDE_INDEX_WORKERS = copies, workers
    big = _big_upload(tmp_path, 1)
    alone = _import(import_files, settings, ws_a, big, side=False, part_rows=part_rows)
    side = _import(import_files, settings, ws_b, big, side=True, part_rows=part_rows)

    steps = side.timings["merge_steps_s"]
    assert not any(k.startswith("side:") for k in alone.timings["merge_steps_s"])
    # the steps that ran are timed (a key each); their seconds, rounded to the millisecond, can be 0 on a fast host
    assert "side: copy into monitor_follow" in steps and "side: index monitor_follow" in steps
    assert "index monitor_follow" not in steps  # not built on the import's connection
    assert side.counts == alone.counts
    assert _stored(ws_b) == _stored(ws_a)
    assert total_by_name(ws_b) == pytest.approx(total_by_name(ws_a), rel=1e-12)
    # the load tables are the partitions now, under their names, with their indexes; none is left
    assert _tables(ws_b) == _partitions_as_made_without_the_side(ws_b)
    assert _tables(ws_a) == _partitions_as_made_without_the_side(ws_a)
    assert not [t for t in threading.enumerate() if t.name.startswith("side-load")]


def test_a_later_part_that_reads_the_side_loaded_rows_finds_them_attached(ws_a, ws_b, import_files, settings, tmp_path):
    """Into a workspace with accounts but no follows or retweets, a later part checks its follows and retweets
    against the stored ones: the side's tables are attached first, unindexed, and the import's connection goes
    on with them and builds their indexes at the end."""
    earlier = tmp_path / "earlier.csv"
    earlier.write_text(CSV_HEAD + "".join(_row(1000 + k, 0, 1 + k, T0 + k, 100, f"u{1 + k}") for k in range(30)))
    for ws in (ws_a, ws_b):
        _import(import_files, settings, ws, [earlier], side=False, name="earlier")
        assert not Follow.objects.filter(workspace=ws).exists() and not Retweet.objects.filter(workspace=ws).exists()
    tweets, follows = _big_upload(tmp_path, 2)
    edges = follows.read_text().splitlines()[1:]
    halves = [tmp_path / "follows_1.csv", tmp_path / "follows_2.csv"]  # read in two parts, the second repeating
    halves[0].write_text("follower_id,followee_id\n" + "\n".join(edges[:50]) + "\n")
    halves[1].write_text("follower_id,followee_id\n" + "\n".join(edges[30:]) + "\n")
    big = [tweets, *halves]
    alone = _import(import_files, settings, ws_a, big, side=False, part_rows=9)
    side = _import(import_files, settings, ws_b, big, side=True, part_rows=9)

    steps = side.timings["merge_steps_s"]
    for table in SIDE:
        assert f"side: copy into {table}" in steps and f"side: index {table}" not in steps, table
        assert f"index {table}" in steps, table  # built on the import's connection after the attach
    assert side.counts == alone.counts
    assert _stored(ws_b) == _stored(ws_a)
    assert _tables(ws_b) == _partitions_as_made_without_the_side(ws_b)


@pytest.mark.parametrize(
    "where", ["on-the-side", "on-one-of-three-side-connections", "in-the-merge", "after-the-attach"]
)
def test_an_import_that_fails_while_loading_on_the_side_leaves_nothing_and_the_next_one_stores_it_all(
    ws_a, import_files, settings, monkeypatch, where
):
    from monitor.algorithms.influence import Influence

    def broken(*args, **kwargs):
        raise RuntimeError("broke after the side load")

    if where == "on-the-side":  # the side connection's COPY fails: the import fails with its error
        monkeypatch.setattr(SideLoad, "_copy", lambda self, *a: broken())
    elif where == "on-one-of-three-side-connections":  # the third part's COPY, on the third connection, fails
        settings.SPREADWATCH_SIDE_LOAD_COPIES, settings.SPREADWATCH_IMPORT_PART_ROWS = 3, 3
        settings.SPREADWATCH_READ_CHUNK_ROWS = 2
        copied = []
        real = SideLoad._copy

        def third_fails(self, table, *a):
            copied.append(table)
            if copied.count(table) == 3:
                broken()
            return real(self, table, *a)

        monkeypatch.setattr(SideLoad, "_copy", third_fails)
    elif where == "in-the-merge":  # the follows and retweets are queued on the side; not attached yet
        monkeypatch.setattr(merge, "_given_edges", broken)
    else:  # attached in the import's transaction, which then rolls back
        monkeypatch.setattr(Influence, "plan", broken)
    paths = [THESIS / "tweets.csv", THESIS / "follows.csv"]
    settings.SPREADWATCH_SIDE_LOAD = True
    c = import_files(ws_a, paths)
    assert c.status == Collection.Status.FAILED and "broke after the side load" in c.error
    assert _tables(ws_a) == {}  # no partition, no load table
    assert not Follow.objects.filter(workspace=ws_a).exists()
    monkeypatch.undo()
    again = _import(import_files, settings, ws_a, paths, side=True)
    assert "side: copy into monitor_follow" in again.timings["merge_steps_s"]
    assert _tables(ws_a) == _partitions_as_made_without_the_side(ws_a)
    assert Follow.objects.filter(workspace=ws_a).count() == 8


def test_a_load_table_a_killed_import_left_is_replaced_by_the_next_and_swept_with_its_workspace(
    ws_a, ws_b, import_files, settings
):
    with connection.cursor() as cur:
        for ws in (ws_a, ws_b):  # as a worker killed between the side's COPY and the import's end leaves them
            cur.execute(f"CREATE TABLE {load_name('monitor_follow', ws.pk)} (LIKE monitor_follow)")
            cur.execute(f"INSERT INTO {load_name('monitor_follow', ws.pk)} VALUES (1, NULL, 1, 2, {ws.pk})")
    _import(import_files, settings, ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"], side=True)
    assert Follow.objects.filter(workspace=ws_a).count() == 8  # the leftover's row is not among them
    assert _tables(ws_a) == _partitions_as_made_without_the_side(ws_a)
    gone = ws_b.pk
    services.workspace_purge(workspace=ws_b)  # its partitions are dropped once the deletion commits
    partitions.drop_orphans()
    with connection.cursor() as cur:
        cur.execute("SELECT to_regclass(%s)", [load_name("monitor_follow", gone)])
        assert cur.fetchone()[0] is None


def test_only_an_import_that_owns_its_transaction_loads_on_the_side(settings):
    settings.SPREADWATCH_SIDE_LOAD = True
    assert SideLoad.possible()
    with transaction.atomic():  # the committed load table could not roll back with an outer transaction
        assert not SideLoad.possible()
    settings.SPREADWATCH_SIDE_LOAD = False
    assert not SideLoad.possible()
