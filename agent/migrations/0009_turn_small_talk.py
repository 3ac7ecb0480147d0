"""Turns get `small_talk`: the visitor only greeted or thanked, so nothing went unanswered.

Existing rows are labelled with the rule new turns use (`agent.small_talk`), so the "thanks!"
turns saved before this migration leave the unanswered backlog and count too.
"""

from django.db import migrations, models

from django.db.models.functions import Length

from agent.small_talk import SMALL_TALK_MAX_CHARS, is_small_talk

BATCH = 2000


def label_small_talk(apps, schema_editor):
    Turn = apps.get_model("agent", "Turn")
    short = Turn.objects.alias(length=Length("user_message"))
    rows = short.filter(length__lte=SMALL_TALK_MAX_CHARS).only("pk", "user_message")
    ids = [turn.pk for turn in rows.iterator(chunk_size=BATCH) if is_small_talk(turn.user_message)]
    for start in range(0, len(ids), BATCH):
        Turn.objects.filter(pk__in=ids[start : start + BATCH]).update(small_talk=True)


class Migration(migrations.Migration):
    dependencies = [("agent", "0008_verbose_names")]

    operations = [
        migrations.AddField(
            model_name="turn",
            name="small_talk",
            field=models.BooleanField(
                default=False,
                help_text="The visitor only greeted, thanked or said goodbye; "
                "not counted as unanswered.",
                verbose_name="small talk",
            ),
        ),
        migrations.RunPython(label_small_talk, migrations.RunPython.noop),
    ]
