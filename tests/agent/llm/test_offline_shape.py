"""The quote fitted to the ask: code for "show me the code", whole lists, lead-ins."""

import pytest

from agent.llm.offline_answer import compose_answer
from agent.llm.offline_shape import asks_code, asks_many

PGVECTOR = {
    "article_id": 6,
    "title": "pgvector and HNSW indexes",
    "url": "/articles/pgvector-and-hnsw/",
    "language": "en",
    "body": """Embeddings can live in PostgreSQL.

## The vector type

After `CREATE EXTENSION vector;` you can declare a column with a fixed number of dimensions.

```sql
CREATE TABLE chunk (id bigserial PRIMARY KEY, embedding vector(384) NOT NULL);
```

## How HNSW works

HNSW builds a multi-layer graph and is approximate. Three parameters control the trade-off:

- **`m`** (default 16): the maximum number of links per node per layer.
- **`ef_construction`** (default 64): the size of the candidate list while inserting.
- **`hnsw.ef_search`** (default 40): the candidate list size at query time.

```sql
# not a heading: a comment in a block
CREATE INDEX chunk_embedding_hnsw ON chunk
USING hnsw (embedding vector_cosine_ops)
WITH (m = 16, ef_construction = 64);
```
""",
}
STREAMING = {
    "article_id": 4,
    "title": "Streaming tokens to the browser",
    "url": "/articles/streaming-tokens-to-the-browser/",
    "language": "en",
    "body": """Streaming is mostly plumbing.

## Time to first token

The number that matters most is time to first token. It is made up of:

- network round trip from browser to your server,
- your own work before calling the model,
- any buffering between the provider and the browser.

Measure time to first token separately from total duration.
""",
}


def _answer(question: str, article: dict) -> str:
    return compose_answer(question=question, context="", sources=[article], excerpts={}, lang="en")


@pytest.mark.parametrize(
    "question",
    [
        "Show me the SQL that builds an HNSW index.",
        "Give me the SQL to create an HNSW index in pgvector.",
        "What's the SQL for the generated tsvector column?",
        "What does the Redis channel layer configuration look like?",
        "What SQL makes replaying skip turns already saved?",
        "Show me how to keep a reference to a background task.",
        "中文二元切分的 Python 函数怎么写？",
        "后台任务怎么保留引用？代码是什么样的？",
        "给我看在 pgvector 里建 HNSW 索引的 SQL",
    ],
)
def test_a_question_asking_to_be_shown_code_is_read_so(question):
    assert asks_code(question)


@pytest.mark.parametrize(
    "question",
    [
        "Why does RRF ignore the scores?",
        "How do I turn off nginx buffering?",
        "Is the SQL index used when I sort by similarity?",
        "什么时候需要重新编码？",
    ],
)
def test_other_questions_do_not_ask_for_code(question):
    assert not asks_code(question)


def test_show_me_the_code_quotes_the_code_block_that_answers_it():
    answer = _answer("Show me the SQL that builds an HNSW index for cosine distance.", PGVECTOR)
    assert "USING hnsw (embedding vector_cosine_ops)" in answer
    assert "```sql\n# not a heading" in answer  # fenced as it is, its language kept
    assert "CREATE TABLE" not in answer  # the block that shares the ask's words, not the first


def test_a_question_not_asking_for_code_quotes_no_block():
    answer = _answer("What does m control in HNSW?", PGVECTOR)
    assert "maximum number of links" in answer
    assert "```" not in answer


def test_a_list_item_comes_with_the_sentence_leading_into_its_list():
    answer = _answer("What makes up the network round trip from browser to server?", STREAMING)
    assert "network round trip from browser to your server," in answer
    # "It is made up of:" leans on the sentence before it, which comes too.
    assert "The number that matters most is time to first token. It is made up of:" in answer


@pytest.mark.parametrize(
    "question",
    ["What are the steps?", "List the HNSW parameters.", "哪些字段要记录？", "有哪几种方案？"],
)
def test_a_question_asking_for_several_things_is_read_so(question):
    assert asks_many(question)


