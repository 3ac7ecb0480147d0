"""What the chat panel restores after a reload."""

import pytest

from agent.models import ToolCall
from agent.selectors.conversations import conversation_restore
from tests.agent.admin.factories import make_conversation, make_turn, search_hits

pytestmark = pytest.mark.django_db


def test_each_step_is_restored_with_the_summary_it_showed_live():
    conversation = make_conversation()
    make_turn(
        conversation,
        status="cancelled",
        tool_calls=[
            {"result": search_hits(2)},
            {"step": 2, "name": "get_article_detail", "ok": False, "error": "timed out"},
            {"step": 2, "ok": False, "error": ToolCall.CANCELLED},
            {"step": 3, "ok": False, "executed": False},
        ],
    )

    tools = conversation_restore(conversation=conversation)["turns"][0]["tools"]

    # A call cut off by Stop is "cancelled", not a failure the visitor is warned about.
    assert [(t["ok"], t["executed"], t["summary"]) for t in tools] == [
        (True, True, "2 results"),
        (False, True, ""),
        (False, True, "cancelled"),
        (False, False, ""),
    ]
