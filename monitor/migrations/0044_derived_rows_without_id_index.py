"""The per-cascade influence and the daily aggregates keep their ``id`` column but lose its index on PostgreSQL
(the primary key constraint). Every compute batch writes millions of these rows at 10M retweets, and the index of
a number nobody looks rows up by cost as much as their unique key's: loading the 10M benchmark's 10.27M
per-cascade rows in its batches' order took 32.0 s with both indexes against 19.5-20.8 s with the unique key alone,
its 10.24M daily rows 30.8-32.0 s against 19.9-20.6 s (``benchmarks/data_layer.md``, 2026-12-03). The rows are
read, replaced and deleted by their natural keys ((tweet, account); (workspace, publisher, day, label, account)),
whose unique indexes stay; ``id`` stays unique as its identity sequence numbers every row.

The models' state keeps ``id`` as the primary key (Django needs one): the admin's change lists order these two
tables by their unique key instead, and a row opened by its ``id`` in the admin is found by a scan. SQLite keeps
its primary key."""

from django.db import migrations

TABLES = ("monitor_cascadeinfluence", "monitor_dailyinfluence")


def _drop(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cur:
        for table in TABLES:
            cur.execute(
                "SELECT conname FROM pg_constraint WHERE conrelid = %s::regclass AND contype = 'p'", [table]
            )
            for (name,) in cur.fetchall():
                cur.execute(f'ALTER TABLE {table} DROP CONSTRAINT "{name}"')


def _restore(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for table in TABLES:
        schema_editor.execute(f"ALTER TABLE {table} ADD PRIMARY KEY (id)")


class Migration(migrations.Migration):
    dependencies = [("monitor", "0043_derived_rows_unlogged")]

    operations = [migrations.RunPython(_drop, _restore, elidable=False)]
