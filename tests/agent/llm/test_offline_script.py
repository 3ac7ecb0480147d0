"""Readers who write Traditional Chinese: matched in Simplified, answered in their script."""

import pytest

from agent.answered import is_decline
from agent.llm.offline import DONT_KNOW
from agent.llm.offline_turn import as_typed
from blog.script import question_fold, to_taiwan
from tests.agent.llm.test_offline import ZH_ARTICLE, ask, hit

SOURCE_TRADITIONAL = "來源：[向量检索入门](/articles/vector-search-intro/)"


@pytest.mark.asyncio
async def test_a_traditional_question_quotes_its_simplified_article_as_written():
    result, sent = await ask("什麼是混合檢索？", [hit(ZH_ARTICLE)])

    # The quote as the article wrote it; the frame ("来源：") in the reader's script, the
    # article's title as written.
    assert "混合检索同时使用关键词和向量。" in result.answer
    assert "午饭" not in result.answer
    assert result.answer.endswith("\n\n" + SOURCE_TRADITIONAL)
    assert [c["url"] for c in result.citations] == ["/articles/vector-search-intro/"]
    assert "".join(e["content"] for e in sent if e["type"] == "text") == result.answer
    assert sent[-1]["type"] == "done" and sent[-1]["answered"] is True


@pytest.mark.asyncio
async def test_the_same_question_in_simplified_keeps_the_simplified_frame():
    result, _ = await ask("什么是混合检索？", [hit(ZH_ARTICLE)])

    assert result.answer.endswith("来源：[向量检索入门](/articles/vector-search-intro/)")


@pytest.mark.asyncio
async def test_a_traditional_question_the_blog_does_not_answer_is_declined_in_traditional():
    result, sent = await ask("部落格裡有關於量子電腦的文章嗎？", [])

    # In Taiwan's words (部落格, the reader's own), not Simplified's in Traditional characters.
    assert result.answer == to_taiwan(DONT_KNOW["zh"]) == "我在這個部落格的文章裡沒有找到相關內容。"
    assert result.citations == [] and sent[-1]["answered"] is False


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("language", "decline"),
    [("zh-hant", "我在這個部落格的文章裡沒有找到相關內容。"),
     ("zh-hans", "我在这个博客的文章里没有找到相关内容。")],
)  # fmt: skip
async def test_a_question_both_scripts_could_write_is_declined_in_the_script_the_site_is_read_in(
    language, decline
):
    # 台 is Simplified only (臺), 氣 Traditional only: the question leans neither way, and a
    # reader of the Traditional site was declined in Simplified.
    result, _ = await ask("台北今天天氣如何？", [], language=language)

    assert result.answer == decline


@pytest.mark.asyncio
async def test_a_simplified_question_on_the_traditional_site_keeps_the_simplified_frame():
    result, _ = await ask("什么是混合检索？", [hit(ZH_ARTICLE)], language="zh-hant")

    assert result.answer.endswith("来源：[向量检索入门](/articles/vector-search-intro/)")


@pytest.mark.parametrize(
    "answer",
    [
        "我在這個博客的文章裡沒有找到相關內容。",
        # A configured model's own words, in Taiwan's: still a decline.
        "抱歉，我在這個部落格的文章中沒找到關於這個問題的資訊。",
        "這個部落格並未提及量子電腦。",
    ],
)
def test_a_decline_written_in_traditional_counts_as_unanswered(answer):
    assert is_decline(answer)


@pytest.mark.asyncio
async def test_a_fullwidth_traditional_question_is_searched_as_typed_and_folded_by_the_search():
    # The panel's step and the transcript show the query: "什么是混合检索？" to a reader who
    # typed "什麼是混合檢索？". The search folds it, so it finds what the folded one finds.
    result, _ = await ask("ＨＮＳＷ 和混合檢索有什麼關係？", [hit(ZH_ARTICLE)])

    (search,) = [r for r in result.tool_calls if r.name == "search_knowledge_base"]
    assert search.arguments["query"] == "ＨＮＳＷ 和混合檢索有什麼關係？"
    assert question_fold(search.arguments["query"]) == "HNSW 和混合检索有什么关系？"


@pytest.mark.asyncio
async def test_a_new_subject_after_a_decline_in_traditional_is_searched_on_its_own():
    declined = "部落格裡有關於量子電腦的文章嗎？"
    history = [
        {"role": "user", "content": declined},
        {"role": "assistant", "content": to_taiwan(DONT_KNOW["zh"])},
    ]
    result, _ = await ask("混合檢索", [hit(ZH_ARTICLE)], history=history)

    searched = [
        r.arguments["query"] for r in result.tool_calls if r.name == "search_knowledge_base"
    ]
    # The declined question is not searched again with it: it found nothing before.
    assert searched == ["混合檢索"]


@pytest.mark.parametrize(
    ("query", "typed", "shown"),
    [
        # The whole question, as typed: Taiwan's words too (部落格, folded to 博客).
        ("博客有哪些文章？", "部落格有哪些文章？", "部落格有哪些文章？"),
        ("什么是混合检索？", "什麼是混合檢索？", "什麼是混合檢索？"),
        # A part of it, or a rewording, in Traditional characters.
        ("混合检索", "什麼是混合檢索？", "混合檢索"),
        # A Simplified or English question's queries stay as they are.
        ("混合检索", "什么是混合检索？", "混合检索"),
        ("hybrid search", "What is hybrid search?", "hybrid search"),
        # Where Traditional characters would fold to other ones (後台 -> 後臺 -> 后台), the
        # query stays: the search must find what it found.
        ("Django 的 admin 後台", "Django 的 admin 後台怎麼改成中文介面？", "Django 的 admin 後台"),
    ],
)
def test_a_search_s_query_is_shown_in_the_visitor_s_script_and_searches_the_same(
    query, typed, shown
):
    assert as_typed(query, typed) == shown
    assert question_fold(as_typed(query, typed)) == question_fold(query)


def test_the_assistants_own_words_in_taiwan_are_published_and_quoted_as_written_there():
    # OpenCC's Taiwan table writes 发布 (publish) as 釋出 (release software): "《X》发布于"
    # read "《X》釋出於". Its quotation marks are Taiwan's corner brackets (walk 20).
    assert to_taiwan("《步数上限》发布于 2026-08-26。") == "《步數上限》發布於 2026-08-26。"
    assert (
        to_taiwan("这个博客没有关于“量子电脑”的文章。") == "這個部落格沒有關於「量子電腦」的文章。"
    )
