"""How long an article takes to read, counted once when it is saved (a card costs nothing).

Rates: Brysbaert (2019), "How many words do we read per minute? A review and meta-analysis of
reading rate", Journal of Memory and Language 109: silent reading of non-fiction averages
238 words a minute in English and 255 characters a minute in Chinese. English is counted in
words; a Chinese text in its Han characters, since its words are not spaced. An article that
mixes them (Chinese quoting pgvector, HNSW) is the sum of both.
"""

import math
import re

WORDS_PER_MINUTE = 238
HAN_PER_MINUTE = 255

_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
# A word: letters or digits, joined by an apostrophe or hyphen ("don't", "full-text").
_WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")
# Markdown's link targets and image addresses are not read: "[pgvector](https://…)" is a word.
# A target stops at a space or a parenthesis: `[^)]*` ran from every "](" to the body's end when
# none closed, so a megabyte of "[x](" took 305 s to count (quadratic; 40 kB took 0.7 s).
_LINK_TARGET = re.compile(r"\]\([^()\s]*\)")
# The column is a PositiveSmallIntegerField: a body longer than 32,767 minutes reads as that.
MAX_MINUTES = 32_767


def reading_minutes(text: str) -> int:
    """Whole minutes, rounded up, at least 1: "1 min read" for a note of three lines."""
    text = _LINK_TARGET.sub("]", text)
    han = len(_HAN.findall(text))
    words = len(_WORD.findall(_HAN.sub(" ", text)))
    return min(MAX_MINUTES, max(1, math.ceil(words / WORDS_PER_MINUTE + han / HAN_PER_MINUTE)))
