"""Topic probes ("Do you have anything on Redis?"): the passages naming the term, each cited."""

import pytest

from agent.answered import is_decline
from agent.llm.offline import OfflineModel
from agent.llm.offline_topic import (
    NOT_NAMED,
    compose_topic,
    names_topic,
    topic_of,
    topic_term,
)
from agent.loop import Limits, run_turn
from agent.prompts import build_messages
from agent.tool import Tool
from tests.agent.llm.tool_inputs import DetailIn, SearchIn

CHANNELS = {
    "article_id": 1,
    "title": "Django Channels in practice",
    "url": "/articles/channels/",
    "summary": "How the chat is served over WebSockets with Django Channels.",
    "body": """Calling get_asgi_application() first avoids the apps-not-loaded error.

## Channel layers

The in-memory layer works in one process. In production, with more than one worker, use the
Redis layer from the `channels_redis` package:

```python
CHANNEL_LAYERS = {"default": {"BACKEND": "channels_redis.core.RedisChannelLayer"}}
```

A WebSocket consumer is to a socket what a view is to a request. Each WebSocket has a scope.
Redis also keeps the groups. Origins are checked before a WebSocket is accepted.
Closing a WebSocket cancels the turn.
""",
}
LIMITS = {
    "article_id": 2,
    "title": "Rate limits and token budgets",
    "url": "/articles/limits/",
    "summary": "Per-session limits, window algorithms, Retry-After, and daily token budgets.",
    "body": """Rate limits keep the bill predictable.
A rejected request should cost a Redis round trip, not a model call.

Send a Retry-After header with the number of seconds to wait. The socket stays open.
A client over a WebSocket gets an error event instead.
""",
}
PERSISTENCE = {
    "article_id": 3,
    "title": "异步持久化",
    "url": "/articles/persistence-zh/",
    "summary": "",
    "body": "每轮记录带一个幂等键，重放时不会重复插入。服务器重启后会重放暂存文件。",
}
PROMPTS = {
    "article_id": 4,
    "title": "Designing prompts",
    "url": "/articles/prompts/",
    "summary": "",
    "body": """Citations are checked after the answer is written.

```python
def check_citations(answer, seen_urls):
    return []
```
""",
}
ARTICLES = {a["article_id"]: a for a in (CHANNELS, LIMITS, PERSISTENCE, PROMPTS)}


@pytest.mark.parametrize(
    ("question", "term"),
    [
        ("Do you have anything on Redis?", "Redis"),
        ("What does the blog say about fsync?", "fsync"),
        ("Does the blog cover WebSockets?", "WebSockets"),
        ("Anything about Retry-After?", "Retry-After"),
        ("Where is idempotency discussed?", "idempotency"),
        ("Any notes on the ASGI application setup?", "ASGI application setup"),
        ("Is there anything here on channels_redis?", "channels_redis"),
        ("Is BM25 covered anywhere?", "BM25"),
        ("does the blog talk about IPv6 at all", "IPv6"),
        ("What have you written about JWT?", "JWT"),
        ("Is there a post that covers daphne?", "daphne"),
        ("有没有讲 Redis 的文章？", "Redis"),
        ("有讲 HNSW 的吗？", "HNSW"),
        ("博客里有提到 asyncio.shield 吗？", "asyncio.shield"),
        ("关于幂等键，博客里写了什么？", "幂等键"),
        ("flock 在哪篇文章里提到了？", "flock"),
        ("博客里哪些文章提到了 Redis？", "Redis"),
        ("有没有关于余弦相似度的内容？", "余弦相似度"),
    ],
)
def test_a_topic_probe_is_read_by_its_framing_and_gives_its_term(question, term):
    assert topic_term(question) == term


@pytest.mark.parametrize(
    "question",
    [
        "How does Redis keep the rate limit atomic?",
        "Does the blog say how HNSW works?",
        "What does the blog say about why step limits matter?",
        "Do you have anything on how to tune ef_search for recall?",
        "Is it covered anywhere?",
        "有没有讲 Redis 为什么快的文章？",
        "Redis 是什么？",
        "有没有办法让检索更快？",
    ],
)
def test_a_question_about_how_or_why_is_no_topic_probe(question):
    assert topic_term(question) == ""


