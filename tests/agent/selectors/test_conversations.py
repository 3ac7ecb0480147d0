"""What the chat panel restores after a reload."""

import pytest

from agent.models import ToolCall
from agent.selectors.conversations import conversation_restore
from blog.models import Article
from tests.agent.admin.factories import make_conversation, make_turn, search_hits

pytestmark = pytest.mark.django_db


TIMED_OUT = "Error: get_article_detail timed out after 10s."
INVALID = "Error: invalid arguments for search_knowledge_base: query: Input should be a string."


def test_each_step_is_restored_with_the_summary_it_showed_live():
    conversation = make_conversation()
    make_turn(
        conversation,
        status="cancelled",
        tool_calls=[
            {"result": search_hits(2)},
            {"step": 2, "ok": False, "error": TIMED_OUT, "name": "get_article_detail"},
            {"step": 2, "ok": False, "error": INVALID},
            {"step": 2, "ok": False, "error": "Error: search_knowledge_base failed (KeyError)."},
            {"step": 2, "ok": False, "error": ToolCall.CANCELLED},
            {"step": 3, "ok": False, "executed": False},
        ],
    )

    tools = conversation_restore(conversation=conversation)["turns"][0]["tools"]

    # A call cut off by Stop is "cancelled", not a failure the visitor is warned about.
    assert [(t["ok"], t["executed"], t["summary"]) for t in tools] == [
        (True, True, "2 results"),
        # A failure, with its reason as the chip said it live (it read "failed" after a reload).
        (False, True, "timed out"),
        (False, True, "invalid arguments"),
        (False, True, "failed"),
        (False, True, "cancelled"),
        (False, False, ""),
    ]


def test_a_source_unpublished_since_is_restored_as_unavailable_and_a_renamed_one_moves(
    make_article,
):
    kept = make_article(title="Still here", slug="still-here")
    pulled = make_article(title="Pulled", slug="pulled")
    renamed = make_article(title="Renamed", slug="old-name")
    conversation = make_conversation()
    make_turn(
        conversation,
        citations=[
            {"article_id": a.pk, "title": a.title, "url": f"/articles/{a.slug}/"}
            for a in (kept, pulled)
        ]
        + [
            {
                "article_id": renamed.pk,
                "title": "Renamed",
                "url": "/articles/old-name/",
                "section_url": "/articles/old-name/#setup",
            }
        ],
    )
    pulled.status = Article.Status.DRAFT
    pulled.save()
    renamed.slug = "new-name"
    renamed.save()

    citations = conversation_restore(conversation=conversation)["turns"][0]["citations"]

    assert [(c["url"], c["available"]) for c in citations] == [
        ("/articles/still-here/", True),
        ("/articles/pulled/", False),  # the panel shows its title as text, not a link to a 404
        ("/articles/new-name/", True),
    ]
    assert citations[2]["section_url"] == "/articles/new-name/#setup"
