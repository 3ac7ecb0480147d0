"""Questions about the blog's catalogue, answered from list_articles and the search."""

import pytest

from agent.exceptions import ToolNotFound
from agent.llm.offline import OfflineModel
from agent.llm.offline_catalog import tag_for, titled
from agent.llm.offline_catalog_ask import catalogue_ask
from agent.llm.offline_replies import SEARCH_FAILED
from agent.loop import Limits, TurnResult, run_turn
from agent.prompts import build_messages
from agent.tool import Tool
from tests.agent.llm.tool_inputs import DetailIn, ListIn, SearchIn


def _article(n, slug, title, date, tags, summary, body="Text.\n\n## One\n\nLead.\n"):
    return {
        "article_id": n,
        "title": title,
        "url": f"/articles/{slug}/",
        "summary": summary,
        "published_at": date,
        "tags": tags,
        "body": body,
    }


AGENT = _article(
    1,
    "tool-driven-agents",
    "What a tool-driven agent is",
    "2026-06-03",
    ["agents", "architecture"],
    "Tools give the facts.",
)
LOOP = _article(
    2,
    "anatomy-of-the-agent-loop",
    "Anatomy of the agent loop",
    "2026-06-17",
    ["agents"],
    "Call the model, run tools.",
    "The loop.\n\n## The five phases\n\nFirst.\n\n## Stop conditions\n\nEnd.\n",
)
HNSW = _article(
    6,
    "pgvector-and-hnsw",
    "pgvector and HNSW indexes",
    "2026-08-26",
    ["postgres", "search"],
    "Tuning an HNSW index.",
)
EMBED = _article(
    10,
    "embeddings-primer-zh",
    "文本嵌入入门",
    "2026-10-21",
    ["embeddings", "search", "chinese"],
    "把一段文字变成 384 个数字。",
)
FTS = _article(12, "chinese-full-text-search-zh", "中文全文检索的难点", "2026-11-18",
               ["search", "postgres", "chinese"], "PostgreSQL 不会给中文分词。")  # fmt: skip
ARTICLES = {a["article_id"]: a for a in (AGENT, LOOP, HNSW, EMBED, FTS)}
NEWEST_FIRST = sorted(ARTICLES.values(), key=lambda a: a["published_at"], reverse=True)


def make_tools(hits: dict[str, list[dict]] | None = None) -> list[Tool]:
    async def search(params: SearchIn):
        found = (hits or {}).get(params.query.lower())
        return found or "No relevant content found."

    async def detail(params: DetailIn):
        if params.article_id not in ARTICLES:
            raise ToolNotFound(f"No published article with id {params.article_id}.")
        return ARTICLES[params.article_id]

    async def listed(params: ListIn):
        tag = (params.tag or "").lower()
        shown = [a for a in NEWEST_FIRST if not tag or tag in a["tags"]]
        return [{k: v for k, v in a.items() if k != "body"} for a in shown][: params.limit]

    return [
        Tool("search_knowledge_base", "Search.", SearchIn, search, lambda out: "results"),
        Tool("get_article_detail", "Read.", DetailIn, detail, lambda out: "1 article"),
        Tool("list_articles", "List.", ListIn, listed, lambda out: "articles"),
    ]


def hit(article: dict, excerpt: str) -> dict:
    keys = ("article_id", "title", "url", "summary", "published_at")
    return {**{k: article[k] for k in keys}, "rank": 1, "excerpt": excerpt, "relevance": 0.9}


async def ask(question: str, hits: dict[str, list[dict]] | None = None) -> TurnResult:
    async def emit(event: dict) -> None:
        pass

    messages = build_messages(history=[], user_message=question, page=None)
    return await run_turn(
        messages=messages, model=OfflineModel(), tools=make_tools(hits), limits=Limits(), emit=emit
    )


def cited(result: TurnResult) -> list[str]:
    return [c["url"].split("/")[2] for c in result.citations]


def calls(result: TurnResult) -> list[tuple[str, dict]]:
    return [(r.name, r.arguments) for r in result.tool_calls]