def test_a_term_is_named_as_written_hyphenated_in_code_or_through_the_glossary():
    assert names_topic("Send a Retry-After header.", topic_of("Retry-After"))
    assert not names_topic("Retry the request after a pause.", topic_of("Retry-After"))
    assert names_topic("use the channels_redis package", topic_of("channels_redis"))
    assert not names_topic("use the Redis layer", topic_of("channels_redis"))
    # The head of "heartbeats on a dropped connection", and its Chinese name from the glossary.
    assert names_topic("服务端应当定期发送心跳。", topic_of("heartbeats on a dropped connection"))
    assert names_topic("重放时靠幂等键去重。", topic_of("idempotency keys"))
    assert names_topic("Most models are trained for cosine similarity.", topic_of("余弦相似度"))
    # The names inside a longer term: "ASGI" of "ASGI application setup".
    assert names_topic("Channels runs on ASGI.", topic_of("ASGI application setup"))
    # "e5 模型" is not named by every sentence saying 模型 (model).
    assert not names_topic("The model answers.", topic_of("e5 模型"))


def test_each_article_naming_the_term_is_quoted_with_the_sentences_that_name_it():
    answer = compose_topic(topic_of("Redis"), [CHANNELS, LIMITS, PROMPTS], "en")
    # The sentence introducing a code block names channels_redis: it is quoted, ending in ".".
    assert (
        "In production, with more than one worker, use the Redis layer from the channels_redis "
        "package." in answer
    )
    assert "A rejected request should cost a Redis round trip, not a model call." in answer
    assert "get_asgi_application" not in answer  # a sentence without Redis is no answer
    assert answer.count("Source: ") == 2
    assert "(/articles/channels/)" in answer and "(/articles/limits/)" in answer
    assert "/articles/prompts/" not in answer


def test_an_article_naming_the_term_in_passing_is_left_out():
    # WebSocket: five times in the Channels article (summary included), once in the limits one.
    answer = compose_topic(topic_of("WebSockets"), [LIMITS, CHANNELS], "en")
    assert answer.startswith("How the chat is served over WebSockets")
    assert "/articles/limits/" not in answer


def test_the_summary_names_a_hyphenated_term_the_body_names_too():
    answer = compose_topic(topic_of("Retry-After"), [CHANNELS, LIMITS], "en")
    assert answer.startswith("Per-session limits, window algorithms, Retry-After")
    assert "Send a Retry-After header" in answer
    assert answer.endswith("Source: [Rate limits and token budgets](/articles/limits/)")


def test_a_term_across_languages_is_found_by_its_glossary_name():
    answer = compose_topic(topic_of("idempotency keys"), [LIMITS, PERSISTENCE], "en")
    assert answer.startswith("每轮记录带一个幂等键，重放时不会重复插入。")
    assert "/articles/persistence-zh/" in answer and "/articles/limits/" not in answer


def test_a_name_no_article_mentions_is_declined_plainly():
    answer = compose_topic(topic_of("Kafka"), [CHANNELS, LIMITS], "en")
    assert answer == NOT_NAMED["en"].format(name="Kafka")
    assert is_decline(answer)
    assert is_decline(compose_topic(topic_of("Milvus"), [PERSISTENCE], "zh"))


def test_the_declined_name_is_shown_as_text_never_as_a_link():
    # The name is the visitor's own words: quoted back as Markdown, it made a link (or an
    # image) in the assistant's answer.
    for name in ("[Kafka](https://evil.example)", "![Kafka](https://evil.example/x.png)"):
        answer = compose_topic(topic_of(name), [CHANNELS, LIMITS], "en")
        assert "](" not in answer and is_decline(answer)
    answer = compose_topic(topic_of("<https://evil.example>"), [CHANNELS], "en")
    assert "<https:" not in answer


