"""Spreading graphs compressed with LZ4 instead of PostgreSQL's default pglz.

Every compute batch and every live-stream micro-batch rewrites the spreading graphs of its cascades, and pglz
made that write 3.4x slower than LZ4 (400 of the largest graphs, 7.0 MB of edges: 471 ms against 139 ms, for
29 % more space; benchmarks/stream_web.md). PostgreSQL 14+ built with LZ4 only (Debian's and the official
images are); elsewhere, and on SQLite, nothing changes. Values stored before keep their compression until they
are rewritten."""

from django.db import migrations, transaction


def lz4(apps, schema_editor):
    conn = schema_editor.connection
    if conn.vendor != "postgresql":
        return
    try:
        with transaction.atomic(using=conn.alias), conn.cursor() as cur:
            cur.execute("ALTER TABLE monitor_cascadegraph ALTER COLUMN edges SET COMPRESSION lz4")
    except Exception as exc:  # a server built without LZ4 (or older than 14): pglz stays
        print(f"\n  monitor_cascadegraph.edges keeps pglz: {exc}")


def pglz(apps, schema_editor):
    conn = schema_editor.connection
    if conn.vendor == "postgresql":
        with conn.cursor() as cur:
            cur.execute("ALTER TABLE monitor_cascadegraph ALTER COLUMN edges SET COMPRESSION pglz")


class Migration(migrations.Migration):
    dependencies = [
        ("monitor", "0018_account_workspace_bulk"),
    ]

    operations = [migrations.RunPython(lz4, pglz)]
