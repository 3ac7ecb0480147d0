"""Questions about the article on screen itself, answered from its record or declined."""

import pytest

from agent.exceptions import ToolNotFound
from agent.llm.offline import OfflineModel
from agent.llm.offline_audience import SAYS, UNSAID
from agent.llm.offline_pagemeta import NOT_RECORDED, page_ask, page_sections, related_answer
from agent.loop import Limits, TurnResult, run_turn
from agent.prompts import build_messages
from agent.tool import Tool
from tests.agent.llm.tool_inputs import DetailIn, ListIn, SearchIn

HNSW = {
    "article_id": 6,
    "title": "pgvector and HNSW indexes",
    "url": "/articles/pgvector-and-hnsw/",
    "summary": "Storing embeddings in PostgreSQL and tuning an HNSW index.",
    "published_at": "2026-08-26",
    "tags": ["postgres", "search"],
    "body": "Embeddings can live in PostgreSQL.\n\n## The vector type\n\nA column holds 384 "
    "numbers.\n\n```sql\nSELECT 1;\n```\n\n## Tuning ef_search\n\nRaise ef_search for recall.\n",
}
RRF = {
    "article_id": 7,
    "title": "Hybrid search with reciprocal rank fusion",
    "url": "/articles/hybrid-search-with-rrf/",
    "summary": "Keyword and vector search merged by one formula.",
    "published_at": "2026-09-09",
    "tags": ["search", "postgres"],
    "body": "Keyword search finds exact terms.\n\n## The formula\n\nEach list adds 1/(k+rank).\n",
}
LOOP = {
    "article_id": 2,
    "title": "Anatomy of the agent loop",
    "url": "/articles/anatomy-of-the-agent-loop/",
    "summary": "Call the model, run its tools, call again.",
    "published_at": "2026-06-17",
    "tags": ["agents"],
    "body": "The loop calls the model.\n\n## Ending\n\nNo tool calls end the turn.\n",
}
ZH = {
    "article_id": 10,
    "title": "文本嵌入入门",
    "url": "/articles/embeddings-primer-zh/",
    "summary": "把一段文字变成 384 个数字。",
    "published_at": "2026-10-21",
    "tags": ["embeddings", "search", "chinese"],
    "body": "嵌入把文字变成向量。\n\n## 前缀\n\n查询要加 query 前缀。\n",
}
ARTICLES = {a["article_id"]: a for a in (HNSW, RRF, LOOP, ZH)}


def make_tools() -> list[Tool]:
    async def search(params: SearchIn):
        return "No relevant content found."

    async def detail(params: DetailIn):
        if params.article_id not in ARTICLES:
            raise ToolNotFound(f"No published article with id {params.article_id}.")
        return ARTICLES[params.article_id]

    async def listed(params: ListIn):
        shown = [a for a in ARTICLES.values() if params.tag is None or params.tag in a["tags"]]
        return [{k: v for k, v in a.items() if k != "body"} for a in shown][: params.limit]

    return [
        Tool("search_knowledge_base", "Search.", SearchIn, search, lambda out: "results"),
        Tool("get_article_detail", "Read.", DetailIn, detail, lambda out: "1 article"),
        Tool("list_articles", "List.", ListIn, listed, lambda out: "articles"),
    ]


async def ask(question: str, page: dict, history: list[dict] | None = None) -> TurnResult:
    async def emit(event: dict) -> None:
        pass

    on_screen = {k: page[k] for k in ("article_id", "title", "url")}
    messages = build_messages(history=history or [], user_message=question, page=on_screen)
    return await run_turn(
        messages=messages, model=OfflineModel(), tools=make_tools(), limits=Limits(), emit=emit
    )


def cited(result: TurnResult) -> list[str]:
    return [c["url"] for c in result.citations]


