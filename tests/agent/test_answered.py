"""Answered or not: every finished turn records it and sends it in `done`, for any model."""

import json

import pytest
from channels.db import database_sync_to_async

from agent.answered import is_decline, turn_answered
from agent.llm.offline import DONT_KNOW
from agent.llm.offline_declines import (
    NO_FIGURE,
    NO_FIGURE_FOR_PART,
    NOT_MENTIONED,
    NOT_MENTIONED_FOR_PART,
)
from agent.prompts import SYSTEM_PROMPT
from agent.selectors import turn_unanswered
from agent.tools.search_knowledge_base import NO_RESULTS
from testing_support.model_server import text_response, tool_call_response
from tests.agent.chat_helpers import ask, connect, saved_turns


@pytest.mark.parametrize(
    "text",
    [
        DONT_KNOW["en"],
        DONT_KNOW["zh"],
        "I could not find anything on IVFFlat list sizes in the blog.",
        "The blog doesn't cover running the chat offline.",
        "Sorry, there is no information about that here.",
        "博客里没有提到这个问题。",
        "我找不到相关的文章。",
        "The articles don’t mention Kubernetes.",
        "Sorry. I couldn't find that in the blog, but here is something close.",
        "That isn't covered in this blog's articles.",
        # The topic is discussed, the asked-for figure is not.
        NO_FIGURE["en"].format(link="[Why step limits matter](/articles/why-step-limits/)"),
        NO_FIGURE["zh"].format(link="[向量检索入门](/articles/vectors/)"),
        # One part of a two-part question: said after the answered part, as a decline.
        NO_FIGURE_FOR_PART["en"].format(part="how long does a search get before it times out"),
        NO_FIGURE_FOR_PART["zh"].format(part="还有，一次最多允许同时并发多少个工具调用"),
        NOT_MENTIONED_FOR_PART["en"].format(part="what does tiktoken count", name="tiktoken"),
        NOT_MENTIONED_FOR_PART["zh"].format(part="结巴分词怎么加词典", name="结巴"),
        "The articles don't state a default for ef_search.",
        "文章里没有写明默认值。",
    ],
)
def test_declines_are_recognised_in_both_languages(text):
    assert is_decline(text)


@pytest.mark.parametrize(
    "text",
    [
        "Docent caps each turn at 5 model calls, not 10.",
        "HNSW does not need training data, unlike IVFFlat.",
        "混合检索同时使用关键词和向量。",
        "Nothing beats a hard cap: the loop stops after five calls.",
        # Quoted article text that says "not covered" of something other than the blog.
        "WebSockets are not covered by Django's CSRF protection, so check the Origin header.",
        # A decline phrase inside a quote further down is the article talking, not a decline.
        "The application executes the tools. Asked with every tool removed, a tool-driven "
        "agent should say it does not know.",
        "- Retry transient errors.\n\nThe blog's example says nothing is found when the "
        "search returns no hits.",
    ],
)
def test_answers_that_say_no_in_passing_are_not_declines(text):
    assert not is_decline(text)


def test_answered_needs_a_finished_turn_a_citation_and_no_decline():
    cited = [{"article_id": 1, "title": "T", "url": "/articles/t/"}]
    assert turn_answered(status="done", answer="Cap it at five.", citations=cited)
    assert not turn_answered(status="done", answer="Cap it at five.", citations=[])
    assert not turn_answered(status="done", answer=DONT_KNOW["en"], citations=cited)
    assert not turn_answered(status="cancelled", answer="Cap it at five.", citations=cited)


@pytest.mark.django_db(transaction=True)
async def test_offline_decline_is_sent_and_recorded_as_not_answered():
    socket = await connect()

    events = await ask(socket, "Does the chat keep working when the browser is offline?")

    assert events[0]["offline"] is True
    assert events[-1]["type"] == "done" and events[-1]["answered"] is False
    [turn] = await saved_turns()
    assert turn.answer == DONT_KNOW["en"] and turn.answered is False
    await socket.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_offline_answer_with_a_citation_is_recorded_as_answered(make_article, settings):
    settings.SEARCH_MIN_RELEVANCE = 0.0  # about recording, not the relevance bar: any hit will do

    def index():
        from blog.indexing import chunk_reindex

        article = make_article(
            title="Why step limits matter",
            slug="why-step-limits",
            body="## The cap\n\nDocent caps each turn at five model calls to stop runaway loops.",
        )
        chunk_reindex(article=article)

    await database_sync_to_async(index)()
    socket = await connect()

    events = await ask(socket, "How many model calls does Docent allow per turn?")

    assert [e["url"] for e in events if e["type"] == "citation"] == ["/articles/why-step-limits/"]
    assert events[-1]["answered"] is True
    [turn] = await saved_turns()
    assert turn.answered is True
    await socket.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_a_real_model_decline_is_not_answered_even_with_a_link(scripted, make_article):
    await database_sync_to_async(make_article)(title="Channels", slug="channels")
    scripted.enqueue(
        text_response(
            ["The blog doesn't cover that; the nearest is [Channels](/articles/channels/)."]
        )
    )
    socket = await connect()
    conversation = (await ask(socket, "Do you cover Kubernetes?"))[0]["conversation_id"]
    await socket.disconnect()

    [turn] = await saved_turns()
    assert turn.answered is False
    unanswered = await database_sync_to_async(lambda: list(turn_unanswered()))()
    assert [str(t.conversation_id) for t in unanswered] == [conversation]


