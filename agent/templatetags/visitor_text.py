"""Visitor text in the admin: bidi controls, blank letters, hidden tag characters and invisible
operators shown as what they are, towers of combining marks cut short, the text isolated."""

import re
import unicodedata

from django import template
from django.utils.html import conditional_escape, format_html
from django.utils.safestring import SafeString, mark_safe

from agent.text import BIDI_CONTROLS, BLANK_LETTERS, INVISIBLE_OPERATORS, TAG_CHARACTERS, tag_text

register = template.Library()

# BIDI_CONTROLS are labelled, not left in: an override (U+202E) makes a question read
# backwards to the reviewer, and an unclosed one or a strong character can reorder the page's
# own words next to it.
# Letters that draw as blank space (Hangul fillers, the Braille blank) and the combining
# grapheme joiner: "pgvector\u3164" read as "pgvector" to a reviewer, who could not tell why
# it missed the glossary. Variation selectors stay unlabelled: emoji carry them.
BLANKS = re.compile(f"[{BLANK_LETTERS}\u034f]")
# Combining marks kept on one base character. Real writing stacks a few (Vietnamese two,
# Hebrew with cantillation or Tibetan three or four); a visitor's "a" with 3,990 acute accents
# drew a column of ink up over the admin's header and down over the other visitors' rows
# (Truncator counts none of them, so even the 90-character list cells kept them all).
MAX_MARKS = 4
MARK_CATEGORIES = frozenset({"Mn", "Me"})  # the nonspacing and enclosing marks: they stack
# Where a run of marks could be: more than MAX_MARKS characters past ASCII in a row.
_MARK_RUN_CANDIDATE = re.compile(r"[^\x00-\x7f]{" + str(MAX_MARKS + 1) + ",}")
# A tag of the escaped or sanitized HTML, its quoted attribute values whole: nh3 writes ">"
# in a value as it is. Captured, so re.split keeps the tags at the odd places.
_TAG = re.compile(r"""(<(?:[^>"']|"[^"]*"|'[^']*')*>)""")


def _control_label(match: re.Match) -> str:
    char = match.group()
    code = f"U+{ord(char):04X}"
    return format_html('<span class="dc-bidi" title="{}">{}</span>', unicodedata.name(char), code)


def _tags_label(match: re.Match) -> str:
    # Invisible on screen, read by a model as the ASCII they mirror: shown as that text, so a
    # reviewer sees what was smuggled in (the model is not sent them: agent.prompts).
    return format_html(
        '<span class="dc-bidi" title="hidden Unicode tag characters, not sent to the model">'
        "tags: {}</span>",
        tag_text(match.group()),
    )


def _operators_label(match: re.Match) -> str:
    # A run of invisible operators carries bits ("sneaky bits"): the reviewer sees how many.
    return format_html(
        '<span class="dc-bidi" title="invisible operators, not sent to the model">'
        "invisible: {}</span>",
        len(match.group()),
    )


def _marks_label(hidden: int) -> str:
    return format_html(
        '<span class="dc-bidi" title="{} more combining marks, not shown">+{}</span>',
        hidden,
        hidden,
    )


def _marks_capped(match: re.Match) -> str:
    """The run with at most MAX_MARKS combining marks per base, the rest counted in a label."""
    kept: list[str] = []
    marks = hidden = 0
    for char in match.group():
        if unicodedata.category(char) not in MARK_CATEGORIES:
            if hidden:
                kept.append(_marks_label(hidden))
            marks = hidden = 0
        elif marks >= MAX_MARKS:
            hidden += 1
            continue
        else:
            marks += 1
        kept.append(char)
    if hidden:
        kept.append(_marks_label(hidden))
    return "".join(kept)


def visitor_html(value: object) -> SafeString:
    """Return visitor text (or HTML made from it) escaped, each bidi control as a visible
    label, combining marks past MAX_MARKS on a character as a count, all in a `<bdi>` so its
    direction cannot spill onto the admin's words around it."""
    escaped = str(conditional_escape(value))
    return mark_safe(f"<bdi>{_label_text(escaped)}</bdi>")  # noqa: S308


def _label_text(html: str) -> str:
    """Label the controls between tags only. A label inside an attribute value (an answer
    link's title) closed the value and the tag early: the link lost its rel="noreferrer" and
    the rest of the tag showed as text. A control in a value is not laid out with the page."""
    pieces = _TAG.split(html)
    return "".join(piece if at % 2 else _label_piece(piece) for at, piece in enumerate(pieces))


def _label_piece(text: str) -> str:
    if text.isascii():
        return text
    text = INVISIBLE_OPERATORS.sub(_operators_label, TAG_CHARACTERS.sub(_tags_label, text))
    text = BIDI_CONTROLS.sub(_control_label, _MARK_RUN_CANDIDATE.sub(_marks_capped, text))
    return BLANKS.sub(_control_label, text)


@register.filter(is_safe=True)
def visitor(value: object) -> SafeString:
    """Template form of `visitor_html`: `{{ turn.user_message|linebreaksbr|visitor }}`."""
    return visitor_html(value)
