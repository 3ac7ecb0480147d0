"""Rare words a question asks about, and whether the blog (or a page) ever uses them.

A name is not the only word that says what a question is about. "How do I count tokens with
tiktoken?", "does pgvector support halfvec?", "which reranker after RRF?": the search finds the
articles on budgets, pgvector or fusion, and their sentences share the question's other words,
but the word the question turns on is one the blog never writes. A word rare in everyday
English (below Zipf 3.0 in every form: "replaying" is "replay", 3.8) that the blog never uses
in any form, nor as a one-edit slip of one it does ("seperate", "eror"), declines the question.
Everyday words the blog happens not to use ("spend", "phone") do not: readers ask about the
blog's subjects in their own words.

The search finds them (`SearchHit.unknown_words`), so both models see what the blog lacks. A
rare word's check stems a few hundred one-edit variants: 0.3 ms with PyStemmer's C build,
22 ms with the pure-Python stemmer it replaces when installed.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Mapping, Sequence

from blog.commonness import RARE, everyday
from blog.spelling import MAX_LENGTH, MIN_CHUNKS, MIN_LENGTH, stem, variants

# A word, hyphenated or not, with what follows it: an identifier ("ef_search", "asyncio.gather",
# "pg_trgm") or a word with digits is a name (offline_names), checked against the articles read;
# "shouldn't" is a contraction.
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*[A-Za-z0-9](?:['’][a-z]{1,2}\b)?")
_PLAIN = re.compile(r"[A-Za-z]+(?:-[A-Za-z]+)*")
MAX_WORDS = 8  # rare words looked at per question
MIN_PREFIX = 5  # a shorter start ("cach", "rera") begins too many words
# A word shorter than spelling.MIN_LENGTH is taken as written, as blog.spelling does: one edit
# from "jwt" is "jet", from "gcp" "gap"; a short unknown word is far more often a name.
MAX_SLIPS = 4  # words whose slips are sought per question: a few hundred stems each


def rare_words(question: str) -> list[str]:
    """The question's words rarer than Zipf 3.0 in everyday English in all their forms, each
    once (whatever its case), possessives read as the word ("tiktoken's"), at most MAX_WORDS."""
    found: dict[str, str] = {}
    for word in _WORD.findall(question):
        word = re.sub(r"['’]s$", "", word)
        if not _PLAIN.fullmatch(word) or len(word) > MAX_LENGTH or word.lower() in found:
            continue
        parts = [part for part in word.lower().split("-") if part]
        if any(everyday(part) < RARE for part in parts):
            found[word.lower()] = word
    return list(found.values())[:MAX_WORDS]


def unused_words(question: str, used: Callable[[str], bool]) -> list[str]:
    """The question's rare words that `used` says the text never uses, as asked.

    A hyphenated word is used when each of its rare parts is ("re-embed", "pgvector-python").
    """
    return [
        word
        for word in rare_words(question)
        if not all(used(part) for part in word.lower().split("-") if part and everyday(part) < RARE)
    ]


def in_vocabulary(
    frequency: Mapping[str, int], lexicon: Sequence[str], translated: frozenset[str] = frozenset()
) -> Callable[[str], bool]:
    """`used` for the blog: the word's lexeme is in its index (`frequency`; `lexicon` is its
    keys, sorted) or `translated` (the glossary's: "spool" is written 暂存 in a Chinese
    article), or is one edit from one that is in at least MIN_CHUNKS chunks (a slip:
    "seperate", "eror")."""

    sought = [0]

    def used(word: str) -> bool:
        if stem(word) in frequency or stem(word) in translated:
            return True
        if len(word) >= MIN_LENGTH and sought[0] < MAX_SLIPS:
            sought[0] += 1
            if any(frequency.get(stem(variant), 0) >= MIN_CHUNKS for variant in variants(word)):
                return True
        # The start of a longer name ("InMemory" of "InMemoryChannelLayer"), as `mentions`
        # finds a name in an article's text.
        if len(word) < MIN_PREFIX:
            return False
        at = bisect.bisect_left(lexicon, word)
        return at < len(lexicon) and lexicon[at].startswith(word)

    return used
