from django.db import migrations, models
from django.db.models import Max


def count_existing_turns(apps, schema_editor):
    Conversation = apps.get_model("agent", "Conversation")
    for conversation in Conversation.objects.annotate(last=Max("turns__index")).filter(last__gt=0):
        Conversation.objects.filter(pk=conversation.pk).update(turns_started=conversation.last)


class Migration(migrations.Migration):
    dependencies = [("agent", "0002_toolcall_started_at_index")]

    operations = [
        migrations.AddField(
            model_name="conversation",
            name="turns_started",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.RunPython(count_existing_turns, migrations.RunPython.noop),
    ]
