"""Markdown to safe HTML: markdown-it-py renders, nh3 (Ammonia) sanitizes."""

from functools import lru_cache

import nh3
from django.utils.text import slugify
from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore

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
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "code": {"class"},
    "th": {"align"},
    "td": {"align"},
    **{f"h{level}": {"id"} for level in range(1, 7)},
}
# Prefixed, so a heading called "Content" or "Chat" cannot take an id the page already uses.
ANCHOR_PREFIX = "sec-"


def heading_anchor(title: str) -> str:
    """The stable id of a heading, from its Markdown source text (chunks know the same text)."""
    return ANCHOR_PREFIX + (slugify(title, allow_unicode=True) or "section")


def _heading_ids(state: StateCore) -> None:
    seen: dict[str, int] = {}
    tokens = state.tokens
    for index, token in enumerate(tokens):
        if token.type != "heading_open":
            continue
        anchor = heading_anchor(tokens[index + 1].content)
        seen[anchor] = seen.get(anchor, 0) + 1
        token.attrSet("id", anchor if seen[anchor] == 1 else f"{anchor}-{seen[anchor]}")


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    # Raw HTML is off at the parser, and the sanitizer still runs: two independent guards.
    parser = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable(
        ["table", "strikethrough"]
    )
    parser.core.ruler.push("heading_ids", _heading_ids)
    return parser


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
