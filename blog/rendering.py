"""Markdown to safe HTML: markdown-it-py renders, nh3 (Ammonia) sanitizes."""

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from urllib.parse import SplitResult, urlsplit

import nh3
from django.utils.text import slugify
from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock, blockquote, list_block
from markdown_it.rules_block.table import table as table_block
from markdown_it.rules_core import StateCore
from markdown_it.token import Token

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


def _cell_alignment(state: StateCore) -> None:
    """A column's alignment ("|---:|") as the cell's `align`, not markdown-it's `style`, which
    the sanitiser drops (and the site's CSP would refuse): every column read left-aligned."""
    for token in state.tokens:
        if token.type in ("th_open", "td_open") and (style := token.attrGet("style")):
            token.attrs = {"align": str(style).removeprefix("text-align:")}


FILE_NAME_CHARS = 60  # a picture named by its file shows this much of the name


def _images_as_links(state: StateCore) -> None:
    """An image as a link to the picture, named by its description: the sanitiser keeps no
    `<img>` (the site's CSP loads no other site's images, and readers' browsers would fetch
    them), and `![A diagram](https://…/bucket.png)` vanished from the page and the preview with
    its words, leaving an empty paragraph the author had no way to explain. Inside a link, its
    description alone (a link cannot hold another)."""
    for token in state.tokens:
        if token.children:
            token.children = _unpictured(token.children)


def _unpictured(children: list[Token]) -> list[Token]:
    out: list[Token] = []
    in_link = 0
    for child in children:
        in_link += {"link_open": 1, "link_close": -1}.get(child.type, 0)
        if child.type != "image":
            out.append(child)
            continue
        src = str(child.attrGet("src") or "")
        words = _description(child)
        if not words:  # `![]()`: nothing to show and nowhere to go, so no empty link
            continue
        if in_link or not src:  # in a link its words; with no address, nowhere to go
            out.extend(words)
            continue
        link = Token("link_open", "a", 1, attrs={"href": src})
        if title := child.attrGet("title"):
            link.attrSet("title", str(title))
        out.extend([link, *words, Token("link_close", "a", -1)])
    return out


def _description(image: Token) -> list[Token]:
    """An image's description as words a link can hold, else the picture's file name.

    A description may hold a link or another picture (CommonMark parses it as inline text): kept,
    the inner link split the picture's link in two, its words after it left outside (a link
    cannot hold another), and an inner picture left an empty link with no words at all."""
    words: list[Token] = []
    for child in image.children or []:
        if child.type == "image":
            words.extend(_description(child))
        elif child.type not in ("link_open", "link_close"):
            words.append(child)
    if any(word.type != "text" or word.content.strip() for word in words):
        return words
    return _file_name(str(image.attrGet("src") or ""))


def _file_name(src: str) -> list[Token]:
    """A picture with no description (or only spaces) is named by its file: "chart.png". A
    `data:` picture has none (its name was its whole base64 payload, kilobytes of it), and a
    long name is cut."""
    if src.strip().lower().startswith("data:"):
        return [_text("image")]
    name = src.rstrip("/").rsplit("/", 1)[-1] or src
    if len(name) > FILE_NAME_CHARS:
        name = name[:FILE_NAME_CHARS] + "…"
    return [_text(name)] if name.strip() else []


def _text(content: str) -> Token:
    token = Token("text", "", 0)
    token.content = content
    return token


# A table row short of its header's cells is filled with empty ones, and markdown-it bounds
# that per table only (65,536): ten tables of 256 header cells over 256 rows of "|" (15 kB)
# made 650,000 cells, 13 CPU-seconds and 6.6 MB of HTML for each view of the page holding
# them (an article, an answer in the admin's transcript). A document's tables hold at most a
# cell per character of its text (a real cell takes at least its "|") plus this many; the
# rows past that are text, as in static/chat/markdown.js.
MAX_FILLED_CELLS = 4096
_CELLS_SPENT = "docent_table_cells"


