"""A consumer's next-events index holds only open events (queued, waiting).

It held every event ever received: 50 MB for 330,000 events of a benchmark stream, growing for as long as the
stream runs, and marking an event applied wrote a new entry into it (the status is one of its columns). Every
query that reads it asks for queued or waiting events, so the partial index serves them all; it stays the
size of the backlog, and the mark of a 10,000-event micro-batch took 82-135 ms instead of 119-171 ms
(benchmarks/stream_web.md)."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('monitor', '0019_cascadegraph_lz4'),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name='streamevent',
            name='streamevent_next',
        ),
        migrations.AddIndex(
            model_name='streamevent',
            index=models.Index(condition=models.Q(('status__in', ['queued', 'waiting'])), fields=['workspace', 'partition', 'status', 'id'], name='streamevent_next'),
        ),
    ]
