"""An evaluative ask's topic, searched without its frame (offline_frame)."""

import pytest

from agent.answered import is_decline
from agent.llm.offline_frame import (
    frame_searched,
    frame_topic,
    rescued,
    weighing_first,
    weighing_sentence,
)
from tests.agent.llm.test_offline_respell import _demo_answer
from tests.blog.test_search import demo_index  # noqa: F401


@pytest.mark.parametrize(
    ("question", "topic"),
    [
        ("What are the downsides of limiting by IP address?", "limiting by IP address"),
        ("What's the catch with IVFFlat indexes?", "IVFFlat indexes"),
        ("When is HNSW the wrong choice?", "HNSW"),
        ("Where does embedding search fall short?", "embedding search"),
        ("全文检索和向量检索各有什么短板？", "全文检索和向量检索"),
        ("二元切分的缺点是什么？", "二元切分"),
        ("拿 pg_trgm 做中文搜索会踩什么坑？", "拿 pg_trgm 做中文搜索"),
    ],
)
def test_the_frame_is_taken_off_the_topic(question, topic):
    assert frame_topic(question) == topic


@pytest.mark.parametrize(
    "question", ["How does HNSW work?", "What is a token bucket?", "二元切分是怎么做的？"]
)
def test_a_question_without_an_evaluative_frame_has_no_topic_of_its_own(question):
    assert frame_topic(question) == ""


_IP = (
    "Per IP address. That is why a second, looser limit applies to the client IP. "
    "It catches cookie-discarding scripts but can punish a whole university behind one NAT "
    "address, so it is set several times higher than the session limit."
)
_BUCKET = (
    "A token bucket is another good option when you want to allow short bursts explicitly.\n\n"
    "Rate limits stop a script from running up the bill, but a token budget caps the spend."
)


def test_the_weighing_sentence_names_the_topic_with_the_sentence_before_it():
    assert weighing_sentence("limiting by IP address", _IP).startswith("It catches")


def test_a_topic_named_but_not_weighed_has_no_weighing_sentence():
    # The second paragraph weighs ("but") and names "token", not the bucket.
    assert weighing_sentence("a token bucket rate limiter", _BUCKET) == ""


def test_a_name_the_article_never_writes_has_no_weighing_sentence():
    assert weighing_sentence("Redis Streams for limiting by IP address", _IP) == ""


def test_a_chinese_topic_is_weighed_by_the_words_the_article_writes():
    # "按会", "话限": bigrams across two words, which no article writes.
    body = "限流以会话为单位，对共用网络的人公平，但脚本丢掉 cookie 就能换一个新会话。"

    assert weighing_sentence("按会话限流", body) == body


def test_the_quote_that_weighs_comes_first():
    hits, articles = [{"article_id": 1}], [{"article_id": 1, "body": _IP}]
    weighing = "- It catches cookie-discarding scripts but can punish a whole university."
    listed = f"- Per session. Each browser has its own allowance.\n{weighing}\n\nSource: x"
    paragraphs = "Per session. Each browser has its own allowance.\n\n" + weighing[2:]

    assert weighing_first(listed, "limiting by IP address", hits, articles).startswith(weighing)
    reordered = weighing_first(paragraphs, "limiting by IP address", hits, articles)
    assert reordered.startswith("It catches")
    assert weighing_first("Per session.", "limiting by IP address", hits, articles) == (
        "Per session."
    )


def _hits(relevance: float) -> list[dict]:
    return [{"article_id": 1, "title": "t", "excerpt": "e", "relevance": relevance}]


def test_the_topic_stands_in_only_when_the_whole_question_misses():
    question, topic = "What are the downsides of limiting by IP?", "limiting by IP"
    missed, found = "No relevant content found.", _hits(0.9)

    assert frame_searched(question, topic, [missed, found]) == [found]
    assert rescued(question, topic, [missed, found])
    assert frame_searched(question, topic, [_hits(0.6), found]) == [_hits(0.6)]
    assert frame_searched(question, topic, [missed, missed]) == [missed]
    assert frame_searched(question, "", [missed, found]) == [missed, found]


@pytest.mark.django_db
def test_the_demo_blog_answers_a_downside_the_article_weighs(demo_index):  # noqa: F811
    answer, calls = _demo_answer("What are the downsides of limiting by IP address?", demo_index)

    assert "/articles/rate-limits-and-token-budgets/" in answer
    assert "punish a whole university" in answer
    assert answer.index("punish a whole university") < answer.index("Per session")
    assert {"query": "limiting by IP address", "limit": 5} in [args for _, args in calls]


@pytest.mark.django_db
def test_the_demo_blog_declines_a_downside_the_article_does_not_weigh(demo_index):  # noqa: F811
    for question in (
        "What are the downsides of a token bucket rate limiter?",
        "What are the drawbacks of Redis Streams for a channel layer?",
    ):
        answer, _ = _demo_answer(question, demo_index)
        assert is_decline(answer), (question, answer)


def test_a_lead_in_stays_before_its_list():
    # "…control the trade-off:" weighs, and moved first it left its list behind another block.
    body = (
        "HNSW indexes are graphs.\n\n"
        "The HNSW graph has three parameters that control the trade-off:"
    )
    hits, articles = [{"article_id": 1}], [{"article_id": 1, "body": body}]
    answer = (
        "HNSW indexes are graphs.\n\nThe HNSW graph has three parameters that control the "
        "trade-off:\n\n- m\n- ef_construction"
    )
    assert weighing_first(answer, "HNSW graph", hits, articles) == answer


def test_a_run_of_spaces_or_marks_is_tried_from_its_start_only():
    # From each of 3,998 spaces (or 3,999 question marks), 0.5-1 s a call, 2-3 times a turn.
    from agent.llm.offline_frame import _ASK_MARK, _FRAME_EN

    assert _FRAME_EN.search("HNSW" + " " * 5 + "the wrong choice", 6) is None
    assert _FRAME_EN.search("HNSW" + " " * 5 + "the wrong choice").start() == 4
    assert _ASK_MARK.search("x???? y", 2) is None


def test_a_when_or_where_question_that_weighs_nothing_is_searched_whole():
    from agent.llm.offline_weigh import asks_weighing

    assert not asks_weighing("When should I use HNSW?")
    assert not asks_weighing("Where do I put the settings?")
    assert all(
        asks_weighing(q)
        for q in ("When is HNSW the wrong choice?", "Where does embedding search fall short?")
    )
