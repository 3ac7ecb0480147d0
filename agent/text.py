"""Text PostgreSQL and UTF-8 can hold: no NUL, no lone UTF-16 surrogate. Framework-free."""

import re
import unicodedata
from typing import Any

from blog.bidi import BIDI_EXPLICIT, BIDI_MARKS

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
# Every character Unicode says to show as nothing (Default_Ignorable_Code_Point): the above,
# the bidi marks, embeddings and isolates, the soft hyphen, the Hangul fillers, the Mongolian
# vowel separator. Two kinds taking turns are bits as well (U+200E for 0 and U+200F for 1; a
# zero-width space and a non-joiner with a selector between each, which no rule above cut):
# writing puts at most two in a row (an emoji's presentation and ZWJ, '❤️‍🔥'), so a run of
# them keeps its first two.
IGNORABLE = (
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e0fff"
)
INVISIBLE_RUN_KEEPS = 2
_INVISIBLE_RUNS = re.compile(f"([{IGNORABLE}]{{{INVISIBLE_RUN_KEEPS}}})[{IGNORABLE}]+")
_INVISIBLE_TAIL = re.compile(f"[{IGNORABLE}]+$")
_MAY_HIDE = re.compile(
    "[\U000e0000-\U000e007f\ufe00-\ufe0f\U000e0100-\U000e01ef\u2061-\u2064]"
    f"|[\u200b-\u200d\u2060\ufeff]{{2}}|[{IGNORABLE}]{{{INVISIBLE_RUN_KEEPS + 1}}}"
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


class SplitPairs:
    """Text pieces whose UTF-16 surrogate pairs may be split between two of them, joined.

    A server that slices its text as UTF-16 (JavaScript's strings) may end one chunk with an
    emoji's high half, escaped as `\\ud83d`, and start the next with its low half: scrubbed
    chunk by chunk, the reader got two U+FFFD for the emoji. A half waits for the next piece;
    one that finds no partner is still U+FFFD, as is NUL."""

    def __init__(self) -> None:
        self._high = ""  # a high half that ended the last piece

    def joined(self, piece: str) -> str:
        """`piece` with the half the last one ended with, less a half it ends with itself."""
        text, self._high = self._high + piece, ""
        if text and "\ud800" <= text[-1] <= "\udbff":
            text, self._high = text[:-1], text[-1]
        if not INVALID.search(text):
            return text
        paired = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
        return text_scrub(paired)

    def rest(self) -> str:
        """What is left at the end: U+FFFD for a half no piece completed."""
        rest, self._high = REPLACEMENT if self._high else "", ""
        return rest


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
    one text or emoji presentation a character, nor zero-width runs but their first, nor runs of
    characters that show nothing but their first two: what a model may read of a message or a
    tool's output, and what a reader is shown of an answer."""
    if not _MAY_HIDE.search(text):
        return text
    text = _SELECTORS.sub("", TAG_CHARACTERS.sub("", INVISIBLE_OPERATORS.sub("", text)))
    text = _ZERO_WIDTH_RUNS.sub(r"\1", _SELECTOR_RUNS.sub(r"\1", text))
    return _INVISIBLE_RUNS.sub(r"\1", text)


class ShownPieces:
    """`without_tags` over an answer streamed in pieces, over all the model calls of a turn: a
    run that straddles two pieces, or two calls with a tool step between, is cut as one.
    Piece by piece, a model that streamed one invisible character a chunk (a token a chunk,
    as real ones do) showed the reader the whole run, a bit in each; call by call, each call's
    text of invisible characters alone added its own."""

    def __init__(self) -> None:
        self._tail = ""  # the invisible characters that end what was shown (at most two)

    def shown(self, piece: str) -> str:
        """What the reader is shown of `piece`, given the pieces before it."""
        # The run rules keep a run's first characters, so the tail shown stays as it was.
        text = without_tags(self._tail + piece)[len(self._tail) :]
        if text:
            tail = _INVISIBLE_TAIL.search(self._tail + text)
            self._tail = tail.group() if tail else ""
        return text


def tag_text(run: str) -> str:
    """The ASCII a run of tag characters spells (the language and cancel tags left out)."""
    return "".join(chr(ord(char) - 0xE0000) for char in run if 0xE0020 <= ord(char) <= 0xE007E)


# The explicit bidi embeddings, overrides and isolates, and the invisible marks (blog.bidi).
BIDI_CONTROLS = re.compile(f"[{BIDI_MARKS}{BIDI_EXPLICIT}]")


def one_line(text: str) -> str:
    """`text` as one line: line breaks and other controls as spaces, bidi controls gone, runs of
    whitespace as one space. For an author's title where one line is expected (the system
    prompt's page line, a link's label): a line break there started a line of its own, and a
    bidi control reorders what a reviewer sees."""
    shown = "".join(
        " " if unicodedata.category(char) in ("Cc", "Zl", "Zp") else char
        for char in BIDI_CONTROLS.sub("", text)
    )
    return " ".join(shown.split())
