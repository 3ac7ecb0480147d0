"""The offline model's answer in the reader's script: Traditional when the question was, or
when a reader of the Traditional site asked in words both scripts share.

The question is matched in Simplified (blog.script.question_fold); the answer's own words (its
declines, its frame, "来源：") are then put in the script the reader wrote, with Taiwan's words
(博客 -> 部落格) for a Traditional reader, while quotes stay
as the articles wrote them: a quote is text whose every run of Chinese characters the
turn's tool results contain.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from agent.llm.offline_turn import _reader as reader_language
from agent.prompts import STEP_LIMIT_NUDGE
from blog.script import is_simplified, is_traditional, taiwan_wording, to_taiwan

# A Markdown link (its label is an article's title, kept as written), or a stretch of text up to
# and including a sentence's or a clause's end.
_PIECE = re.compile(r"\[[^\]\n]*\]\([^)\s]*\)|[^\[。！？!?：\n]+[。！？!?：\n]*|\[")
_EMPHASIS = re.compile(r"[*_`]")
_HAN_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


def reader_script(answer: str, messages: list[dict]) -> str:
    """`answer` with its own words in Traditional when the visitor asked in Traditional."""
    if not answer or not _traditional_wanted(messages):
        return answer
    corpus = "\n".join(_strings(m.get("content") for m in messages if m.get("role") == "tool"))
    corpus = _EMPHASIS.sub("", corpus)  # "384 **维**向量" is quoted as "384 维向量"
    return "".join(_piece(piece, corpus) for piece in _PIECE.findall(answer))


def _traditional_wanted(messages: list[dict]) -> bool:
    # "台北今天天氣如何？" has as many Simplified-only characters (台, for 臺) as Traditional
    # ones (氣): declined in Simplified to a reader of the Traditional site.
    question = _question(messages)
    if is_traditional(question):
        return True
    if is_simplified(question):
        return False
    # "部落格有哪些文章？": every character is both scripts', the word is Taiwan's.
    return reader_language(messages) == "zh-hant" or taiwan_wording(question)


def _question(messages: list[dict]) -> str:
    asked = [
        str(m.get("content") or "")
        for m in messages
        if m.get("role") == "user" and m.get("content") != STEP_LIMIT_NUDGE
    ]
    return asked[-1] if asked else ""


def _piece(piece: str, corpus: str) -> str:
    if piece.startswith("[") and piece.endswith(")"):
        return piece  # a link to an article: its title as written
    runs = _HAN_RUN.findall(piece)
    quoted = bool(runs) and all(run in corpus for run in runs)
    # The model's own words in Taiwan's (部落格, 搜尋), as the Traditional site's catalogues are.
    return piece if quoted or not runs else to_taiwan(piece)


def _strings(contents: Iterable[object]) -> list[str]:
    """Every string inside the tool results (JSON, as the model reads them, or plain text)."""
    found: list[str] = []
    stack = [_parsed(content) for content in contents]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return found


def _parsed(content: object) -> object:
    if not isinstance(content, str):
        return content
    try:
        return json.loads(content)
    except ValueError:
        return content
