"""Names a question asks about (versions, products, values) and whether articles mention them."""

from agent.llm.offline_names import mentions, missing_names, named_terms


def test_names_in_an_english_question():
    question = (
        "Does SSE over HTTP/2 with Postgres, asyncio.shield and IVFFlat at 384-dim need "
        "the Last-Event-ID header?"
    )
    assert named_terms(question) == [
        "SSE", "HTTP/2", "Postgres", "asyncio.shield", "IVFFlat", "384-dim", "Last-Event-ID",
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
        "PostgreSQL",
        "16",
    ]
    assert named_terms("RRF 的 k 取 60 和取 10，差多少？") == ["RRF", "60", "10"]


def test_a_name_is_found_as_a_word_or_its_start_and_a_number_only_whole():
    texts = ["PostgreSQL keeps 1,000 rows; WebSocket frames take 120 ms; the cap is 100 (0.10)."]
    assert missing_names("Is 1000 enough on Postgres with WebSockets and 120ms?", texts) == []
    assert missing_names("Is 10 enough, or 12?", texts) == ["10", "12"]
    assert missing_names("What about 384-dim vectors?", ["vector(384)"]) == []
    assert missing_names("What about GPT-4o?", ["GPT-4 and GPT-3"]) == ["GPT-4o"]


def test_a_decline_for_a_missing_name_counts_as_a_decline():
    # The turn must be recorded as not answered, in either language.
    from agent.answered import is_decline
    from agent.llm.offline_declines import NOT_MENTIONED

    for text in NOT_MENTIONED.values():
        link = "[Streaming tokens](/articles/streaming/)"
        assert is_decline(text.format(name="HTTP/2", link=link))


def test_a_class_pasted_with_its_module_path_is_found_by_its_class_name():
    # A reader pastes a traceback's exception; the article names the class alone.
    texts = ["Calling the ORM inside an async consumer raises SynchronousOnlyOperation."]
    assert (
        missing_names("django.core.exceptions.SynchronousOnlyOperation: how do I fix it?", texts)
        == []
    )
    assert missing_names("Why builtins.ValueError?", ["raises valueerror"]) == []
    # A function keeps its module ("shield" alone is an everyday word), and a class the
    # article never names is still missing.
    assert missing_names("Does asyncio.shield help?", ["shield the task"]) == ["asyncio.shield"]
    assert missing_names("Why django.db.utils.OperationalError?", texts) == [
        "django.db.utils.OperationalError"
    ]


def test_names_asked_together_with_a_slash_are_each_found_on_their_own():
    text = "同样一套 tsvector 加 gin 索引的方案，搬到中文内容上几乎完全失效。"

    assert missing_names("How do you set up the tsvector/GIN side for Chinese?", [text]) == []
    assert missing_names("Is tsvector/RUM better here?", [text]) == ["tsvector/RUM"]
    # A side with a digit keeps the name whole: HTTP/2 is one protocol, not "HTTP" and "2".
    assert missing_names("Does it need HTTP/2?", ["plain http works, 2 ways"]) == ["HTTP/2"]


def test_a_small_number_or_position_is_mentioned_when_an_article_spells_it_out():
    # "3 searches" and "the 2nd one" are written "three searches" and "the second search"; in
    # Chinese "三次" or "第二". A numeral inside a word ("一样", "统一") is no number.
    texts = ["When a model asks for three searches, the second search may finish first."]
    assert missing_names("If it asks for 3 searches and the 2nd one finishes first?", texts) == []
    assert missing_names("Does the 4th one wait?", texts) == ["4th"]
    chinese = ["模型连续搜索三次，第二个结果先返回。"]
    assert missing_names("搜了 3 次以后第 2 个先回来怎么办？", chinese) == []
    assert missing_names("两种写法一样吗，要 1 个就够吗？", ["两种写法一样，统一处理。"]) == ["1"]
    # Not inside a larger number or a word, not 1 ("one", 一个 are everywhere), and an ordinal
    # only as an ordinal: "HTTP/2" does not mention "the 2nd one".
    assert missing_names("要 3 次还是 10 次？", ["重试十三次，三分之一，这一点十分重要"]) == [
        "3",
        "10",
    ]
    assert missing_names("k 取 1 吗？", ["这是一个常见的例子"]) == ["1"]
    assert missing_names("Does the 2nd one wait?", ["HTTP/2 is used"]) == ["2nd"]
    assert missing_names("What if it is 3rd in the list?", ["Keyword rank: 3"]) == []
    assert missing_names("Is 99999999999999999999 enough?", ["ninety"]) == ["99999999999999999999"]


