"""Conversation continuity: a question whose own search declines, right after an answer."""

import pytest

from agent.llm.offline import DONT_KNOW
from agent.llm.offline_follow_up import changes_topic
from tests.agent.llm.test_offline import (
    INDEX_ARTICLE,
    LIMITS_ARTICLE,
    ask,
    calls,
    link,
    relevant_hit,
)

ASKED = "How does Docent stop runaway loops?"


def answered(article: dict = LIMITS_ARTICLE, question: str = ASKED) -> list[dict]:
    return [
        {"role": "user", "content": question},
        {"role": "assistant", "content": f"It caps each turn.\n\nSource: {link(article)}"},
    ]


def queries(result) -> list[str]:
    return [arguments["query"] for name, arguments in calls(result) if "query" in arguments]


def cited(result) -> list[int]:
    return [c["article_id"] for c in result.citations]


def with_asked(found: list[dict]):
    """A search that finds `found` only with the question answered before in its query."""
    return lambda query: found if "runaway" in query else []


@pytest.mark.asyncio
async def test_a_question_of_its_own_declined_alone_is_read_with_the_answer_before_it():
    # f35-23 "what does SynchronousOnlyOperation mean?" after an answer quoting the Channels
    # article, which states it: alone the article ranked under the bar, and it was declined.
    question = "What is an error loop?"

    result, _ = await ask(
        question, with_asked([relevant_hit(LIMITS_ARTICLE, 0.9)]), history=answered()
    )

    assert queries(result) == [question, f"{ASKED} {question}"]
    assert cited(result) == [LIMITS_ARTICLE["article_id"]] and result.answered
    assert "validation error" in result.answer


@pytest.mark.asyncio
async def test_a_follow_up_declined_with_the_question_before_is_read_alone():
    # "它比二元切分准在哪里？" after an answer on zhparser: with "zhparser 怎么安装？" the two
    # questions' words pulled the article under the bar.
    question = "and how is it counted?"

    def search(query: str) -> list[dict]:
        return [] if "runaway" in query else [relevant_hit(LIMITS_ARTICLE, 0.9)]

    result, _ = await ask(question, search, history=answered())

    assert queries(result) == [f"{ASKED} {question}", question]
    assert cited(result) == [LIMITS_ARTICLE["article_id"]] and result.answered


@pytest.mark.asyncio
async def test_the_other_reading_answers_only_from_the_article_cited_before():
    question = "What is an error loop?"
    found = [relevant_hit(INDEX_ARTICLE, 0.9), relevant_hit(LIMITS_ARTICLE, 0.8)]

    result, _ = await ask(question, with_asked(found), history=answered())

    assert queries(result) == [question, f"{ASKED} {question}"]
    assert result.answer == DONT_KNOW["en"] and not result.citations


@pytest.mark.asyncio
async def test_a_word_the_blog_never_writes_keeps_the_question_declined():
    # "What is pgvector?" then "and does it work with MongoDB?": the conversation's article,
    # but not about MongoDB.
    question = "What is an error loop in MongoDB?"
    found = [{**relevant_hit(LIMITS_ARTICLE, 0.9), "unknown_words": ["mongodb"]}]

    result, _ = await ask(question, with_asked(found), history=answered())

    assert queries(result) == [question, f"{ASKED} {question}"]
    assert len(calls(result)) == 2  # declined on the search: the article is not read
    assert result.answer == DONT_KNOW["en"] and not result.citations


@pytest.mark.asyncio
async def test_the_article_cited_before_must_say_what_the_question_asks_about():
    # fo-02 "how much does a managed pgvector instance cost per month?" after an answer on
    # HNSW's parameters: read with that question, the pgvector article came first again, and
    # its parameter list was quoted for a price it never states.
    question = "How much does a managed instance cost per month?"

    result, _ = await ask(
        question, with_asked([relevant_hit(LIMITS_ARTICLE, 0.9)]), history=answered()
    )

    assert queries(result) == [question, f"{ASKED} {question}"]
    assert calls(result)[-1] == ("get_article_detail", {"article_id": LIMITS_ARTICLE["article_id"]})
    assert result.answer == DONT_KNOW["en"] and not result.citations


@pytest.mark.asyncio
async def test_nothing_is_inherited_from_a_decline():
    question = "What is an error loop?"
    before = [
        {"role": "user", "content": ASKED},
        {"role": "assistant", "content": DONT_KNOW["en"]},
    ]

    result, _ = await ask(question, with_asked([relevant_hit(LIMITS_ARTICLE, 0.9)]), history=before)

    assert queries(result) == [question]
    assert result.answer == DONT_KNOW["en"] and not result.citations


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "question",
    [
        "Unrelated, but what is an error loop?",
        "OK, different topic: how is it counted?",
        "By the way, what is an error loop?",
        "换个话题：它是怎么计数的？",
        "题外话，这个上限是多少？",
    ],
)
async def test_a_question_that_changes_the_subject_inherits_nothing(question):
    result, _ = await ask(
        question, with_asked([relevant_hit(LIMITS_ARTICLE, 0.9)]), history=answered()
    )

    assert ASKED not in queries(result)[0]  # not glued to the question before
    assert f"{ASKED} {question}" not in queries(result)
    assert not result.citations


def test_changes_topic_reads_only_an_opening_that_changes_the_subject():
    assert changes_topic("Unrelated: what does RRF stand for?")
    assert changes_topic("ok, on a different note, how do I cap tokens?")
    assert changes_topic("btw how does HNSW work?")
    assert changes_topic("换个问题，HNSW 怎么调参？")
    assert not changes_topic("Is that unrelated to the step limit?")
    assert not changes_topic("And what about the other one?")
    assert not changes_topic("它和这个话题有什么关系？")
