"""A reply to a decline's offer: "the first one?" picks an article the decline offered.

A declined turn ends with three articles offered instead (agent.suggestions), and that text
stays in the history. "the second?", "第一篇呢？" right after it asks about one of them: the
reader points at a link, as "the first one" points at a list item. The article is found by
its title, read, and summarised (its summary and section leads, offline_render). Anything
else after a decline is a question of its own: the offered links are never its sources.
"""

from __future__ import annotations

import re

from agent.llm.base import ToolCall
from agent.llm.offline_hits import _hit_list
from agent.llm.offline_render import compose_summary
from agent.llm.offline_replies import DONT_KNOW, offered_articles
from agent.llm.offline_text import terms
from agent.llm.offline_tools import DETAIL, SEARCH
from agent.llm.offline_turn import _Turn

_ORDINALS = {
    "first": 0, "1st": 0, "second": 1, "2nd": 1, "third": 2, "3rd": 2, "last": -1,
    "一": 0, "1": 0, "二": 1, "2": 1, "三": 2, "3": 2, "最后": -1,
}  # fmt: skip
_PICK_EN = re.compile(
    r"\b(?:the\s+)?(first|1st|second|2nd|third|3rd|last)(?:\s+(?:one|article|post|link))?\b",
    re.IGNORECASE,
)
_PICK_ZH = re.compile(r"第\s*([一二三123])\s*[篇个条项]?|(最后)\s*(?:一)?\s*[篇个条项]")
# What a pick may say around the ordinal: "tell me about", "what about", "ok", "please".
_AROUND = frozenset(
    "tell me more about what how and ok okay sure yes please then the one article post link "
    "讲讲 说说 介绍 介绍一下 那 呢 吧 看看 好 好的 那就 关于 一下 文章".split()
)
MAX_OWN_TERMS = 1  # words besides the ordinal and the framing: more ask a question of their own


def offered_pick(turn: _Turn) -> dict | None:
    """The offered article ({title, url}) the question picks, or None."""
    offered = offered_articles(turn.previous_answer)
    if not offered or not turn.earlier:
        return None
    match = _PICK_EN.search(turn.question) or _PICK_ZH.search(turn.question)
    if match is None:
        return None
    rest = turn.question[: match.start()] + " " + turn.question[match.end() :]
    own = {t for t in terms(rest) if t not in _AROUND_TERMS}
    if len(own) > MAX_OWN_TERMS:
        return None  # "the first step of HNSW's build?" asks a question of its own
    index = _ORDINALS[next(g for g in match.groups() if g).lower()]
    return offered[index] if -len(offered) <= index < len(offered) else None


_AROUND_TERMS = frozenset(t for word in _AROUND for t in terms(word))


def offered_plan(turn: _Turn, available: set[str]) -> tuple[list[ToolCall], str] | None:
    """Search for the picked article's title, read it, summarise it; None when the question
    picks no offered article."""
    picked = offered_pick(turn)
    if picked is None or not {SEARCH, DETAIL} <= available:
        return None
    details = [out for name, out in turn.results if name == DETAIL]
    article = next(
        (d for d in details if isinstance(d, dict) and d.get("url") == picked["url"]), None
    )
    if article is not None:
        return [], compose_summary(article, turn.lang)
    if details:
        return [], DONT_KNOW[turn.lang]  # read, and not the one offered: unpublished since
    searched = [out for name, out in turn.results if name == SEARCH]
    if not searched:
        return [turn.call(SEARCH, {"query": picked["title"], "limit": 5})], ""
    found = next((h for h in _hit_list(searched[-1]) if h.get("url") == picked["url"]), None)
    if found is None:
        return [], DONT_KNOW[turn.lang]
    return [turn.call(DETAIL, {"article_id": found["article_id"]})], ""