def test_everyday_words_typed_plainly_are_not_names():
    # "ok", "hey" in a Chinese question and a shouted "OK" are how people talk; a capitalised
    # word mid-sentence may still name a product ("Windows").
    assert named_terms("ok 那 Docent 的上限是多少？") == ["Docent"]
    assert named_terms("hey，pgvector 支持几种索引？") == ["pgvector"]
    assert named_terms("is that OK with SSE?") == ["SSE"]
    assert named_terms("Does it run on Windows?") == ["Windows"]


def test_an_acronym_the_articles_spell_out_is_mentioned():
    texts = ["Time to first token is what users feel; server-sent events reconnect by themselves."]
    assert missing_names("How is TTFT measured, and does SSE reconnect?", texts) == []
    assert missing_names("How is TTL set?", texts) == ["TTL"]


def test_a_name_set_beside_the_subject_is_not_what_is_asked():
    texts = ["Docent streams each answer token by token. The cap is 5 model calls."]
    assert missing_names("Does Docent stream like ChatGPT does?", texts) == []
    assert missing_names("跟 Pinecone 比，Docent 的上限是多少？", texts) == []
    assert missing_names("Why does Docent cap calls instead of Pinecone?", texts) == []
    # A name asked about alone, or after the subject it is compared with, is the subject.
    assert missing_names("Does Docent use Pinecone?", texts) == ["Pinecone"]
    assert missing_names("Is Pinecone like Docent?", texts) == ["Pinecone"]


def test_a_number_offered_beside_the_one_the_articles_give_is_no_missing_name():
    texts = ["Docent streams each answer token by token. The cap is 5 model calls."]
    assert missing_names("is the cap 5 or 10 model calls?", texts) == []
    assert missing_names("上限是 5 次还是 10 次？", texts) == []
    # Neither option given, or a number asked alone: the articles don't answer it.
    assert missing_names("is the cap 8 or 10 model calls?", texts) == ["8", "10"]
    assert missing_names("Is the cap 10, and are 5 calls enough?", texts) == ["10"]


def test_a_greeting_opening_a_chinese_question_is_not_a_name():
    # Capitalised where the question starts, an everyday word or an interjection is how the
    # reader opens; a product named there ("Windows") is still a name.
    assert named_terms("Hi，请问 Docent 的上限是多少？") == ["Docent"]
    assert named_terms("Hello，btw pgvector 是什么？") == ["pgvector"]
    assert named_terms("Windows 上能跑吗？") == ["Windows"]


def test_a_lower_case_acronym_the_articles_spell_out_is_mentioned():
    texts = ["Time to first token is what users feel; reciprocal rank fusion merges lists."]
    assert missing_names("ttft 指什么？rrf 又是什么？", texts) == []
    # An English word is not read as an acronym ("bug"), nor letters the text does not spell.
    assert missing_names("bug 在哪？tfr 呢？", texts) == ["bug", "tfr"]


def test_a_question_of_hundreds_of_names_looks_each_up_once():
    # `aside` asks, for each name the articles do not mention, where every name they do
    # mention stands: 900 names in a 4,000-character question were 12.6 CPU-seconds of regex
    # searches (cubic) before each name's place was looked up once.
    from agent.llm import offline_names

    question = " ".join(f"v{i}" for i in range(900))
    said = " ".join(f"v{i}" for i in range(0, 900, 2))
    offline_names._find.cache_clear()

    missing = offline_names.missing_names(question, [said])

    assert missing[-2:] == ["v897", "v899"]  # the unsaid ones, as before
    assert "v898" not in missing
    assert offline_names._find.cache_info().misses <= 900


def test_a_plural_s_is_dropped_twice_at_most():
    # Once per call without a limit, a name of 990 trailing letters s ran out of stack (a
    # RecursionError that ended the turn).
    assert mentions("a websocket", "websockets") and mentions("a websocket", "websocketss")
    assert mentions("redis", "redis" + "s" * 3000) is False
