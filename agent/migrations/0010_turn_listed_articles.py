"""Turns keep the articles a step-limit ending listed, so a reload lists them as live did.

Older rows have none (they were never saved): their reload still says "Try a narrower question".
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("agent", "0009_turn_small_talk")]

    operations = [
        migrations.AddField(
            model_name="turn",
            name="listed_articles",
            field=models.JSONField(blank=True, default=list, verbose_name="articles listed"),
        ),
    ]
