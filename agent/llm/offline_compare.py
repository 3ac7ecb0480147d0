"""The two subjects of a comparison ("X or Y for …?", "how do X and Y differ?", "X 和 Y 各有…").

A comparison asks one thing of two subjects, and the blog may treat each in an article of its
own (step limits in one, token budgets in another). Searched whole, the subject with more (or
rarer) words fills the hits and the other's article may not be read. Each subject is searched
with the rest of the question, as a two-part question's parts are (offline_parts), so each
finds its own article; the whole question must still clear the relevance bar.

Read by grammar: a conjunction joining the subjects and a word that makes the question a
comparison asked of each subject (what each has, how they differ). "Does it retry or give
up?", "X and Y in Postgres" and a choice ("X or Y for a small blog?") are left whole.
"""

from __future__ import annotations

import re

# A comparison asked of each subject: what each has, how they differ. A choice ("which is
# better, X or Y?", "should I use X or Y?", "X 还是 Y？", "哪个好") asks one verdict, which the
# article weighing both gives: searched apart, "WebSockets for a token stream" found the
# Channels article and the answer cited it beside the streaming article's verdict.
# Not "both": it is as often a pronoun or one question about two things ("…and both check the
# budget?", "handled both by the embedding model and by the keyword index?"), and split there
# the older test halves cited a wrong article twice more.
_EACH = re.compile(r"\b(each|differ\w*|compare[sd]?|comparison)\b", re.IGNORECASE)
# (?<!\s): a run of spaces is tried from its start only (from each of 3,980 spaces, 0.7 s).
_JOINERS = (
    re.compile(r"(?<!\s)\s+(?:vs\.?|versus)\s+", re.IGNORECASE),
    re.compile(r"(?<!\s)\s+or\s+", re.IGNORECASE),
    re.compile(r"(?<!\s)\s+and\s+", re.IGNORECASE),
)
# Chinese: two subjects joined by 和/跟/与, then the word asking of each ("各有", "区别").
# The subjects run back from it to the clause's start.
_ZH_COMPARES = re.compile(r"各自|各有|各是|区别|差别|差异|不同")
_ZH_AND = re.compile(r"和|跟|与")
_CLAUSE_START = re.compile(r"[，,。；;：:！!？?]")
# Where the second subject ends and the predicate both subjects share begins: "SSE 在流式输出上的
# 差异" is SSE's and WebSocket's, "IVFFlat 有什么区别" is HNSW's too.
# The spaces before it are taken by hand (_predicate_start): a leading `\s*` made a search
# over a long run of spaces quadratic (0.6 s at 4,000; red team 38).
_ZH_PREDICATE = re.compile(r"有什么|有哪些|有何|(?<![存现实正])在|之间")


def _predicate_start(text: str) -> int:
    """Where the shared predicate starts in `text`, with the spaces before it; its end if none."""
    shared = _ZH_PREDICATE.search(text)
    if not shared:
        return len(text)
    start = shared.start()
    while start and text[start - 1].isspace():
        start -= 1
    return start


# "各自" ("each") asks the predicate of both subjects; asked of one, it is a word the part's
# search weighs for nothing: "HNSW 向量索引，各自要付出什么代价？" put the pgvector article first
# under the bar (0.35), "HNSW 向量索引，要付出什么代价？" above it (0.53).
_ZH_EACH = re.compile(r"各自|各(?=[有是])")


def comparison_parts(question: str) -> list[str]:
    """The question asked of each subject, or [] when it compares nothing."""
    text = question.strip()
    if text.isascii():
        return _english(text)
    return _chinese(text)


def _english(text: str) -> list[str]:
    if not _EACH.search(text):
        return []
    for joiner in _JOINERS:
        pieces = joiner.split(text, maxsplit=1)
        if len(pieces) == 2:
            return [piece.strip(" ,:;") for piece in pieces]
    return []


def _chinese(text: str) -> list[str]:
    marker = _ZH_COMPARES.search(text)
    if not marker:
        return []
    before = text[: marker.start()]
    starts = [0, *(m.end() for m in _CLAUSE_START.finditer(before))]
    # The subjects sit in the marker's clause, or in the one before ("X 和 Y，各有什么…").
    for start, end in ((starts[-1], len(before)), (starts[-2] if len(starts) > 1 else 0, None)):
        subjects = before[start:end]
        subjects = subjects if end is not None else subjects.rstrip("，,；;：: ")
        joiner = _ZH_AND.search(subjects)
        if joiner:
            break
    else:
        return []
    a, b = subjects[: joiner.start()].strip(), subjects[joiner.end() :]
    cut = _predicate_start(b)
    b, rest = b[:cut].strip(), b[cut:] + text[start + len(subjects) :]
    if not a or not b:
        return []
    head, rest = text[:start], _ZH_EACH.sub("", rest, count=1)
    return [f"{head}{a}{rest}", f"{head}{b}{rest}"]
