"""Readers who misspell: the offline model reads a typo as the word the search searched for."""

import json

import pytest

from agent.answered import is_decline
from agent.llm.offline import plan
from agent.llm.offline_respell import READ_AS, as_searched, search_read_as
from agent.llm.offline_turn import _Turn
from agent.prompts import build_messages
from agent.tools.get_article_detail import _detail
from agent.tools.search_knowledge_base import NO_RESULTS
from blog.search import article_search
from tests.blog.test_search import demo_index  # noqa: F401

SEARCH, DETAIL = "search_knowledge_base", "get_article_detail"
TOOLS = {SEARCH, DETAIL}
PGVECTOR = {
    "article_id": 6,
    "title": "pgvector and HNSW indexes",
    "url": "/articles/pgvector-and-hnsw/",
    "summary": "Storing embeddings in PostgreSQL with pgvector.",
    "body": "The pgvector extension adds a vector column type and nearest-neighbour indexes "
    "to PostgreSQL, so embeddings live in the same database as the articles they describe.",
}


def _hit(article: dict, **extra) -> dict:
    keep = ("article_id", "title", "url")
    return {"rank": 1, **{k: article[k] for k in keep}, "excerpt": article["body"][:200],
            "language": "en", "relevance": 0.97, **extra}  # fmt: skip


def _answer(question: str, search, detail) -> tuple[str, list[tuple[str, dict]]]:
    """Run the offline planner to its answer, each call answered by `search` or `detail`."""
    messages = build_messages(history=[], user_message=question, page=None, language="")
    calls_made = []
    for _ in range(5):
        calls, answer = plan(messages, TOOLS)
        if not calls:
            return answer, calls_made
        messages.append({
            "role": "assistant", "content": None,
            "tool_calls": [{"id": c.id, "type": "function",
                            "function": {"name": c.name, "arguments": c.arguments}} for c in calls],
        })  # fmt: skip
        for call in calls:
            arguments = json.loads(call.arguments)
            calls_made.append((call.name, arguments))
            output = search(**arguments) if call.name == SEARCH else detail(**arguments)
            tool = {"role": "tool", "tool_call_id": call.id, "content": json.dumps(output)}
            messages.append(tool)
    raise AssertionError("no answer in five steps")


def test_a_typo_the_search_read_as_a_blog_word_is_answered_and_says_so():
    """ "pgvecter" was a name no article mentions, so the question was declined although the
    search put the right article first; the search's `read_as` says what it searched for."""
    hit = _hit(PGVECTOR, read_as={"pgvecter": "pgvector"})
    answer, _ = _answer(
        "what is pgvecter used for", lambda query, limit: [hit], lambda article_id: PGVECTOR
    )

    assert not is_decline(answer)
    assert "/articles/pgvector-and-hnsw/" in answer
    assert answer.endswith(READ_AS["en"].format(typed="pgvecter", meant="pgvector"))


def test_the_question_is_read_as_searched_only_where_the_search_said_so():
    turn = _Turn(question="What is pgvecter for? pgvecter!", earlier=[], page=None)
    searched = [(SEARCH, [_hit(PGVECTOR, read_as={"pgvecter": "pgvector", "teh": ""})])]

    assert as_searched(turn).question == turn.question  # no search yet
    read = as_searched(_Turn(question=turn.question, earlier=[], page=None, results=searched))
    assert read.question == "What is pgvector for? pgvector!"
    assert search_read_as([(SEARCH, NO_RESULTS), (DETAIL, PGVECTOR)]) == {}


def test_the_ask_after_a_scene_is_read_as_searched_too():
    """A message that sets a scene is answered by its ask (offline_ask): a typo left in the
    ask declined what the search had read right."""
    question = "I run a small blog at work. What is pgvecter used for?"
    hit = _hit(PGVECTOR, read_as={"pgvecter": "pgvector"})
    read = as_searched(
        _Turn(question=question, earlier=[], page=None, ask="What is pgvecter used for?",
              results=[(SEARCH, [hit])])
    )  # fmt: skip

    assert read.ask == "What is pgvector used for?"
    answer, _ = _answer(question, lambda query, limit: [hit], lambda article_id: PGVECTOR)
    assert not is_decline(answer) and "/articles/pgvector-and-hnsw/" in answer


def test_a_name_is_read_as_the_blog_word_only_where_the_blog_writes_that_as_a_name():
    """The search read "Faiss" as "fails": the question must still turn on a name no article
    mentions. "Djnago" is read as "Django", which the articles write as a name."""
    body = "Classic Django answers one request. A search that fails returns nothing."
    article = {**PGVECTOR, "body": body}
    faiss = _hit(article, read_as={"faiss": "fails"})
    django = _hit(article, read_as={"djnago": "django"})

    def read(question: str, hit: dict) -> str:
        results = [(SEARCH, [hit]), (DETAIL, article)]
        turn = _Turn(question=question, earlier=[], page=None, results=results)
        return as_searched(turn).question

    assert read("Does the blog cover Faiss?", faiss) == "Does the blog cover Faiss?"
    assert read("does it say when a search faiss?", faiss) == "does it say when a search fails?"
    assert read("How do I write a Djnago consumer?", django) == "How do I write a django consumer?"


# The demo blog through the real search: slips found, near misses and off-topic names declined.


def _demo_answer(question: str, embedder) -> tuple[str, list[tuple[str, dict]]]:
    def search(query: str, limit: int):
        hits = article_search(query=query, limit=limit, embedder=embedder)
        return [hit.as_tool() for hit in hits] or NO_RESULTS

    return _answer(question, search, _detail)


@pytest.mark.django_db
def test_the_demo_blog_answers_misspelt_terms_and_declines_misspelt_topics(demo_index):  # noqa: F811
    step_limit, _ = _demo_answer("why do agents need a step limt?", demo_index)
    pgvector, calls = _demo_answer("what is pgvecter used for", demo_index)

    assert "/articles/why-step-limits-matter/" in step_limit
    assert "(I read “limt” as “limit”.)" in step_limit
    assert "/articles/pgvector-and-hnsw/" in pgvector
    assert calls[0] == (SEARCH, {"query": "what is pgvecter used for", "limit": 5})  # as typed
    for off_topic in (
        "How do Kafak consumers commit their offsets?",  # "consumers" is a blog word
        "How do I configure Kubernetse pod autoscaling?",
        "How far is a parsec in light years?",  # a word of its own, one letter from "parse"
        "Is Faiss covered in the blog?",  # searched as "fails"
        "Does the chat use QUIC?",  # an acronym, not "quick"
    ):
        answer, _ = _demo_answer(off_topic, demo_index)
        assert is_decline(answer), (off_topic, answer)
