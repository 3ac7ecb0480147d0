"""Readers who ask to be written or handed code, and the block its lead-in names."""

import pytest

from agent.llm.offline_answer import compose_answer
from agent.llm.offline_artifact import asks_artifact, block_lead
from agent.llm.offline_shape import asks_code

CHANNELS = {
    "article_id": 5,
    "title": "Django Channels in practice",
    "url": "/articles/django-channels-in-practice/",
    "language": "en",
    "body": """Channels adds WebSockets to Django.

## From WSGI to ASGI

The entry point lives in `asgi.py`:

```python
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = ProtocolTypeRouter({"http": django_asgi_app})
```

In settings, `ASGI_APPLICATION` tells the server where to look, while production can use Daphne or
Uvicorn.

## Channel layers

A single consumer talking to its own socket needs nothing more. For development,
`InMemoryChannelLayer` works inside one process. In production, with more than one worker, use the
Redis layer from the `channels_redis` package:

```python
CHANNEL_LAYERS = {"default": {"BACKEND": "channels_redis.core.RedisChannelLayer"}}
```
""",
}
LIMITS = {
    "article_id": 9,
    "title": "Rate limits and token budgets",
    "url": "/articles/rate-limits-and-token-budgets/",
    "language": "en",
    "body": """Limits keep a public chat cheap.

## Choosing a window algorithm

A sliding window counter keeps the current and previous counts.

```python
def sliding_allowed(redis, key: str, limit: int) -> bool:
    return True
```
""",
}


@pytest.mark.parametrize(
    "question",
    [
        "Write me the nginx lines I need for the WebSocket.",
        "Write the loop whose last call has tools disabled.",
        "给我写一个滑动窗口限流的 Python 函数",
        "把保存半截回答的代码贴出来",
        "来段配置",
    ],
)
def test_a_question_asking_to_be_written_code_is_read_so(question):
    assert asks_artifact(question)
    assert asks_code(question)


@pytest.mark.parametrize(
    "question",
    [
        "Why write a fallback loop at all?",
        "What does the config control?",
        "给我讲讲限流",
        "给我看在 pgvector 里建 HNSW 索引的 SQL",  # shown, as offline_shape reads it
    ],
)
def test_other_questions_ask_no_artifact(question):
    assert not asks_artifact(question)


def test_a_block_is_led_in_by_the_paragraph_ending_in_a_colon():
    body = CHANNELS["body"]
    assert block_lead(body, 'CHANNEL_LAYERS = {"default"').startswith(
        "In production"
    )  # its last sentence
    assert block_lead(body, "os.environ.setdefault") == ("The entry point lives in `asgi.py`:")
    assert block_lead(body, "no such code") == ""


def test_the_block_its_lead_in_names_wins_over_the_picked_section():
    answer = compose_answer(
        question="Give me the Redis channel layer settings for production.",
        context="",
        sources=[CHANNELS],
        excerpts={},
        lang="en",
    )
    assert "channels_redis.core.RedisChannelLayer" in answer
    assert "ProtocolTypeRouter" not in answer


def test_write_me_a_function_in_chinese_quotes_the_english_block():
    answer = compose_answer(
        question="给我写一个滑动窗口限流的 Python 函数",
        context="",
        sources=[LIMITS],
        excerpts={9: "A sliding window counter keeps the current and previous counts."},
        lang="zh",
    )
    assert "def sliding_allowed" in answer


def test_only_the_sentence_introducing_a_block_names_it():
    body = """## Distance operators

Cosine distance runs from 0 to 2. A nearest-neighbour query orders by the operator:

```sql
SELECT id FROM chunk ORDER BY embedding <=> %(q)s LIMIT 10;
```
"""
    assert block_lead(body, "SELECT id") == "A nearest-neighbour query orders by the operator:"


def test_a_question_about_a_configuration_is_no_request_for_one():
    assert not asks_artifact("postgres 搜中文词啥都搜不出来，是我哪里配置错了吗")


def test_write_me_gets_no_block_sharing_only_the_title_words():
    article = {
        "article_id": 4,
        "title": "Streaming tokens to the browser",
        "url": "/articles/streaming-tokens-to-the-browser/",
        "language": "en",
        "body": """Streaming is mostly plumbing.

## The proxy that buffers everything

nginx buffers proxied responses by default, which breaks streaming.

## Send deltas

On the server, the relay is only a few lines:

```python
async def relay(stream, send):
    async for chunk in stream:
        await send(chunk)
```
""",
    }
    answer = compose_answer(
        question="Write me the nginx location block I need for streaming responses.",
        context="",
        sources=[article],
        excerpts={},
        lang="en",
    )
    assert "nginx buffers proxied responses" in answer
    assert "async def relay" not in answer
