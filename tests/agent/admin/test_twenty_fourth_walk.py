"""Walk 24, the tool-call list: what each call found, beside what it was asked."""

import re

import pytest

from tests.agent.admin.factories import make_conversation, make_turn, search_hits

pytestmark = pytest.mark.django_db


def _found(page: str) -> list[str]:
    return re.findall(r'<td class="field-found">([^<]*)</td>', page)


def test_the_tool_call_list_says_which_searches_found_nothing(staff_client):
    # A search that found nothing read "OK" as one that found three: which of a day's searches
    # came up empty (the blog's gaps) took opening each call.
    conversation = make_conversation()
    make_turn(conversation, tool_calls=[
        {"arguments": {"query": "pgvector", "limit": 5}, "result": search_hits(3)},
        {"arguments": {"query": "sourdough", "limit": 5}, "result": "No relevant content found."},
        {"name": "get_article_detail", "arguments": {"article_id": 7}, "result": {"title": "A"}},
        {"arguments": {"query": "slow", "limit": 5}, "ok": False, "error": "timed out"},
    ])  # fmt: skip

    found = _found(staff_client.get("/admin/agent/toolcall/").content.decode())

    assert sorted(found) == sorted(["3 results", "no results", "—", "—"])


def test_the_chinese_list_says_it_in_chinese(staff_client):
    conversation = make_conversation()
    make_turn(conversation, tool_calls=[{"result": "No relevant content found."}])

    page = staff_client.get("/admin/agent/toolcall/", HTTP_ACCEPT_LANGUAGE="zh-hans")

    assert _found(page.content.decode()) == ["没有结果"]
    assert "找到" in page.content.decode()
