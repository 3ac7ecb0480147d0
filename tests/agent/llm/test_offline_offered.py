"""After a decline that offered articles instead: picking one of them, and asking anew."""

import pytest

from agent.llm.offline import DONT_KNOW
from agent.llm.offline_follow_up import cited_before, quoted_before
from agent.llm.offline_replies import OFFER_LEAD as LEAD
from agent.llm.offline_replies import found_nothing, offered_articles, without_offer
from tests.agent.llm.test_offline import (
    INDEX_ARTICLE,
    LIMITS_ARTICLE,
    ZH_ARTICLE,
    ask,
    calls,
    link,
    relevant_hit,
)

OTHER = {"title": "Hybrid search", "url": "/articles/hybrid-search/"}


def declined(lang: str, offered: list[dict]) -> str:
    """A decline as the loop keeps it in the history: the offer appended (agent.loop)."""
    joiner = "、" if lang == "zh" else ", "
    return f"{DONT_KNOW[lang]}\n\n" + LEAD[lang].format(links=joiner.join(map(link, offered)))


def history(lang: str, offered: list[dict]) -> list[dict]:
    question = "怎么烤酸面包？" if lang == "zh" else "How do I bake sourdough bread?"
    return [
        {"role": "user", "content": question},
        {"role": "assistant", "content": declined(lang, offered)},
    ]


def test_an_offer_is_read_back_from_a_decline_and_is_no_part_of_it():
    for lang in ("en", "zh"):
        answer = declined(lang, [LIMITS_ARTICLE, OTHER])
        assert without_offer(answer) == DONT_KNOW[lang]
        assert found_nothing(answer)
        assert offered_articles(answer) == [
            {"title": LIMITS_ARTICLE["title"], "url": LIMITS_ARTICLE["url"]},
            OTHER,
        ]
    # An offered link is no source the decline quoted: a follow-up does not lean on its article.
    offered_hits = [relevant_hit(OTHER | {"article_id": 77, "body": "RRF."}, 0.9)]
    answer = declined("en", [LIMITS_ARTICLE, OTHER])
    assert not cited_before(answer, offered_hits[0])
    assert quoted_before(answer, [relevant_hit(ZH_ARTICLE, 0.9), *offered_hits]) is None
    answered = f"Flour and water.\n\nSource: {link(LIMITS_ARTICLE)}"
    assert not found_nothing(answered) and offered_articles(answered) == []


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("lang", "question", "offered", "read"),
    [("en", "the first one?", [LIMITS_ARTICLE, OTHER], LIMITS_ARTICLE),
     ("en", "ok, tell me about the second article", [OTHER, LIMITS_ARTICLE], LIMITS_ARTICLE),
     ("en", "and the last one?", [OTHER, OTHER, ZH_ARTICLE], ZH_ARTICLE),
     ("zh", "第一篇呢？", [ZH_ARTICLE, OTHER], ZH_ARTICLE),
     ("zh", "那就第二篇吧", [OTHER, LIMITS_ARTICLE], LIMITS_ARTICLE)],
)  # fmt: skip
async def test_picking_an_offered_article_summarises_it(lang, question, offered, read):
    # "the first one?" right after the offer searched "How do I bake sourdough bread? the first
    # one?" and declined again: the reader pointed at a link the answer had just shown.
    hits = [relevant_hit(OTHER | {"article_id": 77, "body": "RRF."}, 0.9), relevant_hit(read, 0.9)]

    result, _ = await ask(question, hits, history=history(lang, offered))

    assert calls(result) == [
        ("search_knowledge_base", {"query": read["title"], "limit": 5}),
        ("get_article_detail", {"article_id": read["article_id"]}),
    ]
    assert [c["article_id"] for c in result.citations] == [read["article_id"]]
    assert result.answered


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "question",
    [
        "What is the capital of France?",
        "what is the first step of a sourdough starter?",  # an ordinal in a question of its own
    ],
)
async def test_a_new_question_after_the_offer_is_not_answered_from_the_offered_links(question):
    offered = [LIMITS_ARTICLE, INDEX_ARTICLE]

    result, _ = await ask(question, [], history=history("en", offered))

    [(name, arguments)] = calls(result)  # one search, for the question: no title of an offer
    assert name == "search_knowledge_base" and arguments["query"].endswith(question)
    assert result.answer == DONT_KNOW["en"] and not result.citations