def tools_called(result: TurnResult) -> list[str]:
    return [record.name for record in result.tool_calls]


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("When was this article published?", "date"),
        ("what day did this post go up?", "date"),
        ("这篇文章什么时候发布的？", "date"),
        ("What are the main sections of this article?", "sections"),
        ("本文的目录是什么？", "sections"),
        ("What's the key takeaway here?", "gist"),
        ("Explain this to me like I'm five", "gist"),
        ("这篇的核心观点是什么？", "gist"),
        ("What should I read next after this?", "related"),
        ("有没有和这篇相关的文章？", "related"),
        ("Is there a Chinese version of this article?", "version"),
        ("这篇文章有英文版吗？", "version"),
        ("Who wrote this?", "unrecorded:author"),
        ("这篇文章的作者是谁？", "unrecorded:author"),
        ("How many people have read this post?", "unrecorded:readers"),
        ("本文有多少点赞？", "unrecorded:readers"),
        ("Was this article edited after it was published?", "unrecorded:edited"),
        ("When was this post last updated?", "unrecorded:edited"),
        ("这篇文章最后一次修改是什么时候？", "unrecorded:edited"),
        ("Is the writer of this post on Twitter?", "unrecorded:author"),
        ("这篇文章是谁写的", "unrecorded:author"),
        ("这篇的阅读量是多少？", "unrecorded:readers"),
        ("Is this post recent?", "date"),
        ("Who is this article for?", "audience"),
        ("Who is this written for?", "audience"),
        ("Who should read this?", "audience"),
        ("Is this article for beginners?", "audience"),
        ("What do I need to know before reading this?", "audience"),
        ("这篇文章适合谁看？", "audience"),
        ("读这篇需要什么基础？", "audience"),
    ],
)
def test_a_question_about_the_page_itself(question, asked):
    assert page_ask(question, first=True) == asked


@pytest.mark.parametrize(
    "question",
    [
        # The page's topic, asked with the same asking words: searched as before.
        "Which section of this article explains how to tune ef_search?",
        "when was HNSW first published as a paper?",
        "这篇里 HNSW 的 m 参数是什么意思？",
        "what does the author say about the k constant in RRF?",
        "作者为什么选二元切分而不是 zhparser？",
        "is there a version of pgvector that supports halfvec?",
        "How many tokens can one session spend per day?",
        # Asking how to change a thing, what the writer says, or whether an idea is new.
        "Can I edit the prompt here?",
        "这里的配置怎么修改？",
        "Does the author use Redis here?",
        "Is this approach new?",
        "Why are there comments in this code here?",
        "这篇哪部分讲了 HNSW？",
        "Is pgvector for beginners?",
        "有没有适合新手的 Python 入门书推荐",
    ],
)
def test_a_question_that_names_a_topic_is_not_about_the_page_itself(question):
    assert page_ask(question, first=True) == ""


def test_a_long_question_is_not_about_the_page_alone():
    # Asking about the page takes a few words; past MAX_ASK_CHARS the patterns are not run
    # (repeated words made them scan the rest of the question from each one).
    assert page_ask("When was this published?", first=True) == "date"
    assert page_ask("When was this published? " + "this " * 800, first=True) == ""


def test_it_alone_means_the_page_only_first_thing_in_a_conversation():
    assert page_ask("when was it published?", first=True) == "date"
    assert page_ask("when was it published?", first=False) == ""
    assert page_ask("when was this post published?", first=False) == "date"


def test_the_sections_are_the_headings_with_text_under_them_in_order():
    assert page_sections(HNSW["body"]) == ["The vector type", "Tuning ef_search"]


@pytest.mark.asyncio
async def test_the_date_comes_from_the_pages_record_and_cites_it():
    result = await ask("When was this article published?", HNSW)
    assert "2026-08-26" in result.answer
    assert cited(result) == [HNSW["url"]]
    assert tools_called(result) == ["get_article_detail"]


@pytest.mark.asyncio
async def test_a_chinese_date_question_is_answered_in_chinese():
    result = await ask("这篇文章什么时候发布的？", ZH)
    assert result.answer.startswith("《文本嵌入入门》发布于 2026-10-21")
    assert cited(result) == [ZH["url"]]


@pytest.mark.asyncio
async def test_the_sections_are_listed_in_order_and_cited():
    result = await ask("What are the main sections of this article?", HNSW)
    assert "1. The vector type\n2. Tuning ef_search" in result.answer
    assert cited(result) == [HNSW["url"]]


@pytest.mark.asyncio
async def test_a_takeaway_is_the_pages_summary():
    result = await ask("What's the key takeaway here?", HNSW)
    assert HNSW["summary"] in result.answer
    assert cited(result) == [HNSW["url"]]


@pytest.mark.asyncio
async def test_what_the_record_lacks_is_declined_without_a_tool_or_a_citation():
    result = await ask("Who wrote this?", HNSW)
    assert result.answer == NOT_RECORDED["en"]["author"]
    assert result.citations == [] and tools_called(result) == []
    zh = await ask("这篇文章有多少人看过？", ZH)
    assert zh.answer == NOT_RECORDED["zh"]["readers"] and zh.citations == []


