"""What a search returns for each article found: its hit, with its URL, section and excerpt.

Only the hits returned are built (a blog-wide candidate set can be 100), so building one is
cheap: the article URL is a string join around a cached reverse(), the excerpt is cut after
a sentence when one ends late enough, and the section URL carries the excerpt's heading.
"""

import re
from dataclasses import asdict, dataclass, field
from functools import lru_cache

from django.conf import settings
from django.urls import get_script_prefix, get_urlconf, reverse

from blog.rendering import heading_anchor
from blog.search_fusion import _Candidate

EXCERPT_MAX_CHARS = 600

_SENTENCE_END = re.compile(r"[.!?。！？](?=\s|$)|[。！？]")
_PLAIN_SLUG = re.compile(r"[-a-zA-Z0-9_]+")  # django.urls.converters.SlugConverter.regex
_URL_PLACEHOLDER = "search-hit-slug-placeholder"


@dataclass(frozen=True)
class SearchHit:
    """One ranked article with its best excerpt and the evidence that it answers the query."""

    rank: int
    article_id: int
    title: str
    url: str
    excerpt: str
    heading: str
    language: str
    relevance: float  # calibrated 0-1 (blog.relevance); hits below the bar are dropped
    similarity: float  # cosine similarity of the article's best chunk to the query
    coverage: float  # IDF-weighted share of the query's terms the article's chunks contain
    known: float  # IDF-weighted share of the query's terms the blog uses at all
    margin: float  # similarity lead over the next article in its language (0 if behind)
    score: float  # the fused rank (RRF) that orders the hits
    section_url: str = ""  # the url with the anchor of the excerpt's section, when it has one
    # The query's rare words that no article uses in any form ("tiktoken"): the question turns
    # on something the blog does not cover, however well the rest of it matches (blog.rare_words).
    unknown_words: tuple[str, ...] = ()
    # The query's typos and the words the search read them as ("pgvecter": "pgvector").
    read_as: dict[str, str] = field(default_factory=dict, hash=False)

    def as_dict(self) -> dict:
        """JSON-ready dict."""
        return asdict(self)

    def as_tool(self) -> dict:
        """What the model sees: relevance instead of the fused rank, no raw evidence."""
        return {
            "rank": self.rank,
            "article_id": self.article_id,
            "title": self.title,
            "url": self.url,
            "section_url": self.section_url,  # the panel links the section the excerpt is from
            "heading": self.heading,
            "language": self.language,
            "excerpt": self.excerpt,
            "relevance": round(self.relevance, 2),
            # Only when there are some: most questions use no word the blog lacks.
            **({"unknown_words": list(self.unknown_words)} if self.unknown_words else {}),
            **({"read_as": dict(self.read_as)} if self.read_as else {}),
        }


def _hit(
    candidate: _Candidate,
    *,
    rank: int,
    unknown: tuple[str, ...] = (),
    read_as: dict[str, str] | None = None,
) -> SearchHit:
    row, evidence = candidate.row, candidate.evidence
    url = article_url(row["article__slug"])
    return SearchHit(
        rank=rank,
        article_id=row["article_id"],
        title=row["article__title"],
        url=url,
        excerpt=excerpt_cut(row["text"]),
        heading=row["heading_path"],
        language=row["language"],
        relevance=round(candidate.relevance, 4),
        similarity=round(evidence.similarity, 4),
        coverage=round(evidence.coverage, 4),
        known=round(evidence.known, 4),
        margin=round(evidence.margin, 4),
        score=round(float(candidate.score), 6),
        section_url=_section_url(url, row.get("heading_path") or ""),
        unknown_words=unknown,
        read_as=dict(read_as or {}),
    )


def article_url(slug: str) -> str:
    """`reverse("blog:article", ...)` for a hit, at a string join's cost instead of ~0.1 ms.

    A slug the `slug` path converter accepts goes into the URL as it is (nothing in it needs
    quoting), so the reversed URL of a placeholder slug serves every such slug; any other
    slug goes through reverse() as before.
    """
    if not _PLAIN_SLUG.fullmatch(slug):
        return reverse("blog:article", kwargs={"slug": slug})
    head, tail = _article_url_around(get_script_prefix(), get_urlconf(), settings.ROOT_URLCONF)
    return head + slug + tail


@lru_cache(maxsize=16)
def _article_url_around(script_prefix: str, urlconf, root_urlconf: str) -> tuple[str, str]:
    # The arguments are the cache key: reverse() reads all three from where they are set.
    head, _, tail = reverse("blog:article", kwargs={"slug": _URL_PLACEHOLDER}).rpartition(
        _URL_PLACEHOLDER
    )
    return head, tail


def _section_url(url: str, heading_path: str) -> str:
    """The article url pointing at the section a chunk came from (its deepest heading)."""
    if not heading_path:
        return url
    return f"{url}#{heading_anchor(heading_path.split(' > ')[-1])}"


def excerpt_cut(text: str, *, limit: int = EXCERPT_MAX_CHARS) -> str:
    """At most `limit` characters, cut after a sentence when one ends late enough, else a word."""
    text = text.strip()
    if len(text) <= limit:
        return text
    window = text[: limit - 1]
    sentence_ends = [match.end() for match in _SENTENCE_END.finditer(window)]
    if sentence_ends and sentence_ends[-1] >= limit // 2:
        return window[: sentence_ends[-1]].rstrip()
    space = window.rfind(" ")
    cut = space if space >= limit // 2 else len(window)
    return window[:cut].rstrip() + "…"
