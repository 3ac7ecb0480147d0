"""A question in a language the blog is not written in: its decline says what the blog is
written in (agent/llm/offline_foreign.py), through the real loop with fake tools."""

import asyncio

import pytest

from agent.answered import is_decline, turn_answered
from agent.llm.offline import DONT_KNOW, SEARCH_FAILED, OfflineModel
from agent.llm.offline_foreign import FOREIGN_DECLINE, foreign_language
from agent.loop import Limits, run_turn
from agent.prompts import build_messages
from agent.tool import Tool
from tests.agent.llm.test_offline import LIMITS_ARTICLE, SearchIn, ask, hit, make_tools

FOREIGN = [
    "¿Qué es un índice HNSW?",
    "¿Cuál es la capital de Francia?",
    "ما هو فهرس HNSW؟",
    "Was ist ein HNSW-Index?",
    "Pourquoi limiter les étapes de l'agent ?",
    "Qual é o limite de passos?",
    "Che cosa è un indice HNSW?",
    "Wat is een HNSW-index?",
    "Что такое индекс HNSW?",
    "HNSW 인덱스란 무엇입니까?",
    # Japanese writes Chinese characters too; its kana are what tell it apart.
    "HNSWインデックスとは何ですか？",
    "検索拡張生成とは何ですか",
]
NOT_FOREIGN = [
    "What is an HNSW index?",
    "HNSW index",
    "pgvector 0.8?",
    "Was the step limit 5?",  # "was" is English as well as German
    "What does Привет mean?",  # an English question quoting another language
    "What is the α parameter?",
    "Is la or el used in the es locale?",
    "What is a café résumé?",
    "为什么要限制智能体的步数？",
    "HNSW 是什么？",
]


@pytest.mark.parametrize("question", FOREIGN)
def test_questions_in_other_languages_are_told_apart(question):
    assert foreign_language(question)


@pytest.mark.parametrize("question", NOT_FOREIGN)
def test_english_and_chinese_questions_are_not_foreign(question):
    assert not foreign_language(question)


@pytest.mark.parametrize("question", FOREIGN)
@pytest.mark.asyncio
async def test_a_foreign_question_the_search_misses_is_told_what_the_blog_is_written_in(
    question,
):
    # "¿Qué es un índice HNSW?" was told "I couldn't find anything about that in this blog's
    # articles" (a Japanese question the same in Chinese), though the blog has an HNSW article:
    # its search matches English and Chinese words.
    result, sent = await ask(question, [])
    assert result.answer == FOREIGN_DECLINE["en"]
    assert "written in English and Chinese" in result.answer
    # Still a decline: unanswered for the editors, nothing cited.
    assert is_decline(result.answer) and result.citations == []
    assert sent[-1] == {**sent[-1], "type": "done", "answered": False}


@pytest.mark.asyncio
async def test_the_decline_is_in_the_language_the_reader_reads_the_site_in():
    chinese_site, _ = await ask("¿Qué es un índice HNSW?", [], language="zh-hans")
    assert chinese_site.answer == FOREIGN_DECLINE["zh"]
    assert is_decline(chinese_site.answer)
    english_site, _ = await ask("HNSWインデックスとは何ですか？", [], language="en")
    assert english_site.answer == FOREIGN_DECLINE["en"]


@pytest.mark.parametrize(
    ("question", "lang"),
    [("Who won the 1998 World Cup?", "en"), ("博客里有关于量子计算的文章吗？", "zh")],
)
@pytest.mark.asyncio
async def test_english_and_chinese_declines_are_unchanged(question, lang):
    result, _ = await ask(question, [])
    assert result.answer == DONT_KNOW[lang]


@pytest.mark.asyncio
async def test_a_foreign_question_the_search_places_is_still_answered():
    result, _ = await ask("¿Cómo para el step limit los runaway loops?", [hit(LIMITS_ARTICLE)])
    assert "Docent caps each turn at 5 model calls" in result.answer
    assert turn_answered(status="done", answer=result.answer, citations=result.citations)


@pytest.mark.asyncio
async def test_a_foreign_question_whose_search_failed_says_the_search_failed():
    # Nothing was found *yet*: the blog's languages are not why.
    async def stuck(params: SearchIn):
        await asyncio.Event().wait()

    tools = [
        Tool("search_knowledge_base", "Search.", SearchIn, stuck, lambda out: "results"),
        *make_tools([])[1:],
    ]
    result = await run_turn(
        messages=build_messages(history=[], user_message="¿Qué es HNSW?", page=None),
        model=OfflineModel(),
        tools=tools,
        limits=Limits(tool_timeout=0.01),
        emit=_discard,
    )
    assert result.answer == SEARCH_FAILED["en"]


async def _discard(event: dict) -> None:
    pass
