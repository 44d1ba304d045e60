"""The engine's derived rows become UNLOGGED tables on PostgreSQL: the per-cascade influence, the spreading graphs,
the daily aggregates and the publishers' day totals. They are a function of the uploaded data (tweets, retweets,
follows, follower counts: all logged), so writing them through the write-ahead log bought nothing a recompute
cannot give back, and cost a fifth to a third of a compute batch's store (``benchmarks/data_layer.md``,
2026-12-02 (later)).

Crash recovery empties unlogged tables; so does a restore from a base backup, which leaves them out. The mark
(``monitor_derivedrowsmark``, one row, unlogged too) goes with them, and the recovery sweep then marks the computed
tweets pending and recomputes each workspace (``monitor.services.derived_rows``). ``SET UNLOGGED`` rewrites each
table under an exclusive lock: on a large deployment this migration takes as long as copying those tables once.
SQLite has no unlogged tables: there it creates the mark alone."""

from django.db import migrations, models

TABLES = ("monitor_cascadeinfluence", "monitor_cascadegraph", "monitor_dailyinfluence", "monitor_publisherday")
MARK = "monitor_derivedrowsmark"


def _persistence(kind: str):
    def go(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return
        for table in (*TABLES, MARK):
            schema_editor.execute(f"ALTER TABLE {table} SET {kind}")

    return go


def _mark(apps, schema_editor):
    apps.get_model("monitor", "DerivedRowsMark").objects.using(schema_editor.connection.alias).get_or_create(pk=1)


class Migration(migrations.Migration):
    dependencies = [("monitor", "0042_follower_counts_partitioned")]

    operations = [
        migrations.CreateModel(
            name="DerivedRowsMark",
            fields=[("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID"))],
            options={"verbose_name": "derived rows mark"},
        ),
        migrations.RunPython(_persistence("UNLOGGED"), _persistence("LOGGED")),
        migrations.RunPython(_mark, migrations.RunPython.noop),
    ]
