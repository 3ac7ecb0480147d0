"""An answer as one short line of plain text: what the review backlog shows of it."""

import re

from django import template
from django.utils.text import Truncator

from agent.llm.offline_shape import FENCED
from agent.llm.offline_text import plain
from blog.chunking import TABLE_RULE

register = template.Library()

GIST_CHARS = 280
# What opens a line in Markdown: a heading's hashes, a list item's marker. plain() keeps them.
_LINE_MARK = re.compile(r"^\s*(?:#+|[-+*]|\d+[.)])\s+", re.MULTILINE)


@register.filter
def gist(value: object, limit: int = GIST_CHARS) -> str:
    """The answer's words without Markdown, on one line, cut at `limit` characters.

    Plain text: the caller escapes it (the `visitor` filter), as any text a model wrote.
    """
    return Truncator(plain(_LINE_MARK.sub("", _unfenced(str(value or ""))))).chars(limit)


def _unfenced(text: str) -> str:
    """A code block as its code, a table as its cells apart: plain() keeps fences and pipes, and a
    voted-down answer with both read "`sql CREATE …` | setting | |---|---|" in the backlog."""
    lines = []
    for line in FENCED.sub(lambda m: m.group(3), text).splitlines():
        row = line.strip()
        if row.startswith("|") and TABLE_RULE.match(row):
            continue
        if row.startswith("|"):
            line = " · ".join(cell.strip() for cell in row.strip("|").split("|"))
        lines.append(line)
    return "\n".join(lines)
