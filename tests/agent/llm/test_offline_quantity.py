"""Questions asking "how much", "how many", or saying "actually": the ask is not the topic."""

import pytest

from agent.answered import is_decline
from blog.chunking import query_terms
from tests.agent.llm.test_offline_respell import _demo_answer
from tests.blog.test_search import demo_index  # noqa: F401


def test_how_much_and_how_many_and_a_stance_adverb_are_not_search_terms():
    assert query_terms("How much does a runaway agent actually cost?") == [
        "how", "does", "a", "runaway", "agent", "cost",
    ]  # fmt: skip
    assert query_terms("How MANY model calls, exactly?") == ["how", "model", "calls"]
    # The measure asked for is a word articles write ("often enough", "how long it took").
    assert "often" in query_terms("How often should I send a keepalive?")
    assert "long" in query_terms("How long is the window?")
    # Not after "how", "many" and "much" are the reader's words.
    assert "many" in query_terms("Why do many tools time out?")


def test_duoshao_and_jige_are_not_search_terms():
    assert query_terms("HNSW 的 m 默认是多少？") == ["hnsw", "m", "默认"]
    assert query_terms("每个会话最多能问几个问题？") == [
        "每个", "个会", "会话", "话最", "最多", "多能", "能问", "问题",
    ]  # fmt: skip
    assert "字符" in query_terms("一个问题最长能有多少个字符？")
    # A measure after 几 is what is asked for: seconds.
    assert "几秒" in query_terms("超时设几秒？")


@pytest.mark.django_db
def test_the_demo_blog_answers_how_much_and_how_many(demo_index):  # noqa: F811
    """Both were declined: "much" (one chunk of the blog) and "actually" weighed more than
    "runaway" or "cost", and no article held them, so the right one covered half the question."""
    for question, article in (
        ("How much does a runaway agent actually cost?", "/articles/why-step-limits-matter/"),
        ("How many model calls can one turn make?", "/articles/why-step-limits-matter/"),
        ("HNSW 的 m 默认是多少？", "/articles/pgvector-and-hnsw/"),
    ):
        answer, _ = _demo_answer(question, demo_index)
        assert not is_decline(answer) and article in answer, (question, answer)
    for off_topic in (
        "How much does a Pinecone index cost per month?",
        "How many Kubernetes pods should run the chat?",
        "uvicorn 默认开几个 worker？",
        "bge-m3 模型最多能输入多少 token？",
    ):
        answer, _ = _demo_answer(off_topic, demo_index)
        assert is_decline(answer), (off_topic, answer)
