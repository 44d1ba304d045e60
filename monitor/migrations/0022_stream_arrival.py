"""Applied stream events are deleted; the Live page counts arrivals per cascade and second in StreamArrival.

Existing applied events: those received in the last two hours are counted into StreamArrival (so the Live
page's windows read the same after the upgrade), then every event applied without a note is deleted, as the
apply step deletes them from now on (monitor/models/stream.py says why)."""

import datetime
from collections import Counter

import django.db.models.deletion
from django.utils import timezone
from django.db import migrations, models


KEEP = datetime.timedelta(hours=2)


def count_and_delete_applied(apps, schema_editor):
    StreamEvent = apps.get_model("monitor", "StreamEvent")
    StreamArrival = apps.get_model("monitor", "StreamArrival")
    now = timezone.now()
    applied = StreamEvent.objects.filter(status="applied")
    recent = applied.filter(received_at__gte=now - KEEP).values_list(
        "workspace_id", "cascade_key", "received_at", "kind", "applied_at"
    )
    events, retweets, last = Counter(), Counter(), {}
    for ws, key, received, kind, applied_at in recent.iterator(chunk_size=10_000):
        b = (ws, key or 0, received.replace(microsecond=0))
        events[b] += 1
        retweets[b] += kind == "retweet"
        last[b] = max(last.get(b) or applied_at or now, applied_at or now)
    StreamArrival.objects.bulk_create(
        [
            StreamArrival(workspace_id=ws, cascade_key=key, second=sec, events=n, retweets=retweets[b],
                          applied_at=last[b])  # fmt: skip
            for b, n in events.items()
            for ws, key, sec in [b]
        ],
        batch_size=5_000,
    )
    applied.filter(error="").delete()


class Migration(migrations.Migration):

    dependencies = [
        ('monitor', '0021_account_name_index_dropped'),
    ]

    operations = [
        migrations.CreateModel(
            name='StreamArrival',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('cascade_key', models.BigIntegerField()),
                ('second', models.DateTimeField()),
                ('events', models.IntegerField(help_text='events of this cascade received in this second and applied')),
                ('retweets', models.IntegerField(help_text='of which retweets')),
                ('applied_at', models.DateTimeField(help_text='when the last of them was applied')),
                ('workspace', models.ForeignKey(db_constraint=False, db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='monitor.workspace')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('workspace', 'second', 'cascade_key'), name='streamarrival_unique')],
            },
        ),
        migrations.RunPython(count_and_delete_applied, migrations.RunPython.noop),
    ]
