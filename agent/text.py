"""Text PostgreSQL and UTF-8 can hold: no NUL, no lone UTF-16 surrogate. Framework-free."""

import re
import unicodedata
from typing import Any

# Lone surrogates (unpaired halves, as a JSON `\ud800` escape decodes to) and NUL.
INVALID = re.compile("[\x00\ud800-\udfff]")
REPLACEMENT = "\ufffd"
# Unicode tag characters: invisible, yet each mirrors an ASCII character (U+E0041 is "A"),
# and a language model reads them. Hidden instructions smuggled that way ride along in a
# question a reviewer sees as harmless.
TAG_CHARACTERS = re.compile("[\U000e0000-\U000e007f]+")
# Variation selectors carry bytes the same way ("emoji smuggling": one of the 256 selectors per
# byte, in a run after an emoji or a letter), and a model told how to read them does. A
# character takes at most one, and writing uses two: text and emoji presentation (U+FE0E,
# U+FE0F). The other 254 only pick a glyph's variant (a CJK ideograph's, a math symbol's): they
# go, and a run of the two keeps its first.
_SELECTORS = re.compile("[\ufe00-\ufe0d\U000e0100-\U000e01ef]+")
_SELECTOR_RUNS = re.compile("([\ufe0e\ufe0f])[\ufe0e\ufe0f]+")
# The invisible operators (function application, invisible times, separator, plus) carry bits
# the same way ("sneaky bits": U+2062 a 0, U+2064 a 1), and a model reads them; prose has no
# use for them. Zero-width spaces, joiners, the word joiner and the BOM come one at a time in
# writing (an emoji's ZWJ, a Persian ZWNJ, a Thai word break): a run of them keeps its first.
INVISIBLE_OPERATORS = re.compile("[\u2061-\u2064]+")
_ZERO_WIDTH_RUNS = re.compile("([\u200b-\u200d\u2060\ufeff])[\u200b-\u200d\u2060\ufeff]+")
_MAY_HIDE = re.compile(
    "[\U000e0000-\U000e007f\ufe00-\ufe0f\U000e0100-\U000e01ef\u2061-\u2064]"
    "|[\u200b-\u200d\u2060\ufeff]{2}"
)
# What shows as a mark on screen: letters, digits, punctuation and symbols (emoji included).
_SHOWN = frozenset("LNPS")
# Letters that render as blank space: Hangul fillers, the halfwidth filler, the Braille blank.
BLANK_LETTERS = "\u115f\u1160\u3164\uffa0\u2800"
_BLANK = frozenset(BLANK_LETTERS)
# Controls, format characters (bidi overrides, zero-width spaces, tag characters) and code
# points no character is assigned to.
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cn"})
# Marks Unicode says to show as nothing (Default_Ignorable_Code_Point): the combining grapheme
# joiner, Khmer's two inherent vowels, Mongolian's free variation selectors, the variation
# selectors and their supplement. Their category is a mark's, so a check by category passed them.
_IGNORABLE_MARKS = (
    (0x034F, 0x034F), (0x17B4, 0x17B5), (0x180B, 0x180F), (0xFE00, 0xFE0F), (0xE0100, 0xE01EF),
)  # fmt: skip


def text_scrub(value: Any) -> Any:
    """`value` with NUL and lone surrogates replaced by U+FFFD, so it can be stored and encoded."""
    if isinstance(value, str):
        return INVALID.sub(REPLACEMENT, value) if INVALID.search(value) else value
    if isinstance(value, list):
        return [text_scrub(item) for item in value]
    if isinstance(value, tuple):
        return tuple(text_scrub(item) for item in value)
    if isinstance(value, dict):
        return {text_scrub(key): text_scrub(item) for key, item in value.items()}
    return value


def has_visible_text(text: str) -> bool:
    """True when `text` has a character that shows on screen.

    Whitespace, zero-width and format characters (U+200B, joiners, bidi marks, tag
    characters), controls and combining marks with no base show nothing: a question made
    only of them started a turn and stood as a blank row in the admin.
    """
    return any(unicodedata.category(char)[0] in _SHOWN and char not in _BLANK for char in text)


def shows_nothing(char: str) -> bool:
    """True for a character that takes no visible place in a line: a control, a format
    character, an unassigned code point, a blank letter (a Hangul filler, the Braille blank) or
    a mark Unicode says to ignore (a variation selector, the combining grapheme joiner)."""
    if unicodedata.category(char) in _HIDDEN_CATEGORIES or char in _BLANK:
        return True
    point = ord(char)
    return any(low <= point <= high for low, high in _IGNORABLE_MARKS)


def without_tags(text: str) -> str:
    """`text` without Unicode tag characters, invisible operators, nor variation selectors but
    one text or emoji presentation a character, nor zero-width runs but their first: what a
    model may read of a message or a tool's output, and what a reader is shown of an answer."""
    if not _MAY_HIDE.search(text):
        return text
    text = _SELECTORS.sub("", TAG_CHARACTERS.sub("", INVISIBLE_OPERATORS.sub("", text)))
    return _ZERO_WIDTH_RUNS.sub(r"\1", _SELECTOR_RUNS.sub(r"\1", text))


_ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff"
_PRESENTATION = "\ufe0e\ufe0f"


class ShownPieces:
    """`without_tags` over an answer streamed in pieces: a run that straddles two pieces keeps
    its first too. Piece by piece, a model that streamed one invisible character a chunk (a
    token a chunk, as real ones do) showed the reader the whole run, a bit in each."""

    def __init__(self) -> None:
        self._last = ""  # the last character shown so far

    def shown(self, piece: str) -> str:
        """What the reader is shown of `piece`, given the pieces before it."""
        text = without_tags(piece)
        for run in (_ZERO_WIDTH, _PRESENTATION):
            if self._last and self._last in run:
                text = text.lstrip(run)
        if text:
            self._last = text[-1]
        return text


def tag_text(run: str) -> str:
    """The ASCII a run of tag characters spells (the language and cancel tags left out)."""
    return "".join(chr(ord(char) - 0xE0000) for char in run if 0xE0020 <= ord(char) <= 0xE007E)
