"""Conversations keep their session key's digest, not the key (the cookie) itself.

A row still shaped like a key (32 of [a-z0-9]) is replaced by its digest; a digest (40 hex
characters) never is, so running this again changes nothing. The digest is keyed by
SECRET_KEY: run it with the key the server runs with.
"""

from django.db import migrations

from config.sessions import key_well_formed, session_digest

BATCH = 1000


def conversations_digest(apps, schema_editor) -> None:
    Conversation = apps.get_model("agent", "Conversation")
    rows = Conversation.objects.filter(session_key__regex=r"^[a-z0-9]{32}$").only("session_key")
    changed = []
    for conversation in rows.iterator(chunk_size=BATCH):
        if key_well_formed(conversation.session_key):
            conversation.session_key = session_digest(conversation.session_key)
            changed.append(conversation)
        if len(changed) >= BATCH:
            Conversation.objects.bulk_update(changed, ["session_key"])
            changed = []
    Conversation.objects.bulk_update(changed, ["session_key"])


class Migration(migrations.Migration):
    dependencies = [("agent", "0010_turn_listed_articles")]

    # Backwards: the keys cannot be had again, and a digest still matches its owner's cookie.
    operations = [migrations.RunPython(conversations_digest, migrations.RunPython.noop)]