@pytest.mark.django_db(transaction=True)
async def test_a_decline_linking_an_article_it_read_cites_nothing(scripted, make_article):
    # The offline model's decline now links the nearest article it read: a pointer to go and
    # read, not the answer's source. Counted as a citation, it put a Sources list under
    # "don't answer this".
    article = await database_sync_to_async(make_article)(title="Channels", slug="channels")
    read = json.dumps({"article_id": article.pk})
    decline = NOT_MENTIONED["en"].format(name="1006", link="[Channels](/articles/channels/)")
    scripted.enqueue(
        tool_call_response([("c1", "get_article_detail", read)]), text_response([decline])
    )
    socket = await connect()
    events = await ask(socket, "What does close code 1006 mean?")
    await socket.disconnect()

    assert [e for e in events if e["type"] == "citation"] == []
    assert events[-1]["type"] == "done" and events[-1]["answered"] is False
    [turn] = await saved_turns()
    assert (turn.citations, turn.answered) == ([], False)
    unanswered = await database_sync_to_async(lambda: list(turn_unanswered()))()
    assert [t.pk for t in unanswered] == [turn.pk]


@pytest.mark.django_db(transaction=True)
async def test_with_nothing_relevant_the_prompt_and_tool_output_lead_to_a_decline(
    scripted, make_article
):
    """The scripted model sees the rule and the tool's plain "nothing found", and declines."""

    def index():
        from blog.indexing import chunk_reindex

        article = make_article(
            title="Streaming tokens to the browser",
            slug="streaming-tokens",
            body="## Frames\n\nEach text delta becomes one WebSocket frame sent to the panel.",
        )
        chunk_reindex(article=article)

    await database_sync_to_async(index)()
    question = "Which IVFFlat lists value suits a million rows?"
    arguments = json.dumps({"query": question})
    scripted.enqueue(
        tool_call_response([("c1", "search_knowledge_base", arguments)]),
        text_response(["I couldn't find anything about IVFFlat list sizes in this blog."]),
    )
    socket = await connect()

    events = await ask(socket, question)

    first, second = scripted.requests[0]["messages"], scripted.requests[1]["messages"]
    assert first[0] == {"role": "system", "content": SYSTEM_PROMPT}
    assert "If the tools found nothing relevant, say plainly" in SYSTEM_PROMPT
    [tool_message] = [m for m in second if m["role"] == "tool"]
    assert tool_message["content"] == NO_RESULTS  # no hits the model could quote
    [end] = [e for e in events if e["type"] == "tool_end"]
    assert end["summary"] == "no results"
    assert events[-1]["type"] == "done" and events[-1]["answered"] is False
    assert not [e for e in events if e["type"] == "citation"]
    [turn] = await saved_turns()
    assert turn.answered is False
    await socket.disconnect()


def test_a_turn_spooled_before_the_change_is_labelled_on_replay():
    from agent.services import TurnRecord

    base = {"turn_id": "t", "conversation_id": "c", "session_key": "s", "index": 1,
            "user_message": "q", "status": "done", "started_at": "2026-11-01T00:00"}  # fmt: skip
    cited = [{"article_id": 1, "title": "T", "url": "/articles/t/"}]
    old_answer = {**base, "answer": "Cap it at five.", "citations": cited, "no_answer": False}
    old_decline = {**base, "answer": DONT_KNOW["en"], "citations": [], "no_answer": True}

    assert TurnRecord.from_json(json.dumps(old_answer)).answered is True
    assert TurnRecord.from_json(json.dumps(old_decline)).answered is False
