"""A reader asking for a value the article states only in code gets the code line giving it."""

import pytest

from agent.llm.offline_answer import compose_answer
from agent.llm.offline_text import Fact
from agent.llm.offline_value import asks_value, valued

VECTORS = {
    "article_id": 6,
    "title": "pgvector and HNSW indexes",
    "url": "/articles/pgvector-and-hnsw/",
    "language": "en",
    "body": """Vectors live in Postgres.

## The vector type

You declare a column with a fixed number of dimensions. Our model produces 384 numbers per
passage, so:

```sql
CREATE TABLE passages (
    id          bigserial PRIMARY KEY,
    embedding   vector(384) NOT NULL
);
```

The dimension is enforced, which catches the classic bug of switching models: a 768-dimension
vector will simply be rejected.
""",
}
CHANNELS = {
    "article_id": 5,
    "title": "Django Channels in practice",
    "url": "/articles/django-channels-in-practice/",
    "language": "en",
    "body": """Channels needs a layer.

## Channel layers

In production, use the Redis layer:

```python
CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        "CONFIG": {"hosts": [("redis", 6379)], "capacity": 100, "expiry": 60},
    }
}
```

The capacity is the number of messages a channel may hold before new sends raise ChannelFull.
""",
}
LOOP = {
    "article_id": 2,
    "title": "Anatomy of the agent loop",
    "url": "/articles/anatomy-of-the-agent-loop/",
    "language": "en",
    "body": """The loop calls the model until it answers.

## A sketch

The loop stops when the model call budget is spent:

```python
async def run_turn(messages, tools, max_model_calls=5):
    for _ in range(max_model_calls):
        ...
```

Each model call in the loop resends the conversation so far.
""",
}


def _answer(question: str, article: dict) -> str:
    return compose_answer(question=question, context="", sources=[article], excerpts={}, lang="en")


@pytest.mark.parametrize(
    "question",
    [
        "How many dimensions does the vector column have?",
        "What capacity is configured for the channel layer?",
        "What's the default ef_search?",
        "which port is the Redis host set to?",
    ],
)
def test_asks_value(question):
    assert asks_value(question)


@pytest.mark.parametrize("question", ["What is a channel layer?", "Why is the dimension enforced?"])
def test_not_a_value(question):
    assert not asks_value(question)


def test_a_value_only_code_states_is_quoted_with_its_code_line():
    answer = _answer("What capacity is configured for the channel layer?", CHANNELS)
    assert '"capacity": 100' in answer
    assert "ChannelFull" in answer  # the sentence picked stays first


def test_the_sentence_introducing_the_block_comes_when_it_says_the_value():
    answer = _answer("How many dimensions does the vector column for passages have?", VECTORS)
    assert "vector(384)" in answer
    assert "384 numbers per" in answer
    assert answer.index("384 numbers per") < answer.index("vector(384)")


def test_a_value_the_quote_already_gives_brings_no_code():
    facts = [Fact("The capacity of 100 messages is plenty.", "sentence", "Channel layers", 1)]
    question = "What capacity is configured for the channel layer?"
    assert valued(question=question, body=CHANNELS["body"], facts=facts) == facts


def test_a_quote_giving_the_asked_setting_its_value_brings_no_code():
    facts = [Fact("hnsw.ef_search (default 40): the candidate list.", "item", "Parameters", 1)]
    body = "## Parameters\n\n```sql\nSET hnsw.ef_search = 100;\n```\n"
    assert valued(question="What's the default ef_search?", body=body, facts=facts) == facts


def test_a_code_line_giving_a_name_its_value_comes_after_the_quote():
    facts = [Fact("Each model call resends the conversation.", "sentence", "A sketch", 1)]
    question = "What is the default number of max model calls in the sketch?"
    found = valued(question=question, body=LOOP["body"], facts=facts)
    assert "max_model_calls=5" in found[-1].text


def test_a_part_of_a_name_alone_does_not_name_it():
    # "model" is a part of max_model_calls, and of many names: it asks for no value of it.
    facts = [Fact("Each model call resends the conversation.", "sentence", "A sketch", 1)]
    question = "How many tokens does a model answer use?"
    assert valued(question=question, body=LOOP["body"], facts=facts) == facts


def test_not_a_value_ask_brings_no_code():
    facts = [Fact("The capacity is the number of messages.", "sentence", "Channel layers", 1)]
    body = CHANNELS["body"]
    assert valued(question="What does capacity control?", body=body, facts=facts) == facts
