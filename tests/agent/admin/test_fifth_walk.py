"""What the fifth first-run walk found in the admin, fixed: checked with Django's client."""

import re

import pytest

from tests.agent.admin.factories import make_conversation, make_turn

pytestmark = pytest.mark.django_db

CHINESE = {"accept-language": "zh-CN,zh;q=0.9"}


def cell(html: str, column: str) -> str:
    """The text of the first row's cell in a changelist column (class field-<column>)."""
    match = re.search(rf'<td class="field-{column}[^"]*">(.*?)</td>', html, flags=re.S)
    assert match, column
    return re.sub(r"<[^>]+>", "", match.group(1)).strip()


def offline_turn(conversation, **fields):
    return make_turn(conversation, model="offline-extractive", offline=True, input_tokens=0,
                     output_tokens=0, **fields)  # fmt: skip


def test_offline_turns_read_no_tokens_not_zero_in_the_lists_and_the_transcript(staff_client):
    # A first run's every conversation and turn read "0" tokens, and its transcript
    # "0 in · 0 out": the offline model counts none, which is not a turn that cost nothing.
    conversation = make_conversation()
    offline_turn(conversation)

    conversations = staff_client.get("/admin/agent/conversation/").content.decode()
    turns = staff_client.get("/admin/agent/turn/").content.decode()
    transcript = staff_client.get(f"/admin/agent/conversation/{conversation.pk}/change/")
    html = transcript.content.decode()
    assert cell(conversations, "tokens") == "—"
    assert cell(turns, "tokens") == "—"
    assert "The offline model counts no tokens." in conversations
    assert re.search(r'data-testid="token-total">\s*<span[^>]*>—</span>', html)
    assert "0 in · 0 out" not in html and "none: offline model" in html
    chinese = staff_client.get(f"/admin/agent/conversation/{conversation.pk}/change/",
                               headers=CHINESE).content.decode()  # fmt: skip
    assert "无：离线模型" in chinese and "离线模型不计令牌。" in chinese


def test_a_model_that_counts_tokens_still_shows_its_counts(staff_client):
    conversation = make_conversation()
    offline_turn(conversation)
    make_turn(conversation, input_tokens=1200, output_tokens=34)

    conversations = staff_client.get("/admin/agent/conversation/").content.decode()
    html = staff_client.get(f"/admin/agent/conversation/{conversation.pk}/change/").content
    assert cell(conversations, "tokens") == "1,234"
    assert "1,200 in · 34 out" in html.decode()
