"""PostgreSQL only: the bulk tables' ``id`` sequences hand each session its values 1,000 at a time instead of one by
one. Every row a COPY writes into them without an ``id`` draws one from the column's default: with a cache of one
that is a visit to the sequence (its buffer locked, a WAL record every 32 values) per row, 0.3 us of a 0.5 us
row on the benchmarks' host; with a cache, a counter in the session. At the 10M benchmark 55M rows draw an
``id`` (``benchmarks/data_layer.md``, 2026-12-04 (sixth)).

Nothing reads these keys in the order they were drawn: with a cache two sessions writing at once interleave
blocks, and a session's unused values are skipped when it ends. The accounts and the tweets keep a cache of one:
the import relies on their keys rising in the order they are drawn (an account created by an earlier part of an
import has a key above the workspace's highest before it)."""

from django.db import migrations

TABLES = (
    "monitor_retweet",
    "monitor_follow",
    "monitor_followercount",
    "monitor_givenedge",
    "monitor_cascadeinfluence",
    "monitor_dailyinfluence",
    "monitor_publisherday",
)
CACHE = 1000


def _cache(schema_editor, size: int) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    for table in TABLES:
        schema_editor.execute(f"ALTER TABLE {table} ALTER COLUMN id SET CACHE {size}")


def cached(apps, schema_editor):
    _cache(schema_editor, CACHE)


def uncached(apps, schema_editor):
    _cache(schema_editor, 1)


class Migration(migrations.Migration):
    dependencies = [("monitor", "0046_daily_partitioned")]

    operations = [migrations.RunPython(cached, uncached, elidable=False)]