@pytest.mark.parametrize(
    ("question", "what", "facet"),
    [
        ("Which articles are written in Chinese?", "list", {"language": "zh"}),
        ("有哪些英文文章？", "list", {"language": "en"}),
        ("Which articles are tagged postgres?", "list", {"tag": "postgres", "tag_named": True}),
        # The full stop ends the sentence, not the tag ("No article is tagged “ml.”.").
        ("List the articles tagged machine-learning.", "list", {"tag": "machine-learning"}),
        ("Any posts tagged node.js?", "list", {"tag": "node.js"}),
        ("标签是 postgres 的文章有哪些？", "list", {"tag": "postgres", "tag_named": True}),
        ("关于搜索的文章有哪些？", "list", {"tag": "搜索", "tag_named": False}),
        ("List the articles about search.", "list", {"tag": "search"}),
        ("Show me everything about agents", "list", {"tag": "agents"}),
        ("What are the oldest articles here?", "list", {"order": "oldest", "shown": 5}),
        ("What's the newest article?", "list", {"order": "newest", "shown": 1}),
        ("最近发了哪三篇文章？", "list", {"order": "newest", "shown": 3}),
        ("博客一共有几篇文章？", "count", {}),
        ("How many posts are in Chinese?", "count", {"language": "zh"}),
        ("Which article should I start with?", "list", {"start": "first"}),
        ("给初学者推荐一个阅读顺序", "list", {"start": "order"}),
        ("Which articles were published in 2019?", "list", {"year": "2019"}),
        ("When was the step limits article published?", "record", {"subject": "step limits"}),
        ("关于 HNSW 的那篇文章是什么时候发布的？", "record", {"field": "date", "subject": "HNSW"}),
        ("What tags does the prompts article have?", "record", {"field": "tags"}),
        # The subject is not read from the first "the", nor the field from the title.
        (
            "What are the tags of the pgvector article?",
            "record",
            {"field": "tags", "subject": "pgvector"},
        ),
        ('When was the "Tags and search" article published?', "record", {"field": "date"}),
        ("Who wrote the article about HNSW?", "unrecorded", {"field": "author"}),
        ("Show me the articles written by Alice.", "unrecorded", {"field": "author"}),
        ("张三写了哪些文章？", "unrecorded", {"field": "author"}),
        ("What's the most read article on the blog?", "unrecorded", {"field": "readers"}),
    ],
)
def test_a_catalogue_question_is_read_by_its_grammar(question, what, facet):
    found = catalogue_ask(question)
    assert found is not None and found.what == what
    assert {k: getattr(found, k) for k in facet} == facet


@pytest.mark.parametrize(
    "question",
    [
        "Which articles explain how HNSW works?",  # a topic of its own: searched
        "How do I publish a post in Chinese?",
        "What is the newest version of pgvector the articles use?",
        "中文全文检索用什么分词？",
        "In this post, what's the quick check the author proposes for a runaway loop?",
        "What does the tool-driven agents article say about schedulers?",
        "Who wrote this article?",  # the page on screen: offline_pagemeta
        "这篇文章有哪些小节？",
    ],
)
def test_a_question_with_a_topic_of_its_own_is_not_a_catalogue_question(question):
    assert catalogue_ask(question) is None


def test_a_tag_is_named_by_its_stem_a_longer_name_or_in_chinese():
    tags = ["agents", "postgres", "search"]
    assert tag_for("agent", tags) == "agents"
    assert tag_for("postgresql", tags) == "postgres"
    assert tag_for("搜索", tags) == "search"
    assert tag_for("智能体", tags) == "agents"
    assert tag_for("搜索引擎", tags) == "search"  # a glossary term inside a compound
    assert tag_for("kafka", tags) == ""


def test_an_article_is_found_by_the_words_of_its_title():
    listed = list(ARTICLES.values())
    assert titled("HNSW", listed) is HNSW
    assert titled("中文全文检索的难点", listed) is FTS
    assert titled("GraphQL", listed) is None


async def test_articles_in_a_language_are_listed_and_each_cited():
    result = await ask("Which articles are written in Chinese?")
    assert cited(result) == ["chinese-full-text-search-zh", "embeddings-primer-zh"]
    assert calls(result) == [("list_articles", {"limit": 20})]
    assert result.answer.startswith("The blog’s articles written in Chinese (2, newest first):")


async def test_a_tag_is_listed_through_the_tools_tag_filter():
    result = await ask("标签是 postgres 的文章有哪些？")
    assert ("list_articles", {"tag": "postgres", "limit": 20}) in calls(result)
    assert cited(result) == ["chinese-full-text-search-zh", "pgvector-and-hnsw"]
    assert result.answer.startswith("博客里的标签为“postgres”的文章")


async def test_a_topic_a_tag_names_in_chinese_lists_that_tag():
    result = await ask("关于搜索的文章有哪些？")
    assert ("list_articles", {"tag": "search", "limit": 20}) in calls(result)
    assert set(cited(result)) == {
        "pgvector-and-hnsw",
        "embeddings-primer-zh",
        "chinese-full-text-search-zh",
    }


async def test_a_tag_no_article_carries_is_declined_naming_the_tags():
    result = await ask("Which articles are tagged kubernetes?")
    assert cited(result) == []
    assert "No article on this blog is tagged “kubernetes”" in result.answer
    assert "postgres" in result.answer


