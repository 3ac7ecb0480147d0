"""The thing itself: readers who ask to be written or handed the code, and which block it is.

offline_shape quotes the lead article's code block for "show me the SQL…". Readers also ask
"write me the nginx lines…", "give me the settings…", "给我写一个…函数", "把…的代码贴出来": a verb
of writing or handing over with a noun naming code. And which block answers is best told by
the sentence the article introduces it with ("In production, with more than one worker, use
the Redis layer from the channels_redis package:"), which names what the block is for in the
reader's words, where the code itself has identifiers.
"""

from __future__ import annotations

import re

from agent.llm.offline_text import terms

_CODE_NOUN = (
    r"(?:code|sql|snippet|query|queries|statement|config|configuration|settings?|python|"
    r"function|command|example|lines|block|schema|loop|class|handler|script)"
)
_ASKS = re.compile(
    # The verb as a request: opening the question or after "please", "can you"…; "Why write
    # a fallback loop?" asks about writing one.
    r"(?:^\W*|\b(?:please|can\s+you|could\s+you|would\s+you)\s+)"
    rf"(?:write|paste|hand|post)\s+(?:me\s+|us\s+)?.{{0,80}}\b{_CODE_NOUN}\b"
    # 写/贴/来/给 as a request takes a measure word or a complement ("写一个", "来段", "给我"):
    # the 来 of "搜不出来，是我哪里配置错了" is no request.
    # ("给我看…" asks to be shown, offline_shape's reading.)
    r"|(?:写|贴|来|给)(?:我(?!看)|一个|个|一段|段|一下|出)(?:写|贴)?.{0,24}"
    r"(?:代码|函数|配置|语句|SQL|sql|[Pp]ython|脚本)"
    r"|(?:代码|函数|配置|语句|SQL|sql).{0,4}(?:贴出来|贴一下|写出来|给我)",
    re.IGNORECASE,
)
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*\"'(])|(?<=[。！？])")
_OPENING_FENCE = re.compile(r"(?:^|\n)[ \t]*(?:```|~~~)[^\n]*\n?$")


def asks_artifact(question: str) -> bool:
    """Does the question ask to be written or handed code ("write me the nginx lines…",
    "给我写一个…函数", "把…代码贴出来")?"""
    return bool(_ASKS.search(question))


def block_lead(body: str, code: str) -> str:
    """The sentence right before the fenced block holding `code`, when it ends in a colon:
    the article's own words for what the block is. "" otherwise."""
    at = body.find(code)
    if at < 0:
        return ""
    before = _OPENING_FENCE.sub("", body[:at].rstrip(" \t\n"))
    paragraphs = [p.strip() for p in _PARAGRAPH_BREAK.split(before) if p.strip()]
    if not paragraphs or not paragraphs[-1].endswith((":", "：")):
        return ""
    # Its last sentence: the rest of the paragraph is about something before the block.
    return _SENTENCE_END.split(paragraphs[-1])[-1]


def block_weight(body: str, code: str, section: str, wanted: dict[str, float]) -> float:
    """The question's weight a code block holds: in its code and heading, and twice over in
    the sentence introducing it, the article's own words for what the block does."""
    words = terms(f"{code} {section}")
    lead = terms(block_lead(body, code))
    return sum(weight * ((term in words) + 2 * (term in lead)) for term, weight in wanted.items())


def artifact_wanted(question: str, wanted: dict[str, float], title: str) -> dict[str, float]:
    """The question's words a block must share when it was asked for by "write me…": those
    beyond the article's title. The title names what every block of the article is about, so
    sharing only its words ("streaming") shows the block is on the subject, not that it is the
    thing asked for ("Write me the nginx location block…" got the Python relay)."""
    if not asks_artifact(question):
        return wanted
    topic = terms(title)
    return {term: weight for term, weight in wanted.items() if term not in topic}
