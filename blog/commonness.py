"""How common a question's words are in everyday English (wordfreq's frequency lists).

A word the blog never uses says a question is off-topic only when it names a topic:
"Kubernetes", "tiktoken" or "quantization" do; "spend", "phone" or "average" do not, and
readers use such words in questions the blog does answer ("How many tokens can one session
spend in a day?"). A word's everyday frequency tells the two kinds apart. The lists ship
inside the wordfreq package (nothing is downloaded); the small English list is read once per
process, in about 0.3 s, into a few MB.
"""

from __future__ import annotations

import functools

# Zipf frequency: log10 of a word's uses per billion words ("kubernetes" 2.3, "offline" 3.7,
# "visitor" 4.0, "spend" 5.0, "day" 6.0). A word the blog never uses counts fully against
# the question at RARE or below, not at all at COMMON or above, and in proportion between.
# Chosen on the tuning halves: of the pairs that scored best there, the one that discounts
# the fewest words (docs/answer-quality.md, "Fourteenth pass").
RARE = 3.0
COMMON = 5.0


# Bounded: every word a visitor types is a key, and an unbounded cache grew with each new one.
@functools.lru_cache(maxsize=100_000)
def zipf(word: str) -> float:
    from wordfreq import zipf_frequency  # imported on first use: a web process may never search

    return zipf_frequency(word, "en", wordlist="small")


# Endings and prefixes that make a rarer word of an everyday one: the small list holds "replay"
# and "segment" but not "replaying", "segmenter" or "recomputed".
_SUFFIXES = (
    ("ing", ("", "e")), ("ed", ("", "e")), ("es", ("", "e")), ("s", ("",)), ("ers", ("", "e")),
    ("er", ("", "e")), ("ly", ("",)), ("ation", ("e", "ate")), ("ness", ("",)),
)  # fmt: skip
_PREFIXES = ("re", "un", "pre", "de", "non", "over", "under")


# A base of four letters or more: "redis" is not "dis", "cors" not "cor". A noun made with
# "-er" from a common word ("segmenter") keeps it; "docker" is no everyday "dock".
MIN_BASE = 4
AGENT_NOUN_BASE = 4.0


def everyday(word: str) -> float:
    """The zipf of `word` or of the everyday word it is made from, whichever is higher."""
    best = zipf(word)
    for base, floor in _bases(word):
        frequency = zipf(base)
        if frequency >= floor:
            best = max(best, frequency)
    return best


def _bases(word: str) -> list[tuple[str, float]]:
    """Words `word` may be made from, each with the zipf it needs to count."""
    found = []
    for suffix, endings in _SUFFIXES:
        stem = word[: -len(suffix)]
        if word.endswith(suffix) and len(stem) >= 3:
            floor = AGENT_NOUN_BASE if suffix in ("er", "ers") else 0.0
            found += [(stem + ending, floor) for ending in endings]
            if len(stem) >= 4 and stem[-1] == stem[-2]:
                found.append((stem[:-1], floor))  # "trimmed" -> "trim"
    found += [(word[len(prefix) :], 0.0) for prefix in _PREFIXES if word.startswith(prefix)]
    return [(base, floor) for base, floor in found if len(base) >= MIN_BASE]


def warm() -> None:
    """Read the word list now, so the first search after a start does not wait for it."""
    zipf("warm")


def unknown_weight(words: list[str]) -> float:
    """How much an unknown lexeme spelled as `words` counts against the question, 0-1.

    A lexeme not traced to a word of the question counts fully.
    """
    if not words:
        return 1.0
    frequency = max(zipf(word) for word in words)
    return min(1.0, max(0.0, (COMMON - frequency) / (COMMON - RARE)))


def lexeme_words(lexemes: list[str], words: list[str]) -> dict[str, list[str]]:
    """The question's words each English lexeme stems from ("polici" from "policies").

    The English stemmer keeps a word's start, turning a final "y" into "i".
    """
    found: dict[str, list[str]] = {}
    for lexeme in lexemes:
        stem = lexeme[:-1] if lexeme.endswith("i") else lexeme
        spelled = [word for word in words if word.startswith(stem)]
        if spelled:
            found[lexeme] = spelled
    return found
