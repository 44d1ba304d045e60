"""The follows', retweets' and snapshots' partitions (one per workspace, migrations 0040-0042) lose their unique
index on ``id`` on PostgreSQL; new partitions are built without it (``monitor/partitions.py``). Nothing finds these
rows by ``id``: the merge, the compute, the pages and the exports read them by their natural keys ((follower,
followee), (tweet, retweeter), (account, time)) and the workspace, whose indexes stay, and the parent's identity
sequence keeps ``id`` unique on its own. At the 10M benchmark the three ``id`` indexes took 4.9-7.9 s each to build
after the first load (``benchmarks/data_layer.md``, 2026-12-03 (second)), and every later import kept them up.

The models' state keeps ``id`` as the primary key (Django needs one): the admin lists these rows in their unique
key's order, and a row opened there by its ``id`` is found by a scan. SQLite keeps its primary keys."""

from django.db import migrations

TABLES = ("monitor_follow", "monitor_retweet", "monitor_followercount")


def _each_partition(schema_editor, statement: str) -> None:
    """Run ``statement`` (``{part}`` filled in) on every partition of the three tables; PostgreSQL only."""
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cur:
        cur.execute(
            """SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
               WHERE i.inhparent = ANY(%s::regclass[]) ORDER BY c.relname""",
            [list(TABLES)],
        )
        for (part,) in cur.fetchall():
            cur.execute(statement.format(part=part))


def _drop(apps, schema_editor):
    _each_partition(schema_editor, 'DROP INDEX IF EXISTS "{part}_id"')


def _restore(apps, schema_editor):
    _each_partition(schema_editor, 'CREATE UNIQUE INDEX IF NOT EXISTS "{part}_id" ON "{part}" (id)')


class Migration(migrations.Migration):
    dependencies = [("monitor", "0044_derived_rows_without_id_index")]

    operations = [migrations.RunPython(_drop, _restore, elidable=False)]
