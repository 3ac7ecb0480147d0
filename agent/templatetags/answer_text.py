"""An answer as one short line of plain text: what the review backlog shows of it."""

import re

from django import template
from django.utils.text import Truncator

from agent.llm.offline_text import plain

register = template.Library()

GIST_CHARS = 280
# What opens a line in Markdown: a heading's hashes, a list item's marker. plain() keeps them.
_LINE_MARK = re.compile(r"^\s*(?:#+|[-+*]|\d+[.)])\s+", re.MULTILINE)


@register.filter
def gist(value: object, limit: int = GIST_CHARS) -> str:
    """The answer's words without Markdown, on one line, cut at `limit` characters.

    Plain text: the caller escapes it (the `visitor` filter), as any text a model wrote.
    """
    return Truncator(plain(_LINE_MARK.sub("", str(value or "")))).chars(limit)