def test_a_probe_is_short_and_its_term_a_name():
    # Long inputs are refused before the frames run: their optional tails made a run of
    # spaces quadratic, and a term of hundreds of letters reached a recursive name check.
    assert topic_term("do you have anything on" + " " * 3990 + "Redis") == "Redis"
    assert topic_term("Do you have anything on Redis? " + "Please. " * 40) == ""
    assert topic_term("Do you have anything on Redis" + "s" * 100 + "?") == ""
    assert topic_term("Do you have anything on Redis?") == "Redis"


def test_a_name_only_in_code_or_a_plain_phrase_is_left_to_the_usual_answer():
    assert compose_topic(topic_of("check_citations"), [PROMPTS], "en") == ""
    assert compose_topic(topic_of("audit trail"), [CHANNELS], "en") == ""


def _hit(article: dict, relevance: float) -> dict:
    fields = {k: article[k] for k in ("article_id", "title", "url")}
    return {**fields, "rank": 1, "excerpt": article["body"][:600], "relevance": relevance}


def _tools(found: dict[str, list[dict]]) -> list[Tool]:
    async def search(params: SearchIn):
        return found.get(params.query) or "No relevant content found."

    async def detail(params: DetailIn):
        return ARTICLES[params.article_id]

    return [
        Tool("search_knowledge_base", "Search.", SearchIn, search, lambda out: "results"),
        Tool("get_article_detail", "Read.", DetailIn, detail, lambda out: "1 article"),
    ]


async def _ask(question: str, found: dict[str, list[dict]]):
    messages = build_messages(history=[], user_message=question, page=None, language="")

    async def emit(event: dict) -> None:
        return None

    return await run_turn(
        messages=messages, model=OfflineModel(), tools=_tools(found), limits=Limits(), emit=emit
    )


@pytest.mark.asyncio
async def test_the_term_alone_is_searched_and_every_hit_read():
    # The whole question found only the Channels article's asgi sentence; "Redis" alone finds
    # both articles, and each is quoted where it names Redis.
    found = {"Redis": [_hit(CHANNELS, 0.76), _hit(LIMITS, 0.61)]}
    result = await _ask("Do you have anything on Redis?", found)
    names = [(r.name, r.arguments) for r in result.tool_calls]
    assert names == [
        ("search_knowledge_base", {"query": "Redis", "limit": 5}),
        ("get_article_detail", {"article_id": 1}),
        ("get_article_detail", {"article_id": 2}),
    ]
    assert "get_asgi_application" not in result.answer
    assert [c["url"] for c in result.citations] == ["/articles/channels/", "/articles/limits/"]


@pytest.mark.asyncio
async def test_a_longer_term_that_finds_nothing_is_searched_by_the_name_inside_it():
    found = {"ASGI": [_hit(CHANNELS, 0.9)]}
    result = await _ask("Any notes on the ASGI application setup?", found)
    queries = [r.arguments["query"] for r in result.tool_calls if r.name.startswith("search")]
    assert queries == ["ASGI application setup", "ASGI"]
    assert "get_asgi_application() first" in result.answer
    assert [c["url"] for c in result.citations] == ["/articles/channels/"]


@pytest.mark.asyncio
async def test_a_term_no_article_read_names_is_declined_and_cites_nothing():
    found = {"JWT": [_hit(LIMITS, 0.6)]}
    result = await _ask("What have you written about JWT?", found)
    assert result.answer == NOT_NAMED["en"].format(name="JWT")
    assert result.citations == []


@pytest.mark.asyncio
async def test_an_article_titled_after_the_term_gets_the_usual_answer():
    found = {"rate limits": [_hit(LIMITS, 0.9)]}
    result = await _ask("Do you have anything on rate limits?", found)
    # Not only the sentences naming "rate limits" (none does in the body): the usual answer.
    assert [c["url"] for c in result.citations] == ["/articles/limits/"]
    assert not is_decline(result.answer)


def test_a_glossary_name_counts_only_as_a_phrase():
    topic = topic_of("余弦相似度")
    assert names_topic("Most models are trained for cosine similarity.", topic)
    assert not names_topic("An embedding similarity query ordered by cosine distance.", topic)
