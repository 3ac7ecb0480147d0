"""A comparison's two subjects, each searched with the rest of the question (offline_compare)."""

import pytest

from agent.answered import is_decline
from agent.llm.offline_compare import comparison_parts
from agent.llm.offline_parts import question_parts
from tests.agent.llm.test_offline_respell import _demo_answer
from tests.blog.test_search import demo_index  # noqa: F401


@pytest.mark.parametrize(
    ("question", "parts"),
    [
        (
            "A cap on model calls per turn or a token budget: what does each protect against?",
            ["A cap on model calls per turn", "a token budget: what does each protect against?"],
        ),
        (
            "Memory-only model vs tool-driven agent: how does each fail?",
            ["Memory-only model", "tool-driven agent: how does each fail?"],
        ),
        (
            "How do session limits and IP limits differ?",
            ["How do session limits", "IP limits differ?"],
        ),
        ("全文检索和向量检索各有什么短板？", ["全文检索有什么短板？", "向量检索有什么短板？"]),
        (
            "HNSW 索引和二元切分的 GIN 索引，各自要付出什么代价？",
            ["HNSW 索引，要付出什么代价？", "二元切分的 GIN 索引，要付出什么代价？"],
        ),
    ],
)
def test_a_comparison_is_asked_of_each_subject(question, parts):
    assert comparison_parts(question) == parts
    assert question_parts(question) == parts


@pytest.mark.parametrize(
    "question",
    [
        "Does the loop retry a failed tool or give up?",  # "or" with no choice asked
        "How do tsvector and GIN work together?",  # "and" with no difference asked
        "限流和步数上限是怎么实现的？",  # 和 with no comparing word
        "pgvector or Pinecone: which is cheaper?",  # a choice: one verdict, asked whole
        "Should I use Server-Sent Events or WebSockets for a one-way token stream?",
        "SSE 和 WebSocket 哪个好？",
        "Per-tool timeouts vs a cap: what does it stop?",  # "vs" asks of each only with "each"
        "What if two requests hit at once and both check the remaining budget?",  # a pronoun
        "How is Chinese text handled both by the embedding model and by the keyword index?",
    ],
)
def test_a_question_comparing_nothing_or_asking_one_verdict_is_asked_whole(question):
    assert question_parts(question) == []


@pytest.mark.django_db
def test_a_comparison_across_two_articles_cites_both(demo_index):  # noqa: F811
    answer, calls = _demo_answer(
        "A cap on model calls per turn or a per-conversation token budget: "
        "what does each protect against?",
        demo_index,
    )

    assert len(calls) >= 3  # the whole question, then each subject
    assert "/articles/why-step-limits-matter/" in answer
    assert "/articles/rate-limits-and-token-budgets/" in answer


@pytest.mark.django_db
def test_a_comparison_with_something_the_blog_does_not_cover_is_declined(demo_index):  # noqa: F811
    for question in (
        "Should I pick pgvector or Pinecone for a small blog?",
        "Django Channels or FastAPI WebSockets: which scales better?",
    ):
        answer, _ = _demo_answer(question, demo_index)
        assert is_decline(answer), (question, answer)


@pytest.mark.django_db
def test_a_comparison_one_article_weighs_is_answered_from_it(demo_index):  # noqa: F811
    # Searched alone, "Memory-only model" put the persistence article first (its "内存"),
    # and the answer quoted it and the audit article instead of the table setting both side
    # by side.
    answer, _ = _demo_answer(
        "Memory-only model vs tool-driven agent: how does each fail?", demo_index
    )

    assert "/articles/tool-driven-agents/" in answer
    assert "/articles/async-persistence-zh/" not in answer


@pytest.mark.parametrize(
    ("question", "parts"),
    [
        ("HNSW 和 IVFFlat 有什么区别？", ["HNSW 有什么区别？", "IVFFlat 有什么区别？"]),
        (
            "WebSocket 与 SSE 在流式输出上的差异",
            ["WebSocket 在流式输出上的差异", "SSE 在流式输出上的差异"],
        ),
    ],
)
def test_both_chinese_subjects_keep_the_predicate_they_share(question, parts):
    # The words after the second subject were its own: the first part read "HNSW区别？".
    assert comparison_parts(question) == parts


def test_a_subject_named_in_part_is_not_named():
    # "step limits" is not named by the budget article's "limit": both articles answer.
    from agent.llm.offline_hits import compared_in_one

    budget = {"title": "Rate limits and token budgets", "heading": "", "excerpt": "A token budget."}
    assert not compared_in_one("How do step limits and token budgets differ?", [budget])
    table = {
        "title": "Tool-driven agents",
        "heading": "",
        "excerpt": "Step limits and token budgets.",
    }
    assert compared_in_one("How do step limits and token budgets differ?", [table])


def test_a_run_of_spaces_before_a_joiner_is_tried_from_its_start_only():
    # From each of 3,980 spaces, the joiners took 0.7 s; no match may begin inside the run.
    from agent.llm.offline_compare import _JOINERS

    text = "HNSW" + " " * 5 + "vs IVFFlat"
    assert all(joiner.search(text, 6) is None for joiner in _JOINERS)
    assert comparison_parts("compare HNSW" + " " * 5 + "vs IVFFlat") == ["compare HNSW", "IVFFlat"]
