"""The per-cascade rows keep one index, their unique (tweet, account) key: the account's and the (publisher, day)
indexes are dropped.

Every compute run and every stream micro-batch writes per-cascade rows, and each index costs every row written:
inserting 20,000 of them took 174 ms with all four indexes, 115 ms without the account's and 132 ms without
(publisher, day)'s (median of 5, same rows, benchmarks/stream_web.md). Their readers go through other tables'
indexes instead: an account's rows through the cascades it published or retweeted and the unique key
(``CascadeInfluence.objects.of_accounts``: an account has rows in no other cascade), a publisher's and a day's
through the publisher's tweets (a row's publisher and day are its tweet's author and UTC day)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("monitor", "0022_stream_arrival"),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name="cascadeinfluence",
            name="influence_by_account",
        ),
        migrations.RemoveIndex(
            model_name="cascadeinfluence",
            name="influence_for_refresh",
        ),
    ]
