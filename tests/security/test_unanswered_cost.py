"""Junk questions visitors left behind cannot make the admin's unanswered page cost minutes.

The page groups the last 500 unanswered questions by trigram similarity, each question NFKC-
normalised whole and compared with every group so far. A question may be 4,000 characters, and
4,000 random Chinese characters (declined, as any nonsense is) are 4,000 distinct trigrams: 500
of them took 51 CPU-seconds per page load, on a thread of the web process, at every visit.
Nothing but a visitor's messages is needed to leave them: each weighs a third of an address's
message minute. A question is now grouped by its first 200 characters.
"""

import random
from datetime import UTC, datetime

import pytest
from django.contrib.auth import get_user_model

from agent.models import Conversation, Turn
from tests.security.clients import admin_signed_in

pytestmark = pytest.mark.django_db(transaction=True)

PLANTED = 200  # the cost grows with the square of this: 500 was 51 CPU-seconds


def junk(rng: random.Random, index: int) -> str:
    """4,000 random Chinese characters, or (one in four) 4,000 random symbols, which the
    grouping's normalisation reduces to nothing."""
    low, high = (0x2190, 0x2BFF) if index % 4 == 0 else (0x4E00, 0x9FFF)
    return "".join(chr(rng.randrange(low, high)) for _ in range(4000))


def plant_unanswered_junk() -> None:
    rng = random.Random(5)
    conversation = Conversation.objects.create(session_key="j" * 32)
    Turn.objects.bulk_create(
        Turn(
            conversation=conversation,
            index=index,
            user_message=junk(rng, index),
            status=Turn.Status.DONE,
            answered=False,
            started_at=datetime(2026, 11, 20, 12, 0, tzinfo=UTC),
        )
        for index in range(1, PLANTED + 1)
    )


def test_stored_junk_questions_keep_the_unanswered_page_cheap(serve):
    plant_unanswered_junk()
    get_user_model().objects.create_user(
        "boss", password="right-pw", is_staff=True, is_superuser=True
    )
    server = serve("unanswered-cost")
    staff = admin_signed_in(server, username="boss", password="right-pw")

    before = server.cpu_seconds()
    page = staff.get("/admin/agent/conversation/unanswered/", timeout=600)
    spent = server.cpu_seconds() - before
    staff.close()

    assert page.status_code == 200
    assert spent < 2.0, spent  # before: 5.8 CPU-seconds for these 200; now 0.4
    assert page.text.count('<li class="dc-question"') > PLANTED // 2  # listed, not dropped
