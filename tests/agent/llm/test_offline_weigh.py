"""Asks that weigh a thing, and the sentences that weigh it (offline_weigh)."""

import pytest

from agent.llm.offline_text import Fact
from agent.llm.offline_weigh import WEIGHS_BONUS, asks_weighing, weighed, weighs
from tests.agent.llm.test_offline_respell import _demo_answer
from tests.blog.test_search import demo_index  # noqa: F401


@pytest.mark.parametrize(
    "question",
    [
        "What's the catch with IVFFlat?",
        "What are the downsides of limiting by IP?",
        "What does a runaway loop cost me?",
        "How do SSE and WebSockets differ?",
        "HNSW vs IVFFlat?",
        "二元切分有什么缺点？",
        "zhparser 的代价是什么？",
        "SSE 和 WebSocket 哪个好？",
        "HNSW or IVFFlat for a small blog?",
    ],
)
def test_asks_that_weigh(question):
    assert asks_weighing(question)


@pytest.mark.parametrize(
    "question",
    [
        "What is HNSW?",
        "How do I create an HNSW index?",
        "什么是二元切分？",
        "怎么安装 zhparser？",
        # A verb and a politeness are no weighing (review of pass 52).
        "How do I catch CancelledError in a tool?",
        "不好意思，HNSW 索引怎么建？",
        "Does it retry or give up?",
    ],
)
def test_asks_that_do_not_weigh(question):
    assert not asks_weighing(question)


def test_a_sentence_weighs_by_contrast_fault_or_cost():
    assert weighs("Exact, but memory grows with the limit.")
    assert weighs("Its weakness is that a script can discard cookies.")
    assert weighs("分词扩展的结果最接近人的理解，但代价也明显。")
    assert not weighs("Sliding window counter.")
    assert not weighs("每个块单独编码、单独入库。")
    # 更 inside 更新, and a mere mention of 问题, weigh nothing.
    assert not weighs("索引更新后自动重建。")
    assert not weighs("这个问题的答案在第二节。")
    assert weighs("二元切分更慢。")


def _fact(text: str) -> Fact:
    return Fact(text=text, kind="sentence", section="", order=0)


def test_a_weighing_fact_gets_a_head_start_only_when_the_ask_weighs():
    facts = [_fact("Sliding window log."), _fact("Exact, but memory grows with the limit.")]

    assert weighed([1.0, 1.0], facts, "What's the downside of a sliding window log?") == [
        1.0,
        WEIGHS_BONUS,
    ]
    assert weighed([1.0, 1.0], facts, "What is a sliding window log?") == [1.0, 1.0]


@pytest.mark.django_db
def test_what_a_thing_costs_quotes_the_sentence_that_says_so(demo_index):  # noqa: F811
    answer, _ = _demo_answer("What does a runaway agent loop cost me?", demo_index)

    assert "/articles/why-step-limits-matter/" in answer
    assert "Cost grows faster than linearly" in answer
