"""An answer as one short line of plain text: what the review backlog shows of it."""

import re

from django import template
from django.utils.text import Truncator

register = template.Library()

GIST_CHARS = 280
_LINK = re.compile(r"\[([^\]]*)\]\([^)\s]*\)")  # [title](url) reads as its title
_MARKUP = re.compile(r"\*\*|`|^\s*#+\s+|^\s*(?:[-+*]|\d+[.)])\s+", re.MULTILINE)


@register.filter
def gist(value: object, limit: int = GIST_CHARS) -> str:
    """The answer's words without Markdown, on one line, cut at `limit` characters.

    Plain text: the caller escapes it (the `visitor` filter), as any text a model wrote.
    """
    text = _MARKUP.sub("", _LINK.sub(r"\1", str(value or "")))
    return Truncator(" ".join(text.split())).chars(limit)
