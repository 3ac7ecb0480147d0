"""The reader's search page (`/search/?q=`): the same hybrid search and relevance bar as
`/api/search` and the assistant's tool (blog.search), shown as article cards.

The page's searches spend the address's search allowance, as `/api/search` does
(config.search_limit reads `search_page_query` to count exactly the queries searched here).
"""

import re
from dataclasses import dataclass

from blog import selectors
from blog.models import Article
from blog.search import article_search
from blog.search_marks import marked_passage

# As `/api/search` accepts (blog.schemas.SearchIn): longer is refused before it is embedded.
QUERY_MAX_LENGTH = 500
RESULTS = 10

_FENCE = re.compile(r"^\s*(```|~~~).*$", re.MULTILINE)
# A label holds no bracket and a target no space or parenthesis: `[^\]]*` ran from every "[" to
# the passage's end when none closed (quadratic: 20 kB of "[" took 1.7 s).
_LINK = re.compile(r"!?\[([^\[\]]*)\]\([^()\s]*\)")
_MARKS = re.compile(r"^\s{0,3}(#{1,6}\s+|>\s?|[-*+]\s+|\d+\.\s+)|\*\*|__|`", re.MULTILINE)


@dataclass(frozen=True)
class SearchPageQuery:
    text: str  # as the reader typed it, for the search box: nothing they typed is lost
    problem: str = ""  # "empty" or "too_long": nothing is searched, nothing is counted

    @property
    def searchable(self) -> bool:
        return not self.problem


@dataclass(frozen=True)
class SearchPageResult:
    article: Article
    passage: str  # the matched passage as plain text
    url: str  # the passage's section when it has one, else the article
    marked: list[tuple[str, bool]]  # the passage as a card shows it, the query's words marked


def search_page_query(raw: str) -> SearchPageQuery:
    """The query the page will search for, or why it will not."""
    if not raw.strip():
        return SearchPageQuery(text=raw, problem="empty")
    if len(raw) > QUERY_MAX_LENGTH:
        return SearchPageQuery(text=raw, problem="too_long")
    return SearchPageQuery(text=raw)


def search_page_results(*, query: str) -> list[SearchPageResult]:
    """The hits that clear the relevance bar, best first, with their articles for the cards.

    Raises:
        EmbeddingError: the query could not be embedded (search is unavailable).
    """
    hits = article_search(query=query.strip(), limit=RESULTS)
    articles = selectors.article_cards_by_id(ids=[hit.article_id for hit in hits])
    results = []
    for hit in hits:
        if hit.article_id not in articles:  # withdrawn between the search and this read
            continue
        passage = passage_text(hit.excerpt)
        results.append(
            SearchPageResult(
                article=articles[hit.article_id],
                passage=passage,
                url=hit.section_url or hit.url,
                marked=marked_passage(passage, query),
            )
        )
    return results


def passage_text(excerpt: str) -> str:
    """A chunk's Markdown as a card shows it: no fences, heading marks, emphasis or link targets."""
    text = _FENCE.sub("", excerpt)
    text = _LINK.sub(r"\1", text)
    text = _MARKS.sub("", text)
    return " ".join(text.split())
