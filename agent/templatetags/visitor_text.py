"""Visitor text in the admin: bidi controls shown as what they are, the text isolated."""

import re
import unicodedata

from django import template
from django.utils.html import conditional_escape, format_html
from django.utils.safestring import SafeString, mark_safe

register = template.Library()

# The explicit bidi embeddings, overrides and isolates, and the invisible marks. Left in,
# an override (U+202E) makes a question read backwards to the reviewer, and an unclosed one
# or a strong character can reorder the page's own words next to it.
BIDI_CONTROLS = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _control_label(match: re.Match) -> str:
    char = match.group()
    code = f"U+{ord(char):04X}"
    return format_html('<span class="dc-bidi" title="{}">{}</span>', unicodedata.name(char), code)


def visitor_html(value: object) -> SafeString:
    """Return visitor text (or HTML made from it) escaped, each bidi control as a visible
    label, all in a `<bdi>` so its direction cannot spill onto the admin's words around it."""
    escaped = str(conditional_escape(value))
    return mark_safe(f"<bdi>{BIDI_CONTROLS.sub(_control_label, escaped)}</bdi>")  # noqa: S308


@register.filter(is_safe=True)
def visitor(value: object) -> SafeString:
    """Template form of `visitor_html`: `{{ turn.user_message|linebreaksbr|visitor }}`."""
    return visitor_html(value)
