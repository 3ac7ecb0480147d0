"""A reader who writes Traditional Chinese gets the offline model's own sentences in Taiwan's
words (部落格, not 博客 in Traditional characters), quotes from the articles as written.

"部落格有哪些文章？" (Taiwan's word for blog, every character both scripts') was not read as a
catalogue question, and the model's declines, catalogue intros and source line said 博客.
Through the real turn runner; the same questions in Simplified keep their Simplified answers.
"""

import ast
import re
from pathlib import Path

import pytest

from agent.answered import is_decline
from agent.llm.offline_catalog_ask import catalogue_ask
from agent.llm.offline_script import reader_script
from blog.script import question_fold, to_taiwan
from tests.agent.llm.test_offline_catalog import ask, calls, cited

HAN = re.compile(r"[\u3400-\u9fff]")
REGEX = re.compile(r"[|\\^$*+\[]|\(\?|\)\?")  # a pattern's text, not a sentence
OFFLINE = sorted(Path("agent/llm").glob("offline*.py"))
NEWEST = ["chinese-full-text-search-zh", "embeddings-primer-zh", "pgvector-and-hnsw",
          "anatomy-of-the-agent-loop", "tool-driven-agents"]  # fmt: skip


def fixed_sentences() -> list[str]:
    """Every Chinese string literal the offline model's modules hold (f-strings' parts too)."""
    found = set()
    for path in OFFLINE:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        documented = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
        docstrings = {ast.get_docstring(n, clean=False) for n in ast.walk(tree)
                      if isinstance(n, documented)}  # fmt: skip
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if node.value in docstrings:
                    continue
                if HAN.search(node.value) and not REGEX.search(node.value):
                    found.add(node.value)
    return sorted(found)


def test_taiwan_s_word_for_the_blog_is_read_as_the_blog():
    assert question_fold("部落格有哪些文章？") == "博客有哪些文章？"
    # The catalogue is asked about in the folded question, as the turn reads it.
    assert catalogue_ask(question_fold("部落格有哪些文章？")) == catalogue_ask("博客有哪些文章？")
    assert catalogue_ask(question_fold("部落格有幾篇文章？")).what == "count"


@pytest.mark.asyncio
async def test_which_articles_the_blog_has_asked_in_taiwan_s_words_lists_them_in_taiwan_s():
    taiwan = await ask("部落格有哪些文章？")
    mainland = await ask("博客有哪些文章？")

    assert (
        [name for name, _ in calls(taiwan)]
        == ["list_articles"]
        == [name for name, _ in calls(mainland)]
    )
    assert cited(taiwan) == cited(mainland) == NEWEST
    lines, mainland_lines = taiwan.answer.split("\n"), mainland.answer.split("\n")
    assert len(lines) == len(mainland_lines)
    for line, mainland_line in zip(lines, mainland_lines, strict=True):
        # The articles' titles and summaries as written (Simplified): quotes, not its words.
        assert line == (mainland_line if line.startswith("- [") else to_taiwan(mainland_line))
    assert "部落格" in lines[0] and "博客" not in taiwan.answer
    assert "- [中文全文检索的难点](/articles/chinese-full-text-search-zh/)" in taiwan.answer
    assert "博客" in mainland_lines[0] and "部落格" not in mainland.answer


@pytest.mark.asyncio
async def test_how_many_articles_in_traditional_is_counted_in_taiwan_s_words():
    result = await ask("部落格有幾篇文章？")

    assert result.answer.startswith("部落格共有 5 篇文章：")
    assert (await ask("博客一共有几篇文章？")).answer.startswith("博客共有 5 篇文章：")


@pytest.mark.asyncio
async def test_a_topic_the_blog_lacks_is_declined_in_taiwan_s_words():
    result = await ask("這個網誌有關於量子電腦的文章嗎？")

    assert result.answer == "我在這個部落格裡沒有找到關於「量子電腦」的文章。"
    assert is_decline(result.answer) and cited(result) == []
    simplified = await ask("这个博客有关于量子电脑的文章吗？")
    assert simplified.answer == "我在这个博客里没有找到关于“量子电脑”的文章。"


def test_every_fixed_sentence_has_taiwan_s_words_for_a_traditional_reader():
    sentences = fixed_sentences()
    asked = [{"role": "user", "content": "部落格裡有什麼？"}]

    assert len(sentences) > 50  # the tables were found
    for sentence in sentences:
        said = reader_script(sentence, asked)
        assert said == to_taiwan(sentence), sentence
        assert "博客" not in said and "来源" not in said, sentence
        # A decline is still read as one (the turn is not counted as answered).
        assert is_decline(said) == is_decline(sentence), sentence
