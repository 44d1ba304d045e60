"""A workspace's unit (issue 40): what its cascades' reach counts, followers or retweeters, fixed by its first data
and never changed by later data (monitor/services/units.py).

Existing workspaces get the unit their stored data gives, by the rule the compute applied to them: followers where
any tweet or retweet carries a follower count, retweeters where tweets carry none, not fixed ("") where there is no
tweet yet (the next data fixes it)."""

from django.db import migrations, models


def _fix_units(apps, schema_editor):
    Workspace = apps.get_model("monitor", "Workspace")
    Tweet = apps.get_model("monitor", "Tweet")
    Retweet = apps.get_model("monitor", "Retweet")
    for ws in Workspace.objects.all().only("pk"):
        tweets = Tweet.objects.filter(workspace_id=ws.pk)
        if not tweets.exists():
            continue
        counted = (
            tweets.filter(author_followers__isnull=False).exists()
            or Retweet.objects.filter(tweet__workspace_id=ws.pk, followers_count__isnull=False).exists()
        )
        Workspace.objects.filter(pk=ws.pk).update(unit="followers" if counted else "retweeters")


class Migration(migrations.Migration):
    dependencies = [("monitor", "0025_wtfresult_max_iter")]

    operations = [
        migrations.AddField(
            model_name="workspace",
            name="unit",
            field=models.CharField(
                blank=True,
                choices=[
                    ("", "not fixed yet (no tweets)"),
                    ("followers", "followers reached"),
                    ("retweeters", "retweeters reached"),
                ],
                default="",
                max_length=12,
            ),
        ),
        migrations.RunPython(_fix_units, migrations.RunPython.noop),
    ]
