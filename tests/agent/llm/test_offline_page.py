"""Which questions point at the article on screen, and what they ask that it never names."""

import pytest

from agent.llm.offline_page import page_names_missing, points_at_page

PAGE = (
    "Reciprocal rank fusion merges two ranked lists. The constant k = 60 comes from the "
    "original paper. Keep the task in a set, or asyncio may collect it mid-way."
)


@pytest.mark.parametrize(
    "question",
    [
        "where does it say here that k is 60?",
        "is that the proxy thing this talks about?",
        "which of these options did they actually go with?",
        "does this post cover HTTP/2?",
        "文中说的 k 为什么取 60？",
        "这里的上限是按什么算的？",
        "作者为什么选二元切分？",
        "上文提到的 k 是什么？",
        "此文说的上限是多少？",
        "这一段代码为什么要 shield？",
        "这个例子里为什么用集合？",
        "博主为什么选 60？",
    ],
)
def test_a_question_pointing_at_the_page(question):
    assert points_at_page(question)


@pytest.mark.parametrize(
    "question",
    [
        "is it safe to run HNSW on a laptop?",  # "it" and "this" alone point at nothing
        "how does this work with pgvector?",
        "What is reciprocal rank fusion?",
        "向量检索是什么？",
        "in this case, should I use HNSW?",
        "how does the page stream tokens to the browser?",
        "what does the POST endpoint return?",
        "what do they do when the socket drops?",
        "在 GPU 上面跑会更快吗？",
        "这段时间有更新吗？",
    ],
)
def test_a_question_not_pointing_at_the_page(question):
    assert not points_at_page(question)


def test_names_and_rare_words_the_page_never_uses_are_missing():
    asked = "do they trace it with opentelemetry or Grafana here?"
    assert page_names_missing(asked, PAGE) == ["Grafana", "opentelemetry"]


def test_everyday_words_typos_and_words_the_page_uses_are_not_missing():
    # "stash" and "pointless" are a reader's words for what the page says; "reciprocol" and
    # "asyncoi" are its own words mistyped.
    assert page_names_missing("why stash the task in a set here? seems pointless", PAGE) == []
    assert page_names_missing("where does the reciprocol fusion's 60 come from?", PAGE) == []
    assert page_names_missing("does asyncoi collect the task here?", PAGE) == []


def test_other_forms_of_the_pages_words_are_not_missing():
    """wordfreq's small list knows "retry" but not "retries": an inflection is not a name."""
    page = "Retry three times, retrying with a back-off; throttle what is left."
    assert page_names_missing("how many retries here, and is throttling per ip?", page) == []
    assert page_names_missing("are the re-tries logged here?", page) == []
