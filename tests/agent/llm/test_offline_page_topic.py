"""A topic probe about the page on screen: "Does it cover Redis?" quotes the page's sentences
naming Redis, or what another article says of a term the page never names."""

import pytest

from agent.answered import is_decline
from agent.llm.offline import OfflineModel
from agent.llm.offline_page import PAGE_MISSING
from agent.llm.offline_page_topic import ELSEWHERE, NOT_ON_PAGE, page_topic_term
from agent.llm.offline_replies import SEARCH_FAILED
from agent.loop import Limits, run_turn
from agent.prompts import build_messages
from agent.tool import Tool
from tests.agent.llm.tool_inputs import DetailIn, SearchIn

LIMITS = {
    "article_id": 9,
    "title": "Rate limits and token budgets",
    "url": "/articles/limits/",
    "summary": "Per-session and per-IP limits and daily token budgets keep the bill predictable.",
    "body": """A public chat box is an open tap on a paid API.

## Fixed window

Count requests per calendar minute and reset at the boundary. A counter with an expiry is
trivial in Redis with INCR plus EXPIRE.

## Budgets

No model call starts unless the budgets above still cover it.
""",
}
CHANNELS = {
    "article_id": 5,
    "title": "Django Channels in practice",
    "url": "/articles/channels/",
    "summary": "Serving chat over WebSockets.",
    "body": "In production, use the Redis channel layer.",
}
CHANNELS_ZH = {
    "article_id": 12,
    "title": "Channels 实战",
    "url": "/articles/channels-zh/",
    "summary": "用 WebSockets 提供聊天服务。",
    "body": "生产环境里，WebSockets 连接由 Redis 通道层转发，每个进程都能收到消息。",
}
ARTICLES = {a["article_id"]: a for a in (LIMITS, CHANNELS, CHANNELS_ZH)}
PAGE = {k: LIMITS[k] for k in ("article_id", "title", "url")}


@pytest.mark.parametrize(
    ("question", "term"),
    [
        ("Does it cover Redis?", "Redis"),
        ("Does this article talk about Redis?", "Redis"),
        ("Is Redis mentioned here?", "Redis"),
        ("这篇文章提到 Redis 了吗？", "Redis"),
        ("文中有没有提到令牌桶？", "令牌桶"),
        ("Does it work with Redis?", ""),  # asks how, not whether the page names it
        ("Does it cover how the budget resets?", ""),
        ("Is it safe?", ""),
    ],
)
def test_a_question_whether_the_page_names_a_term_is_read_by_its_term(question, term):
    assert page_topic_term(question) == term


async def _ask(
    question: str, page: dict | None, *, search_fails: bool = False, found: dict = CHANNELS
):
    searched: list[str] = []

    async def search(params: SearchIn):
        searched.append(params.query)
        if search_fails:
            raise TimeoutError("the search timed out")
        # The search weighs "cover" as a topic word: it finds the page's budgets sentence.
        return [{**{k: found[k] for k in ("article_id", "title", "url")}, "rank": 1,
                 "excerpt": found["body"], "relevance": 0.9}]  # fmt: skip

    async def detail(params: DetailIn):
        return ARTICLES[params.article_id]

    tools = [
        Tool("search_knowledge_base", "Search.", SearchIn, search, lambda out: "results"),
        Tool("get_article_detail", "Read.", DetailIn, detail, lambda out: "1 article"),
    ]
    messages = build_messages(history=[], user_message=question, page=page)
    result = await run_turn(
        messages=messages, model=OfflineModel(), tools=tools, limits=Limits(), emit=_discard
    )
    return result, searched


async def _discard(event: dict) -> None:
    return None


@pytest.mark.asyncio
async def test_does_it_cover_a_term_quotes_the_page_naming_it():
    result, searched = await _ask("Does it cover Redis?", PAGE)

    assert "trivial in Redis with INCR" in result.answer
    assert "still cover it" not in result.answer  # the asking verb is no topic word
    assert [c["url"] for c in result.citations] == ["/articles/limits/"]
    assert searched == []  # the page answers: nothing else is searched


@pytest.mark.asyncio
async def test_a_term_the_page_never_writes_is_looked_for_in_the_other_articles():
    # "Does it cover reciprocal rank fusion?" on the rate-limits page was declined as if the
    # blog had nothing on it: the page was read, and nothing else searched.
    result, searched = await _ask("Does it cover WebSockets?", PAGE)

    assert searched == ["WebSockets"]
    assert result.answer.startswith(ELSEWHERE["en"].format(name="WebSockets"))
    assert "Serving chat over WebSockets" in result.answer and not is_decline(result.answer)
    assert [c["url"] for c in result.citations] == ["/articles/channels/"]


@pytest.mark.asyncio
async def test_another_article_in_the_other_language_is_named_as_such_before_its_words():
    # An English reader was given Chinese sentences under "another article of this blog".
    result, _ = await _ask("Does it cover WebSockets?", PAGE, found=CHANNELS_ZH)

    lead = "“WebSockets” is not on this page, but the Chinese article “Channels 实战” names it"
    assert result.answer.startswith(lead)
    assert "Redis 通道层转发" in result.answer
    assert [c["url"] for c in result.citations] == ["/articles/channels-zh/"]


@pytest.mark.asyncio
async def test_a_name_no_article_writes_is_said_missing_from_the_page_and_the_blog():
    result, _ = await _ask("Does it mention Kafka?", PAGE)
    assert result.answer == PAGE_MISSING["en"].format(name="Kafka")
    result, _ = await _ask("这篇文章提到 Kafka 了吗？", PAGE)
    assert result.answer == PAGE_MISSING["zh"].format(name="Kafka")


@pytest.mark.asyncio
@pytest.mark.parametrize(("question", "lang"), [("Does it mention Kafka?", "en"),
                                                ("这篇文章提到 Kafka 了吗？", "zh")])  # fmt: skip
async def test_a_failed_search_of_the_rest_of_the_blog_is_not_said_to_find_nothing(question, lang):
    # It said the blog had nothing on the term when the search had not finished.
    result, searched = await _ask(question, PAGE, search_fails=True)

    assert searched == ["Kafka"]
    assert result.answer.startswith(NOT_ON_PAGE[lang].format(name="Kafka"))
    assert result.answer.endswith(SEARCH_FAILED[lang])
    assert result.answer != PAGE_MISSING[lang].format(name="Kafka")
    assert is_decline(result.answer) and not result.citations


@pytest.mark.asyncio
async def test_off_a_page_the_question_is_searched_as_before():
    _, searched = await _ask("Does it cover Redis?", None)
    assert searched
