"""Questions that need two articles, one for each of their parts (docs/answer-quality.md,
"Seventieth pass (b)")."""

import pytest

from agent.llm.offline_bridge import translated_terms
from agent.llm.offline_compare import comparison_parts
from agent.llm.offline_hits import titled_part_tops
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
    answer, _ = _demo_answer("搜索工具的超时是几秒？还有，最多同时并发几个工具调用？", demo_index)

    assert CANCELLATION in answer and LOOP in answer, answer
    assert "eight" in answer
    assert "没有给出这个数字" not in answer


def _hit(title: str, relevance: float) -> dict:
    return {"article_id": title, "title": title, "relevance": relevance}


PRIMER = _hit("文本嵌入入门", 0.95)
FULL_TEXT = _hit("中文全文检索的难点", 0.94)
FUSION = _hit("Hybrid search with reciprocal rank fusion", 0.87)
QUESTION = (
    "For Chinese posts, how does Docent split the text for keyword search, and what value of k "
    "goes into the formula that merges the keyword and vector result lists?"
)


def test_a_tie_for_a_parts_first_place_goes_to_the_article_its_title_names():
    parts = titled_part_tops(QUESTION, [[PRIMER, FULL_TEXT], [FUSION, PRIMER]])

    # "中文" and "检索" are "Chinese" and "search" through the glossary; the primer's title
    # names neither. The second part's order is the search's: no tie.
    assert parts == [[FULL_TEXT, PRIMER], [FUSION, PRIMER]]


def test_a_parts_first_place_ahead_by_more_than_a_tie_is_kept():
    ahead = {**PRIMER, "relevance": 1.0}

    assert titled_part_tops(QUESTION, [[ahead, FULL_TEXT], [FUSION]])[0] == [ahead, FULL_TEXT]


def test_a_tie_whose_titles_name_no_more_of_the_part_is_left_in_the_searchs_order():
    other = _hit("Streaming tokens to the browser", 0.94)

    assert titled_part_tops(QUESTION, [[PRIMER, other], [FUSION]])[0] == [PRIMER, other]


def test_searches_after_the_parts_and_questions_in_one_part_are_not_reordered():
    ask = [PRIMER, FULL_TEXT]  # the ask's own search follows the parts' (offline._searches)

    assert titled_part_tops(QUESTION, [[FUSION], [FUSION], ask])[2] == ask
    assert titled_part_tops("How does Docent split Chinese text?", [ask]) == [ask]


@pytest.mark.django_db
def test_the_demo_blog_answers_a_part_on_chinese_keyword_search_from_the_chinese_full_text_article(
    demo_index,  # noqa: F811
):
    """Its own search ranked the embeddings primer a hair above the Chinese full-text article,
    and the primer was cited beside the fusion article: one right citation, one wrong."""
    answer, _ = _demo_answer(
        "For Chinese articles, how is the text split for keyword search, and what value of k "
        "does the fusion formula use?",
        demo_index,
    )

    assert "/articles/chinese-full-text-search-zh/" in answer, answer
    assert "/articles/hybrid-search-with-rrf/" in answer
    assert "/articles/embeddings-primer-zh/" not in answer


@pytest.mark.parametrize(
    ("question", "parts"),
    [
        (
            "HNSW 向量索引和中文二元切分的 GIN 索引，各自要付出什么代价？",
            ["HNSW 向量索引，要付出什么代价？", "中文二元切分的 GIN 索引，要付出什么代价？"],
        ),
        ("限流和步数上限各有什么作用？", ["限流有什么作用？", "步数上限有什么作用？"]),
        # Only "each" goes: a difference is still asked of each subject.
        ("HNSW 和 IVFFlat 有什么区别？", ["HNSW 有什么区别？", "IVFFlat 有什么区别？"]),
    ],
)
def test_each_subject_of_a_chinese_comparison_is_asked_without_each(question, parts):
    assert comparison_parts(question) == parts


def test_daijia_is_a_cost():
    assert "cost" in translated_terms("HNSW 索引要付出什么代价？")


@pytest.mark.django_db
def test_the_demo_blog_answers_what_each_of_two_indexes_costs_from_both_articles(
    demo_index,  # noqa: F811
):
    """With "各自" in each subject's search, the HNSW part put the pgvector article first under
    the bar, and only the Chinese full-text article was cited; 代价 had no English word, and the
    HNSW part quoted the article's opening sentence, not the cost of m."""
    question = "HNSW 向量索引和中文二元切分的 GIN 索引，各自要付出什么代价？"
    answer, _ = _demo_answer(question, demo_index)

    assert "/articles/pgvector-and-hnsw/" in answer, answer
    assert "/articles/chinese-full-text-search-zh/" in answer
    assert "at the cost of memory and build time" in answer
