"""The offline planner's own replies when it has nothing to quote, or quotes as written.

"Nothing found" and "the search failed" are different facts: a failed search found nothing
*yet*, and saying the blog has nothing would be untrue. An earlier turn answered with any of
these found nothing, so a follow-up does not lean on it (offline_turn, offline_follow_up).
"""

from __future__ import annotations

import re

from agent.llm.offline_foreign import FOREIGN_DECLINE
from blog.script import simplified_chars, to_taiwan

# The typographic apostrophe, as in the panel's own strings. agent.answered reads "’" as "'",
# so a turn stored with "couldn't" still counts as a decline.
DONT_KNOW = {
    "en": "I couldn’t find anything about that in this blog’s articles.",
    "zh": "我在这个博客的文章里没有找到相关内容。",
}
# A search that failed (timed out, raised) found nothing *yet*: saying "the blog has nothing on
# that" would be untrue, and on a first run, while the demo articles index, it is common.
SEARCH_FAILED = {
    "en": "The search didn’t finish this time, so I can’t say whether the blog covers that. "
    "Please ask again in a moment.",
    "zh": "这次检索没有完成，所以我还说不准博客里是否有相关内容。请稍后再问一次。",
}
# A search refused because the visitor's address used its search allowance (the tool's error
# starts LIMITED_SEARCH): asked again at once it is refused again, and anyone behind the same
# address can spend that allowance, so the reader is told why and how long.
LIMITED_SEARCH = "Error: too many searches"  # agent/tools/search_knowledge_base.py
SEARCH_LIMITED = {
    "en": "Too many searches came from your connection in the last minute, so I couldn’t "
    "search the blog this time. Please wait a minute, then ask again.",
    "zh": "过去一分钟里从你的网络连接发出的检索太多，所以这次没能检索博客。请等一分钟再问。",
}
# "and in Chinese?" answered from an article in the other language: quotes are not translated.
AS_WRITTEN = {
    "en": "I can only quote this blog’s articles as they are written, not translate them; "
    "this one is written in Chinese:",
    "zh": "我只能引用这个博客的文章原文，没法翻译；这篇文章是用英文写的：",
}
_FOUND_NOTHING = {
    *DONT_KNOW.values(),
    *SEARCH_FAILED.values(),
    *SEARCH_LIMITED.values(),
    *FOREIGN_DECLINE.values(),
}
# As a Traditional reader was told them (Taiwan's words: offline_script), read back from the
# history character by character (offline_turn): 部落格 stays 部落格.
_FOUND_NOTHING |= {simplified_chars(to_taiwan(text)) for text in _FOUND_NOTHING}
# What a declined turn ends with (agent.suggestions): the articles offered instead, kept in the
# conversation's history. Read back from it, it is no part of the decline.
OFFER_LEAD = {
    "en": "Articles you could ask about instead: {links}.",
    "zh": "可以改问这几篇文章：{links}。",
}
_OFFER = re.compile(
    r"(?:\n\s*\n|^)\s*(?:"
    + "|".join(re.escape(lead.split("{")[0]) for lead in OFFER_LEAD.values())
    + r")(?P<links>[^\n]*)\s*$"
)
_OFFERED_LINK = re.compile(r"\[(?P<title>[^\]\n]*)\]\((?P<url>/articles/[^)\s]+)\)")


def without_offer(answer: str) -> str:
    """The answer without the articles a decline offered instead (agent.suggestions)."""
    return _OFFER.sub("", answer).strip()


def found_nothing(answer: str) -> bool:
    """True when an earlier answer said the blog has nothing (or could not search), whether or
    not it went on to offer articles instead: "HNSW index" after a declined "sourdough?" that
    offered three articles is a new question, not a follow-up of the declined one."""
    return without_offer(answer) in _FOUND_NOTHING


def offered_articles(answer: str) -> list[dict]:
    """The articles a decline offered instead, in order, as {title, url}; [] for any other
    answer."""
    match = _OFFER.search(answer)
    if match is None:
        return []
    return [m.groupdict() for m in _OFFERED_LINK.finditer(match.group("links"))]


def search_failed(output: object, lang: str) -> str:
    """What a failed search `output` (the tool's error text) lets the model say."""
    limited = isinstance(output, str) and output.startswith(LIMITED_SEARCH)
    return (SEARCH_LIMITED if limited else SEARCH_FAILED)[lang]