async def test_the_oldest_and_the_newest_come_in_order():
    oldest = await ask("What are the oldest articles here?")
    newest = await ask("What's the most recent article?")
    assert cited(oldest)[:2] == ["tool-driven-agents", "anatomy-of-the-agent-loop"]
    assert cited(newest) == ["chinese-full-text-search-zh"]
    assert "2026-11-18" in newest.answer


async def test_how_many_counts_the_catalogue():
    result = await ask("博客一共有几篇文章？")
    assert result.answer.startswith("博客共有 5 篇文章：")
    chinese = await ask("How many posts are in Chinese?")
    assert chinese.answer.startswith("The blog has 2 published articles written in Chinese, of 5")


async def test_a_language_or_year_no_article_has_is_declined():
    japanese = await ask("Which articles are written in Japanese?")
    old = await ask("Which articles were published in 2019?")
    assert cited(japanese) == [] and "Japanese" in japanese.answer
    assert cited(old) == [] and "2026-06-03 to 2026-11-18" in old.answer


async def test_a_beginner_starts_with_the_articles_that_introduce_their_subject():
    result = await ask("Which article should I start with?")
    assert cited(result) == ["tool-driven-agents", "embeddings-primer-zh"]


async def test_a_named_articles_date_comes_from_its_record():
    result = await ask("When was the HNSW article published?")
    assert "2026-08-26" in result.answer
    assert cited(result) == ["pgvector-and-hnsw"]


async def test_a_named_articles_sections_are_read_from_its_body():
    result = await ask("What are the sections of the article on the agent loop?")
    assert cited(result) == ["anatomy-of-the-agent-loop"]
    assert "The five phases" in result.answer and "Stop conditions" in result.answer


async def test_an_article_found_by_the_search_must_name_the_subject():
    hits = {"graphql": [hit(HNSW, "An HNSW graph links each vector to its neighbours.")]}
    result = await ask("When was the article on GraphQL published?", hits)
    assert cited(result) == []
    assert "couldn’t find an article on this blog about “GraphQL”" in result.answer


async def test_what_the_record_does_not_hold_is_declined_as_not_recorded():
    result = await ask("Who wrote the article about HNSW?")
    assert cited(result) == [] and calls(result) == []
    assert "doesn’t record who writes its articles" in result.answer


RATE = _article(9, "rate-limits-and-token-budgets", "Rate limits and token budgets", "2026-10-07",
                ["limits", "security"], "Per-session limits and daily budgets.")  # fmt: skip


async def test_a_topic_no_tag_names_lists_the_articles_the_search_finds_naming_it():
    ARTICLES[RATE["article_id"]] = RATE
    try:
        hits = {"限流": [hit(RATE, "Docent limits on two identities."), hit(HNSW, "An index.")]}
        found = await ask("有哪些讲限流的文章？", hits)
        none = await ask("List the articles about Kafka.", {"kafka": [hit(HNSW, "A graph.")]})
    finally:
        del ARTICLES[RATE["article_id"]]
    assert ("search_knowledge_base", {"query": "限流", "limit": 5}) in calls(found)
    assert cited(found) == ["rate-limits-and-token-budgets"]  # named through the glossary
    assert cited(none) == [] and "about “kafka”" in none.answer


async def test_this_article_on_a_page_is_the_pages_not_the_catalogues():
    async def emit(event: dict) -> None:
        pass

    page = {k: HNSW[k] for k in ("article_id", "title", "url")}
    messages = build_messages(history=[], user_message="Who wrote this article?", page=page)
    result = await run_turn(
        messages=messages, model=OfflineModel(), tools=make_tools(), limits=Limits(), emit=emit
    )
    assert "so I can’t say who wrote this one" in result.answer  # offline_pagemeta's decline


@pytest.mark.parametrize(
    "question",
    ["List the articles about Kafka.", "When was the article on GraphQL published?"],
)
async def test_a_catalogue_search_that_failed_does_not_say_the_blog_has_no_such_article(question):
    # A search that raised (or timed out) found nothing *yet*: "I couldn't find an article on
    # this blog about Kafka" would be untrue of a blog that has one.
    async def broken(params: SearchIn):
        raise RuntimeError("the embedder is still loading")

    async def emit(event: dict) -> None:
        pass

    tools = [Tool("search_knowledge_base", "Search.", SearchIn, broken, str), *make_tools()[1:]]
    messages = build_messages(history=[], user_message=question, page=None)
    result = await run_turn(
        messages=messages, model=OfflineModel(), tools=tools, limits=Limits(), emit=emit
    )

    assert [r.name for r in result.tool_calls if not r.ok] == ["search_knowledge_base"]
    assert result.answer == SEARCH_FAILED["en"] and cited(result) == []