@pytest.mark.asyncio
async def test_related_articles_share_the_pages_tags_and_are_linked():
    result = await ask("Are there related articles?", HNSW)
    # RRF shares both tags, the primer one; the loop article shares none.
    assert cited(result) == [RRF["url"], ZH["url"]]
    assert tools_called(result).count("list_articles") == 2


@pytest.mark.asyncio
async def test_no_related_article_is_said_and_cites_nothing():
    result = await ask("What should I read next after this?", LOOP)
    assert "No other article" in result.answer
    assert result.citations == []


@pytest.mark.asyncio
async def test_no_translation_is_said_with_the_other_languages_titles_uncited():
    result = await ask("Is there a Chinese version of this article?", HNSW)
    assert result.answer.startswith("This blog has no Chinese version of “pgvector and HNSW")
    assert "“文本嵌入入门”" in result.answer
    assert result.citations == []
    zh = await ask("这篇文章有英文版吗？", ZH)
    assert zh.answer.startswith("这个博客没有《文本嵌入入门》的英文版本")
    assert "pgvector and HNSW indexes" in zh.answer and zh.citations == []


@pytest.mark.asyncio
async def test_a_translation_in_the_pages_record_is_linked_and_cited():
    # An author marked the Chinese primer as the HNSW article's translation (walk 20): the
    # assistant said the blog had no translations at all.
    translated = {
        **HNSW,
        "translations": [{k: ZH[k] for k in ("article_id", "title", "url", "summary")}],
    }
    ARTICLES[HNSW["article_id"]] = translated
    try:
        result = await ask("Is there a Chinese version of this article?", translated)
        english = await ask("Is there an English version of this article?", translated)
    finally:
        ARTICLES[HNSW["article_id"]] = HNSW
    assert result.answer.startswith("Yes: “pgvector and HNSW indexes” has a Chinese version:")
    assert cited(result) == [ZH["url"]] and tools_called(result) == ["get_article_detail"]
    assert english.answer.startswith("“pgvector and HNSW indexes” is itself written in English")


@pytest.mark.asyncio
async def test_a_question_naming_a_topic_on_the_page_still_searches():
    result = await ask("Which section of this article explains how to tune ef_search?", HNSW)
    assert tools_called(result)[0] == "search_knowledge_base"


def test_among_equally_related_articles_those_in_the_pages_language_come_first():
    english = {**LOOP, "article_id": 11, "url": "/articles/en/", "tags": ["search"]}
    listed = [{k: v for k, v in a.items() if k != "body"} for a in (ZH, english)]
    page = {**HNSW, "tags": ["search"]}
    answer = related_answer(page, listed, "en")
    assert answer.index("/articles/en/") < answer.index(ZH["url"])


@pytest.mark.asyncio
async def test_a_gist_asked_for_in_one_sentence_is_the_summary_alone():
    result = await ask("Sum this post up in one sentence.", HNSW)
    assert result.answer.startswith(HNSW["summary"])
    assert "The vector type" not in result.answer
    assert cited(result) == [HNSW["url"]]
    zh = await ask("用一句话概括本文", HNSW)
    assert zh.answer.startswith("《pgvector and HNSW indexes》是英文文章，以下是它的摘要（原文）：")
    assert cited(zh) == [HNSW["url"]]


@pytest.mark.asyncio
async def test_who_the_page_is_for_is_said_by_what_it_covers_when_it_names_no_readers():
    # Searched, "Who is this article for?" got the greeting's list of articles.
    result = await ask("Who is this article for?", HNSW)
    assert result.answer.startswith(UNSAID["en"].format(title=HNSW["title"]))
    assert HNSW["summary"] in result.answer and "Raise ef_search for recall." in result.answer
    assert cited(result) == [HNSW["url"]] and tools_called(result) == ["get_article_detail"]
    zh = await ask("这篇文章适合谁看？", ZH)
    assert zh.answer.startswith(UNSAID["zh"].format(title=ZH["title"]))
    assert cited(zh) == [ZH["url"]]


@pytest.mark.asyncio
async def test_a_page_that_names_its_readers_is_quoted():
    readers = "This post assumes you have written a Django view before."
    page = {**LOOP, "body": f"{readers}\n\n" + LOOP["body"]}
    ARTICLES[LOOP["article_id"]] = page
    try:
        result = await ask("Who should read this?", page)
    finally:
        ARTICLES[LOOP["article_id"]] = LOOP
    assert result.answer.startswith(SAYS["en"].format(title=LOOP["title"]))
    assert readers in result.answer and cited(result) == [LOOP["url"]]
