"""`no_answer` becomes `answered` (citations and no decline), and turns get visitor feedback.

Existing rows are labelled with the same rule new turns use (`agent.answered`), so declines
saved before this migration join the unanswered list too.
"""

from django.db import migrations, models

from agent.answered import turn_answered


def label_answered(apps, schema_editor):
    Turn = apps.get_model("agent", "Turn")
    rows = Turn.objects.only("pk", "status", "answer", "citations", "no_answer")
    answered = [
        turn.pk
        for turn in rows.iterator(chunk_size=2000)
        if not turn.no_answer
        and turn_answered(status=turn.status, answer=turn.answer, citations=turn.citations)
    ]
    for start in range(0, len(answered), 2000):
        Turn.objects.filter(pk__in=answered[start : start + 2000]).update(answered=True)


def label_no_answer(apps, schema_editor):
    Turn = apps.get_model("agent", "Turn")
    Turn.objects.filter(answered=False, status="done").update(no_answer=True)


class Migration(migrations.Migration):
    dependencies = [("agent", "0004_cluster_turn_lease")]

    operations = [
        migrations.AddField(
            model_name="turn",
            name="answered",
            field=models.BooleanField(db_index=True, default=False),
        ),
        migrations.RunPython(label_answered, label_no_answer),
        migrations.RemoveField(model_name="turn", name="no_answer"),
        migrations.AddField(
            model_name="turn",
            name="vote",
            field=models.CharField(
                blank=True,
                choices=[("up", "Thumbs up"), ("down", "Thumbs down")],
                db_index=True,
                help_text="Visitor feedback.",
                max_length=4,
            ),
        ),
        migrations.AddField(
            model_name="turn",
            name="feedback_comment",
            field=models.TextField(blank=True),
        ),
        migrations.AddField(
            model_name="turn",
            name="feedback_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