@pytest.mark.parametrize(
    "question",
    [
        # A plural noun is the subject asked about, not what is asked for.
        "What do the capacity and expiry options actually control?",
        "Does a response asking for three searches count as three steps?",
    ],
)
def test_a_plural_subject_is_no_ask_for_several_things(question):
    assert not asks_many(question)


def test_a_question_asking_for_several_things_gets_the_whole_short_list():
    answer = _answer("What are the HNSW tuning parameters and their defaults?", PGVECTOR)
    for default in ("default 16", "default 64", "default 40"):
        assert default in answer
    assert "Three parameters control the trade-off:" in answer


def test_a_question_asking_for_one_thing_gets_the_item_that_answers_it():
    answer = _answer("What is the default of ef_construction?", PGVECTOR)
    assert "default 64" in answer
    assert "default 16" not in answer


DASHBOARD = {
    "article_id": 13,
    "title": "智能体的可观测性与审计",
    "url": "/articles/agent-observability-zh/",
    "language": "zh",
    "body": """## 看板

平均值会掩盖长尾。假设平均总耗时是 2.1 秒，看上去不错。因此每个指标都画 **p50 和 p95**：

- p50（中位数）反映典型体验；
- p95 反映最慢的那二十分之一用户的体验，优化往往从这里入手；
""",
}


def test_a_chinese_lead_in_is_read_whole_and_brings_the_sentence_it_leans_on():
    answer = compose_answer(
        question="p95 反映什么？", context="", sources=[DASHBOARD], excerpts={}, lang="zh"
    )
    # "2.1 秒" is no sentence end; "因此…" leans on the sentence before it.
    assert "假设平均总耗时是 2.1 秒，看上去不错。因此每个指标都画 p50 和 p95：" in answer
    assert "p95 反映最慢的那二十分之一用户的体验" in answer


LOOP = {
    "article_id": 2,
    "title": "Anatomy of the agent loop",
    "url": "/articles/anatomy-of-the-agent-loop/",
    "language": "en",
    "summary": "Call the model, run its tool calls, append results in call order, and call again.",
    "body": """Every assistant runs on the same small loop.

## The five phases

Append the results to the conversation as tool messages, in the same order the model issued
the calls.

## Why append in call order

Tools finish in unpredictable order. There are three reasons:

- Several providers reject a conversation whose tool messages do not line up.
- Deterministic ordering makes transcripts reproducible.
- The model reasons more reliably when result n sits in position n.
""",
}


def test_a_why_question_is_answered_by_the_section_giving_the_reasons():
    answer = _answer(
        "Why do tool results have to be appended in the order the calls were issued?", LOOP
    )
    assert "There are three reasons:" in answer
    assert "Several providers reject a conversation" in answer
    assert "the same order the model issued" not in answer  # what, not why


def test_a_question_not_asking_why_keeps_its_pick():
    answer = _answer("In what order are tool results appended to the conversation?", LOOP)
    assert "Several providers reject" not in answer


def test_which_asks_for_several_only_of_a_plural():
    # "Which operator class do I use?" wants the one row, not the whole operator table.
    assert not asks_many("Which operator class do I use for a cosine HNSW index?")
    assert asks_many("Which prefixes do E5 models need on queries and on passages?")


def test_code_is_quoted_as_written_and_its_fence_cannot_be_closed_early():
    # Markdown's link guard (inert) put a space into "-> list[dict]:" inside the block.
    from agent.llm.offline_render import CODE, _render
    from agent.llm.offline_shape import fenced
    from agent.llm.offline_text import Fact

    code = "def hits(q) -> list[dict]:\n    return m[0][1]  # ``` inside"
    shown = _render([Fact("Here it is.", "sentence", "", 0), Fact(fenced(code), CODE, "", 1)], "en")

    assert f"````\n{code}\n````" in shown
