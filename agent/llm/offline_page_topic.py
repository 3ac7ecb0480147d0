"""A topic probe about the page on screen: "Does it cover Redis?", "这篇文章提到 Redis 了吗？".

On an article page, "does it mention X?" asks whether that article names X, as "do you have
anything on X?" asks it of the blog (offline_topic). Searched as a question, its asking verb
was a topic word: "Does it cover Redis?" on the rate-limits page quoted "…unless the budgets
above still cover it", and "Does it cover sliding windows?" was declined, though the page
names both. The page is read, and the sentences naming the term are quoted; a name the page
never writes is said to be missing from it, and the blog is searched for an article that
names it.
"""

from __future__ import annotations

import re

from agent.llm.base import ToolCall
from agent.llm.offline_hits import _failed
from agent.llm.offline_page import PAGE_MISSING
from agent.llm.offline_render import LANGUAGE_NAMES, _title
from agent.llm.offline_replies import search_failed
from agent.llm.offline_text import article_text, inert, language
from agent.llm.offline_tools import DETAIL, SEARCH
from agent.llm.offline_topic import (
    NOT_NAMED,
    TOPIC_READ,
    Topic,
    _term,
    compose_topic,
    names_topic,
    topic_of,
)
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
# Said first, and not as a decline: the answer is the other article's (agent.answered).
ELSEWHERE = {
    "en": "“{name}” is not on this page, but another article of this blog names it:",
    "zh": "这篇文章里没有“{name}”，博客的另一篇文章写到了它：",
}
# The same, when that article is in the other language: the reader is told before its text.
ELSEWHERE_WRITTEN = {
    "en": "“{name}” is not on this page, but the {written} article “{title}” names it, in its "
    "own words:",
    "zh": "这篇文章里没有“{name}”，{written}文章《{title}》写到了它（原文）：",
}


def page_topic_term(question: str) -> str:
    """The term a question asks the page about ("Redis" of "Does it cover Redis?"), or ""."""
    text = " ".join(question.split()).rstrip("?？.。!！ ")
    for frame in _FRAMES:
        if (match := frame.search(text)) and (term := _term(match.group("x"))):
            return term
    return ""


def page_topic_plan(turn: _Turn, available: set[str]) -> tuple[list[ToolCall], str] | None:
    """Read the page and quote its sentences naming the term; when it names none, search the
    blog for the term and quote the first other article naming it. None for any other message.
    """
    if turn.page is None or turn.earlier or DETAIL not in available:
        return None
    term = page_topic_term(turn.question)
    if not term:
        return None
    details = [out for name, out in turn.results if name == DETAIL]
    if not details:
        return [turn.call(DETAIL, {"article_id": turn.page})], ""
    page = _article(details[0])
    if page is None:
        return None
    topic = topic_of(term)
    answer = compose_topic(topic, [page], turn.lang)
    if answer and answer != NOT_NAMED[turn.lang].format(name=inert(term)):
        return [], answer
    if names_topic(article_text(page), topic):
        return None  # named only in its code, which is not quoted: the usual answer
    return _elsewhere(turn, topic, details, available)


def _elsewhere(
    turn: _Turn, topic: Topic, details: list, available: set[str]
) -> tuple[list[ToolCall], str]:
    """The page does not name the term: what another article says of it, or that none does.
    "Does it cover reciprocal rank fusion?" on the rate-limits page was declined as if the
    blog had nothing on it, though an article is titled after it."""
    missing = NOT_ON_PAGE[turn.lang].format(name=inert(topic.term))
    searched = [out for name, out in turn.results if name == SEARCH]
    if not searched:
        if SEARCH not in available:
            return [], missing
        return [turn.call(SEARCH, {"query": topic.term, "limit": TOPIC_READ})], ""
    if _failed(searched[0]):  # it found nothing yet: "nor anywhere else" would be untrue
        return [], _joined(missing, search_failed(searched[0], turn.lang), turn.lang)
    hits = searched[0] if isinstance(searched[0], list) else []
    others = [h for h in hits if isinstance(h, dict) and h.get("article_id") != turn.page]
    if not others:
        return [], PAGE_MISSING[turn.lang].format(name=inert(topic.term))
    if len(details) == 1:
        return [turn.call(DETAIL, {"article_id": others[0]["article_id"]})], ""
    other = _article(details[1])
    quoted = compose_topic(topic, [other], turn.lang) if other else ""
    if not quoted or quoted == NOT_NAMED[turn.lang].format(name=inert(topic.term)):
        return [], PAGE_MISSING[turn.lang].format(name=inert(topic.term))
    return [], f"{_elsewhere_label(topic.term, other, turn.lang)}\n\n{quoted}"


def _elsewhere_label(term: str, other: dict, lang: str) -> str:
    """The lead-in of another article's sentences naming `term`, with its language when it is
    written in the other one ("…the Chinese article “…” names it")."""
    if other.get("language") == lang:
        return ELSEWHERE[lang].format(name=inert(term))
    written = LANGUAGE_NAMES[lang].get(str(other.get("language") or ""), "")
    return ELSEWHERE_WRITTEN[lang].format(name=inert(term), written=written, title=_title(other))


def _joined(first: str, second: str, lang: str) -> str:
    """Two sentences run together as the language writes them (no space after a 。)."""
    return f"{first}{second}" if lang == "zh" else f"{first} {second}"


def _article(out: object) -> dict | None:
    """A read article with its language, or None for a failed read."""
    if not isinstance(out, dict) or not out.get("body"):
        return None
    return {**out, "language": language(str(out["body"]))}
