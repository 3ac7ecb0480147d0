"""Markdown to safe HTML: markdown-it-py renders, nh3 (Ammonia) sanitizes."""

from functools import lru_cache

import nh3
from markdown_it import MarkdownIt

ALLOWED_TAGS = {
    "a",
    "abbr",
    "b",
    "blockquote",
    "br",
    "code",
    "del",
    "em",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "i",
    "kbd",
    "li",
    "ol",
    "p",
    "pre",
    "s",
    "strong",
    "sub",
    "sup",
    "table",
    "tbody",
    "td",
    "th",
    "thead",
    "tr",
    "ul",
}
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "code": {"class"}, "th": {"align"}, "td": {"align"}}


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    # Raw HTML is off at the parser, and the sanitizer still runs: two independent guards.
    return MarkdownIt("commonmark", {"html": False, "linkify": False}).enable(
        ["table", "strikethrough"]
    )


def markdown_to_html(text: str) -> str:
    """Render Markdown to HTML that cannot carry script, styles or event handlers."""
    return nh3.clean(
        _parser().render(text),
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )


def markdown_to_text(text: str) -> str:
    """Plain text of a Markdown document (for excerpts and word counts)."""
    return nh3.clean(_parser().render(text), tags=set()).strip()
