"""Questions that need two articles, one for each of their parts (docs/answer-quality.md,
"Seventieth pass (b)")."""

import pytest

from agent.llm.offline_bridge import translated_terms
from tests.agent.llm.test_offline_respell import _demo_answer
from tests.blog.test_search import demo_index  # noqa: F401

LOOP = "/articles/anatomy-of-the-agent-loop/"
CANCELLATION = "/articles/cancellation-and-timeouts-zh/"


def test_bingfa_is_also_parallel():
    # Chinese developers write 并发 for calls run side by side; the loop article writes
    # "parallel calls" where it gives their ceiling.
    found = translated_terms("一次最多同时并发几个工具调用？")

    assert {"parallel", "concurrency"} <= found


@pytest.mark.django_db
def test_the_chinese_part_asking_how_many_calls_run_at_once_is_answered_from_the_english_article(
    demo_index,  # noqa: F811
):
    """The part about parallel calls was declined ("没有给出这个数字"): through the glossary it
    shared only "call" with "Cap the number of parallel calls (eight is a sensible ceiling…)",
    and the sentence before it ("Concurrency does need guard rails.") gives no figure."""
    answer, _ = _demo_answer(
        "搜索工具的超时是几秒？还有，最多同时并发几个工具调用？", demo_index
    )

    assert CANCELLATION in answer and LOOP in answer, answer
    assert "eight" in answer
    assert "没有给出这个数字" not in answer
