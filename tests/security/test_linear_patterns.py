"""Patterns a visitor's message reaches run in time linear in its length (red team 38).

Each was quadratic: a 4,000-character run of digits or spaces cost 0.3-1.5 s of CPU per search,
every start of the run scanning to its end. At fifteen times that length a quadratic pattern needs
225 times as long (minutes); a linear one, milliseconds. The alarm's 20 s is a ceiling no
shared machine reaches for a linear pattern, not a speed goal.
"""

import signal
from collections.abc import Callable
from contextlib import contextmanager

import pytest

from agent.llm.offline_catalog_ask import _TAG
from agent.llm.offline_compare import comparison_parts
from blog.embeddings import question_form

LONG = 60_000


@contextmanager
def ceiling(seconds: int = 20):
    def stop(signum, frame):
        raise TimeoutError(f"still running after {seconds} s: quadratic in the input's length")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize(
    ("run", "text"),
    [
        (lambda text: _TAG.search(text), "1" * LONG + " x"),
        (lambda text: _TAG.search(text), "1." * (LONG // 2) + " x"),
        (comparison_parts, "A 和 B" + " " * LONG + "x 的区别"),
        (question_form, "why" + " " * LONG + "x"),
    ],
    ids=["tag-digits", "tag-dotted", "chinese-comparison-spaces", "question-form-spaces"],
)
def test_a_long_run_is_read_in_linear_time(run: Callable, text: str):
    with ceiling():
        run(text)


def test_the_patterns_read_what_they_read_before():
    assert _TAG.search("articles tagged node.js").group("a") == "node.js"
    assert _TAG.search("文章 postgres 标签").group("g") == "postgres"
    assert comparison_parts("HNSW 和 IVFFlat  有什么区别？") == [
        "HNSW  有什么区别？",
        "IVFFlat  有什么区别？",
    ]
    assert question_form("为什么要限制智能体的步数  ") == "为什么要限制智能体的步数？"
    assert question_form("Why cap the steps?! \u3000") == "Why cap the steps?"
    assert question_form(" ? ") == " ? "