def _table_within_budget(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """markdown-it's table rule, given no more rows than the document's cell budget pays for
    (each row has the header's cells; the header has at most one more than its pipes)."""
    budget = len(state.src) + MAX_FILLED_CELLS - state.env.get(_CELLS_SPENT, 0)
    header = state.src[state.bMarks[start] : state.eMarks[start]]
    rows = budget // (header.count("|") + 1) - 1  # the header is a row too
    if rows < 0:
        return False
    first = len(state.tokens)
    # Two lines are the header and its delimiter row; the lines past the cut are text.
    if not table_block(state, start, min(end, start + 2 + rows), silent):
        return False
    if not silent:
        made = sum(1 for t in state.tokens[first:] if t.type in ("th_open", "td_open"))
        state.env[_CELLS_SPENT] = state.env.get(_CELLS_SPENT, 0) + made
    return True


# markdown-it stops at a nesting depth (the preset's maxNesting, 20: a list takes two levels, its
# list and its item; a quote one) by dropping every line from there to the end of the
# enclosing range, and for a list that range is the rest of the document: a tenth list inside
# nine others cut the article there, on the page, in the preview and in the transcript, with
# no word to anyone. A list or quote that would open past the depth is refused instead, so its
# lines stay in the text around them (its markers shown as written), and the first such line
# is noted for the admin's form (markdown_too_deep).
_TOO_DEEP = "docent_too_deep_line"
RuleFn = Callable[[StateBlock, int, int, bool], bool]


def _within_depth(rule: RuleFn, *, levels: int) -> RuleFn:
    """`rule`, refused where the `levels` it opens would put its content past maxNesting."""

    def guarded(state: StateBlock, start: int, end: int, silent: bool) -> bool:
        # A line indented less than the block being read belongs to an outer one: the list or
        # quote it starts opens out there (a sibling of the ninth list's item ends that
        # item's paragraph, as before). Refused here, in a look-ahead too, the line goes on
        # the paragraph above it, as its next line.
        inside = state.sCount[start] >= state.blkIndent
        if not inside or state.level + levels < state.md.options.maxNesting:
            return rule(state, start, end, silent)
        if rule(state, start, end, True):  # it would have opened here: the line stays as text
            state.env[_TOO_DEEP] = min(start, state.env.get(_TOO_DEEP, start))
        return False

    return guarded


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    # Raw HTML is off at the parser, and the sanitizer still runs: two independent guards.
    parser = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable(
        ["table", "strikethrough"]
    )
    parser.block.ruler.at("table", _table_within_budget, {"alt": ["paragraph", "reference"]})
    # The same rules and the same "alt" chains (what each may interrupt) as markdown-it's own.
    parser.block.ruler.at(
        "blockquote",
        _within_depth(blockquote, levels=1),
        {"alt": ["paragraph", "reference", "blockquote", "list"]},
    )
    parser.block.ruler.at(
        "list",
        _within_depth(list_block, levels=2),
        {"alt": ["paragraph", "reference", "blockquote"]},
    )
    parser.core.ruler.push("heading_ids", _heading_ids)
    parser.core.ruler.push("images_as_links", _images_as_links)
    parser.core.ruler.push("cell_alignment", _cell_alignment)
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


# What an article's HTML depends on besides its Markdown: this module (its tags, link schemes,
# table cap, heading ids) and the libraries it calls (Django's slugify makes the heading ids).
RENDERER_PACKAGES = ("markdown-it-py", "mdurl", "nh3", "django")


def renderer_fingerprint(*, source: bytes, packages: tuple[str, ...] = RENDERER_PACKAGES) -> str:
    """A short digest of the renderer: this module's source and its libraries' versions.

    Rendered bodies are cached under it (blog.selectors.article_body_html), so an edit here or
    an upgrade of a library renders every article afresh, with no version number to remember
    to bump and no step at release.
    """
    digest = hashlib.sha256(source)
    for package in packages:
        digest.update(f"\0{package}=={metadata.version(package)}".encode())
    return digest.hexdigest()[:16]


RENDERER = renderer_fingerprint(source=Path(__file__).read_bytes())


# How static/chat/markdown.js shows a link in an answer: to another site, marked as leaving it
# (a class the stylesheet gives an arrow, the host in its title), opened apart and without a
# referrer; to an address that is not a web page (mailto:), as text.
EXTERNAL_LINK = {"target": "_blank", "rel": "nofollow noopener noreferrer", "class": "dc-external"}
UNLINKED_CLASS = "dc-md-unlinked"


# A browser reads a run of slashes (or backslashes) at the start of a relative address as
# "//": the URL standard skips the extra ones before a web page's host. "///evil.example" has
# no host for urlsplit, yet Chromium goes to http://evil.example/.
_NETWORK_PATH = re.compile(r"[/\\]{2,}")
_C0_AND_SPACE = "".join(map(chr, range(0x21)))


def _link_parts(href: str) -> SplitResult:
    """`href` split as a browser on one of the site's pages reads it (see _NETWORK_PATH)."""
    # Browsers drop tabs and line breaks anywhere in a URL, and spaces and controls around it.
    href = re.sub(r"[\t\n\r]", "", href).strip(_C0_AND_SPACE)
    if slashes := _NETWORK_PATH.match(href):
        return urlsplit("//" + href[slashes.end() :])
    return urlsplit(href)


def _mark_link(token: Token, external_label: str) -> bool:
    """Mark a link_open token as the chat panel would; False when it must not be a link."""
    try:
        parts = _link_parts(str(token.attrGet("href") or ""))
        port = parts.port  # raises for "host:abc", a port past 65535 or an unclosed "[": text
    except ValueError:
        return False
    if parts.scheme not in ("", "http", "https"):
        return False
    # "https:evil.example" has no host for urlsplit, yet a browser on an http page goes to
    # https://evil.example (and "http:…" likewise from an https page): it would pass for one of
    # the site's own links. No answer means a scheme without "//": text.
    if parts.scheme and not parts.netloc:
        return False
    if parts.netloc:  # absolute, or "//host/…": the transcript cannot tell this site's own host
        for name, value in EXTERNAL_LINK.items():
            token.attrSet(name, value)
        host = f"{parts.hostname}:{port}" if port else str(parts.hostname)
        token.attrSet("title", f"{host} ({external_label})")
    return True


def answer_to_html(text: str, *, external_label: str) -> str:
    """Render an answer's Markdown as `markdown_to_html` does, its links as the chat panel
    shows them. Its author is a model: it may point anywhere, unlike an article's."""
    tokens = _parser().parse(text)
    for token in tokens:
        opened = None
        for child in token.children or []:
            if child.type == "link_open" and not _mark_link(child, external_label):
                opened = child
                child.tag, child.attrs = "span", {"class": UNLINKED_CLASS}
            elif child.type == "link_close" and opened is not None:
                child.tag, opened = "span", None
    return nh3.clean(
        _parser().renderer.render(tokens, _parser().options, {}),
        tags=ALLOWED_TAGS | {"span"},
        attributes={
            **ALLOWED_ATTRIBUTES,
            "a": {"href", "title", *EXTERNAL_LINK},
            "span": {"class"},
        },
        url_schemes={"http", "https"},
        link_rel=None,  # set above, on the links that leave the site
    )


@dataclass(frozen=True)
class TooDeep:
    """Where a body first nests deeper than the page shows: its line (from 1) and words."""

    line: int
    text: str  # the line as typed, cut to 40 characters: a textarea shows no line numbers


def markdown_too_deep(text: str) -> TooDeep | None:
    """The first line where a list or quote opens deeper than the page can show it, if any.

    The page keeps that line and the ones nested in it as plain text, markers and all
    (`_within_depth`); an author should hear of it before the readers see it.
    """
    env: dict = {}
    _parser().parse(text, env)
    if (index := env.get(_TOO_DEEP)) is None:
        return None
    words = re.split(r"\r\n?|\n", text)[index].strip()  # markdown-it's own line breaks
    return TooDeep(line=index + 1, text=words if len(words) <= 40 else words[:39] + "…")


def markdown_to_text(text: str) -> str:
    """Plain text of a Markdown document (for excerpts and word counts)."""
    return nh3.clean(_parser().render(text), tags=set()).strip()
