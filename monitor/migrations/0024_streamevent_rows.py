"""The tweet rows the intake read from a stream record, stored beside its body (issue 17): the consumer builds its
micro-batch from them instead of reading every body a second time. Nullable, so adding it rewrites nothing."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("monitor", "0023_influence_indexes_dropped")]

    operations = [
        migrations.AddField(
            model_name="streamevent",
            name="rows",
            field=models.TextField(
                blank=True,
                help_text="the tweet rows the intake read from the body, so the consumer does not read it again "
                "(monitor.services.stream._rows); null for follows, the tweets CSV's fields and older events",
                null=True,
            ),
        ),
    ]
