"""Who amplifies whom: the iteration cap a result was computed with, and whether Money stopped before it, so a
page can say what "not converged" means and a recompute with a higher cap is not answered by the capped result.
Every result so far was computed with the cap of 100: those whose Money ran 100 rounds stopped at it."""

from django.db import migrations, models


def capped_money(apps, schema_editor):
    apps.get_model("monitor", "WtfResult").objects.filter(money_iterations__gte=100).update(money_converged=False)


class Migration(migrations.Migration):
    dependencies = [("monitor", "0024_streamevent_rows")]

    operations = [
        migrations.AddField(
            model_name="wtfresult",
            name="money_converged",
            field=models.BooleanField(default=True),
        ),
        migrations.AddField(
            model_name="wtfresult",
            name="max_iter",
            field=models.PositiveIntegerField(default=100, help_text="the iteration cap of PageRank and Money"),
        ),
        migrations.RunPython(capped_money, migrations.RunPython.noop),
    ]
