"""A topic probe about the page on screen: "Does it cover Redis?", "这篇文章提到 Redis 了吗？".

On an article page, "does it mention X?" asks whether that article names X, as "do you have
anything on X?" asks it of the blog (offline_topic). Searched as a question, its asking verb
was a topic word: "Does it cover Redis?" on the rate-limits page quoted "…unless the budgets
above still cover it", and "Does it cover sliding windows?" was declined, though the page
names both. The page is read, and the sentences naming the term are quoted; a name the page
never writes is said to be missing from it.
"""

from __future__ import annotations

import re

from agent.llm.base import ToolCall
from agent.llm.offline_text import inert, language
from agent.llm.offline_tools import DETAIL
from agent.llm.offline_topic import NOT_NAMED, _term, compose_topic, topic_of
from agent.llm.offline_turn import _Turn

# The page as the subject of a verb of covering: "it", "this article", "the post", "here".
_PAGE = r"(?:it|this(?: (?:article|post|page|piece|section))?|the (?:article|post|page|author))"
_COVER = (
    r"(?:cover|mention|discuss|touch on|go into|talk about|say anything about|"
    r"say something about|say much about|explain|get into)"
)
_HERE = r"(?:here|in (?:this|the) (?:article|post|page))"
_ENGLISH = [
    rf"^(?:do|does|did) {_PAGE} (?:also |ever |even )?{_COVER} (?P<x>.+?)(?: at all| {_HERE})?$",
    rf"^(?:is|are) (?P<x>.+?) (?:covered|mentioned|discussed|explained) {_HERE}(?: at all)?$",
    rf"^(?:is|are) there (?:anything|something) (?:about|on) (?P<x>.+?) {_HERE}$",
]
_ZH_PAGE = r"^(?:这篇文章|这篇|本文|文章|文中|这里)(?:里|中)?"
_ZH_VERB = r"(?:提到|提及|讲到?|写到?|涉及|介绍|讨论|说到)(?:过|了)?"
_CHINESE = [
    rf"{_ZH_PAGE}有?{_ZH_VERB}(?P<x>.+?)(?:了)?(?:吗|么|没有)$",
    rf"{_ZH_PAGE}有没有{_ZH_VERB}(?P<x>.+?)(?:了)?(?:吗|么)?$",
]
_FRAMES = [re.compile(p, re.IGNORECASE) for p in _ENGLISH + _CHINESE]

NOT_ON_PAGE = {
    "en": "The article on this page doesn’t mention “{name}”.",
    "zh": "这篇文章没有提到“{name}”。",
}


def page_topic_term(question: str) -> str:
    """The term a question asks the page about ("Redis" of "Does it cover Redis?"), or ""."""
    text = " ".join(question.split()).rstrip("?？.。!！ ")
    for frame in _FRAMES:
        if (match := frame.search(text)) and (term := _term(match.group("x"))):
            return term
    return ""


def page_topic_plan(turn: _Turn, available: set[str]) -> tuple[list[ToolCall], str] | None:
    """Read the page, then quote its sentences naming the term; None for any other message,
    and for a plain phrase the page does not write (the usual answer weighs its words)."""
    if turn.page is None or turn.earlier or DETAIL not in available:
        return None
    term = page_topic_term(turn.question)
    if not term:
        return None
    details = [out for name, out in turn.results if name == DETAIL]
    if not details:
        return [turn.call(DETAIL, {"article_id": turn.page})], ""
    page = details[-1]
    if not isinstance(page, dict) or not page.get("body"):
        return None
    source = {**page, "language": language(str(page["body"]))}
    answer = compose_topic(topic_of(term), [source], turn.lang)
    if answer == NOT_NAMED[turn.lang].format(name=inert(term)):
        return [], NOT_ON_PAGE[turn.lang].format(name=inert(term))  # the page, not the blog
    return ([], answer) if answer else None