@pytest.mark.asyncio
async def test_an_ordinal_after_an_answer_is_no_pick_of_an_offer():
    # "the first one?" after an answer that offered nothing leans on the answer as before.
    before = [
        {"role": "user", "content": "Which pgvector index types are there?"},
        {"role": "assistant", "content": f"HNSW and IVFFlat.\n\nSource: {link(INDEX_ARTICLE)}"},
    ]

    result, _ = await ask("the first one?", [relevant_hit(LIMITS_ARTICLE, 0.8)], history=before)

    query = calls(result)[0][1]["query"]
    assert query == "Which pgvector index types are there? the first one?"


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("question", "query"),
    [("HNSW index", "HNSW index"),
     ("HNSW 索引", "HNSW 索引"),
     # A word that leans back still leans on the declined question.
     ("And HNSW?", "How do I bake sourdough bread? And HNSW?")],
)  # fmt: skip
async def test_a_short_question_after_a_decline_with_an_offer_searches_on_its_own(question, query):
    # The decline is no longer the bare sentence: with its offer kept in the history, "HNSW
    # index" read as a follow-up of the declined question and was searched glued to it.
    result, _ = await ask(question, [], history=history("en", [LIMITS_ARTICLE, OTHER]))

    assert calls(result)[0][1]["query"] == query


@pytest.mark.asyncio
async def test_a_follow_up_after_a_decline_with_an_offer_leans_on_the_question_answered_before():
    before = [
        {"role": "user", "content": "Which pgvector index types are there?"},
        {"role": "assistant", "content": f"HNSW and IVFFlat.\n\nSource: {link(INDEX_ARTICLE)}"},
        *history("en", [LIMITS_ARTICLE, OTHER]),
    ]

    result, _ = await ask("And which of those builds faster?", [], history=before)

    query = calls(result)[0][1]["query"]
    assert query == "Which pgvector index types are there? And which of those builds faster?"


def _after_decline(lang: str) -> list[dict]:
    question = "智能体怎么防止失控循环？" if lang == "zh" else "How do agents stop runaway loops?"
    return [
        {"role": "user", "content": question},
        {"role": "assistant", "content": declined(lang, [OTHER])},
    ]


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("lang", "question"), [("en", "count which calls?"), ("zh", "上限设在哪里？")]
)
async def test_a_subjectless_question_after_a_decline_falls_back_on_the_declined_one(
    lang, question
):
    # "清理工作该放在哪里？" after a declined "asyncio 任务被取消时会发生什么？": searched alone it
    # found nothing; with the question before it, the cancellation article.
    def search(query: str) -> list[dict]:
        leaning = "runaway" in query or "失控" in query
        return [relevant_hit(LIMITS_ARTICLE, 0.8)] if leaning else []

    result, _ = await ask(question, search, history=_after_decline(lang))

    queries = [arguments["query"] for name, arguments in calls(result) if "query" in arguments]
    assert queries == [question, f"{_after_decline(lang)[0]['content']} {question}"]
    assert [c["article_id"] for c in result.citations] == [LIMITS_ARTICLE["article_id"]]


@pytest.mark.asyncio
async def test_a_subjectless_question_after_a_decline_found_alone_is_answered_alone():
    def search(query: str) -> list[dict]:
        return [relevant_hit(ZH_ARTICLE if "runaway" in query else LIMITS_ARTICLE, 0.8)]

    result, _ = await ask("count which calls?", search, history=_after_decline("en"))

    assert [c["article_id"] for c in result.citations] == [LIMITS_ARTICLE["article_id"]]
