"""The index on (workspace, screen_name) is dropped: no query could use it, and it cost every rename.

Accounts are found by name only case-insensitively (search's ``istartswith``, ``account_by_screen_name``'s
``iexact``): on PostgreSQL ``UPPER(screen_name::text) LIKE UPPER(...)``, on SQLite ``LIKE``, neither of which a
btree over the column serves (EXPLAIN: a scan either way). Meanwhile each account a live stream names for the
first time (the follows upload creates accounts without names) rewrote an entry of it: the rename statement of a
10,000-event micro-batch took 98-167 ms with it and 49-65 ms without (benchmarks/stream_web.md)."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('monitor', '0020_streamevent_next_open_only'),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name='account',
            name='account_by_screen_name',
        ),
    ]
