"""Nobody who may read conversations can spell out a conversation's session key.

A conversation keeps its owner's session key, the cookie itself, and the panel is on every
page, so a signed-in editor who asks it something leaves their live admin session's key there.
The admin makes a filter of any query parameter that names a lookup on a model's own field:
`/admin/agent/conversation/?session_key__startswith=0` answered "1 conversation" or "0
conversations", so a reviewer allowed only to read conversations learnt a superuser's key a
character at a time (about 36 requests a character, 32 characters) and signed in as them. Such
lookups are refused now, as Django's UserAdmin refuses lookups on passwords.
"""

import asyncio
import re

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission

from tests.security.clients import admin_signed_in, ws_ask, ws_open

pytestmark = pytest.mark.django_db(transaction=True)

COUNTED = re.compile(r"\b\d+ conversations?\b")  # the changelist's count of its rows


async def ask_with_cookie(server, cookie: str) -> list[dict]:
    socket = await ws_open(server, cookie=cookie)
    try:
        return await ws_ask(socket, "What is pgvector?")
    finally:
        await socket.close()


def test_a_reviewer_cannot_filter_conversations_by_session_key(serve):
    users = get_user_model().objects
    users.create_user("boss", password="boss-pw-long", is_staff=True, is_superuser=True)
    reviewer = users.create_user("reviewer", password="reviewer-pw-long", is_staff=True)
    reviewer.user_permissions.add(Permission.objects.get(codename="view_conversation"))
    server = serve("admin-session-keys")

    boss = admin_signed_in(server, username="boss", password="boss-pw-long")
    key = boss.cookies["sessionid"]
    events = asyncio.run(ask_with_cookie(server, key))
    assert events[-1]["type"] == "done", events[-1]
    staff = admin_signed_in(server, username="reviewer", password="reviewer-pw-long")
    wrong = "z" if key[0] != "z" else "y"
    probes = {
        "right prefix": f"session_key__startswith={key[:4]}",
        "wrong prefix": f"session_key__startswith={wrong}",
        "whole key": f"session_key={key}",
        "range": f"session_key__gt={key[:4]}",
    }
    answers = {name: staff.get(f"/admin/agent/conversation/?{q}") for name, q in probes.items()}
    listing = staff.get("/admin/agent/conversation/")
    admin_page = boss.get("/admin/")  # still the boss's own session
    staff.close()
    boss.close()

    for name, answer in answers.items():
        assert answer.status_code == 400, (name, answer.status_code)  # before: 200, counted
        assert not COUNTED.search(answer.text), name
    assert listing.status_code == 200 and COUNTED.search(listing.text)
    assert admin_page.status_code == 200
