"""Names a question asks about (versions, products, values) and whether articles mention them."""

from agent.llm.offline_names import missing_names, named_terms


def test_names_in_an_english_question():
    question = (
        "Does SSE over HTTP/2 with Postgres, asyncio.shield and IVFFlat at 384-dim need "
        "the Last-Event-ID header?"
    )
    assert named_terms(question) == [
        "sse", "http/2", "postgres", "asyncio.shield", "ivfflat", "384-dim", "last-event-id",
    ]  # fmt: skip


def test_ordinary_words_are_not_names():
    # A capital that starts a sentence, a language, a contraction, "e.g.", "and/or" and an
    # ordinary hyphenated word say nothing about what the question names.
    question = (
        "Where should the long-running answer live, e.g. in a task and/or a thread? "
        "Chinese text? I'm unsure."
    )
    assert named_terms(question) == []


def test_every_latin_word_or_number_in_a_chinese_question_is_a_name():
    assert named_terms("pg_jieba 在 PostgreSQL 16 上怎么编译安装？") == [
        "pg_jieba",
        "postgresql",
        "16",
    ]
    assert named_terms("RRF 的 k 取 60 和取 10，差多少？") == ["rrf", "60", "10"]


def test_a_name_is_found_as_a_word_or_its_start_and_a_number_only_whole():
    texts = ["PostgreSQL keeps 1,000 rows; WebSocket frames take 120 ms; the cap is 100 (0.10)."]
    assert missing_names("Is 1000 enough on Postgres with WebSockets and 120ms?", texts) == []
    assert missing_names("Is 10 enough, or 12?", texts) == ["10", "12"]
    assert missing_names("What about 384-dim vectors?", ["vector(384)"]) == []
    assert missing_names("What about GPT-4o?", ["GPT-4 and GPT-3"]) == ["gpt-4o"]
