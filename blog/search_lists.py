"""The ORM forms of the candidate lists: nearest chunks by cosine distance, and full text.

The site's search runs both lists in one statement (blog.search_sql); these querysets and
helpers build the same lists for the tests and benchmarks, and the full-text statement's
tsqueries. A question rarely repeats all of an article's words, so any term may match (OR
semantics); chunks holding two of the terms are fetched first, and single-term matches are
ranked only when those are too few.
"""

from itertools import combinations

from django.conf import settings
from django.contrib.postgres.search import SearchQuery, SearchRank
from django.db import connection
from django.db.models import F, QuerySet
from pgvector.django import CosineDistance

from blog import search_fetch, search_sql
from blog.chunking import query_terms
from blog.models import Chunk, published_q

_PUBLISHED = published_q("article__")

# ts_rank (term frequency) divided by 1 + log(length). With OR-queries it ranked better than
# ts_rank_cd, whose cover density rewards adjacent terms a question rarely repeats
# (bench/retrieval_quality.py, see the README).
_RANK_NORMALIZATION = 1
_MAX_PAIR_TERMS = 12  # 66 pairs; a long question's later terms still count in the rank


def chunk_nearest(*, vector: list[float], k: int, language: str | None = None) -> QuerySet:
    """Published chunks nearest to `vector` by cosine distance, on the HNSW index.

    Call inside a transaction: the index settings are `SET LOCAL`.
    """
    with connection.cursor() as cursor:
        search_sql.hnsw_configure(cursor, k=k)
    chunks = Chunk.objects.filter(_PUBLISHED)
    if language is not None:
        chunks = chunks.filter(language=language)
    return chunks.annotate(distance=CosineDistance("embedding", vector)).order_by("distance")[:k]


def chunk_matching(*, terms: list[str], k: int, at_least_two: bool = False) -> QuerySet:
    """Published chunks matching the terms, best first by ts_rank over all of them (GIN index).

    With `at_least_two`, only chunks holding two or more of the terms; otherwise any one of
    them. At most SEARCH_TEXT_MAX_MATCHES matches are ranked: ts_rank reads every match, and
    a word common to a large corpus would otherwise make each query rank thousands of rows.
    """
    any_term, pairs = _tsqueries(terms)
    ranking = SearchQuery(any_term, search_type="raw", config="english")
    matching = ranking
    if at_least_two:
        matching = SearchQuery(pairs, search_type="raw", config="english")
    # Visible chunks only, before the cap: a post scheduled for later has its chunks indexed,
    # and enough of them took every place of the cap (blog.search_sql._TEXT_LIST).
    capped = Chunk.objects.filter(_PUBLISHED, search_vector=matching).order_by().values("pk")
    matches = Chunk.objects.filter(pk__in=capped[: settings.SEARCH_TEXT_MAX_MATCHES])
    return matches.annotate(
        rank=SearchRank(F("search_vector"), ranking, normalization=_RANK_NORMALIZATION)
    ).order_by("-rank", "id")[:k]


def chunk_text_candidates(*, query: str, k: int, vector: list[float] | None = None) -> list[dict]:
    """The `k` best full-text chunks for a query: OR semantics, two-term matches first.

    A question rarely repeats all of an article's words, so any term may match. The rank
    puts chunks with several terms first anyway, so they are fetched on their own first;
    single-term matches are ranked only when those are fewer than `k` (both in one
    statement, see blog.search_sql). The rows are those `chunk_matching` selects; with
    `vector`, each carries its cosine distance and the query lexemes it holds (evidence).
    """
    statement = _text_statement(query_terms(query), k, vector)
    if statement is None:
        return []
    return _text_merge(search_fetch.text_rows_fetch(statement), k)


def _text_statement(
    terms: list[str], k: int, vector: list[float] | None
) -> tuple[str, dict] | None:
    if not terms:
        return None
    any_term, pairs = _tsqueries(terms)
    return search_sql.text_statement(
        vector=vector,
        k=k,
        ranking=any_term,
        pairs=pairs if len(terms) > 1 else None,
        lexical=" ".join(terms),  # the query's lexemes are those of query_lexemes(...)
    )


def _text_merge(found: tuple[list[dict], list[dict]] | None, k: int) -> list[dict]:
    """Two-term rows if they are `k`, else both kinds merged in rank order."""
    if found is None:
        return []
    two, more = found
    if len(two) >= k:
        return two
    merged = {row["id"]: row for row in [*more, *two]}
    return sorted(merged.values(), key=lambda row: (-row["rank"], row["id"]))[:k]


def _text_window(found: tuple[list[dict], list[dict]] | None, window: int, k: int) -> list[dict]:
    """`_text_merge` at `window` rows, then the rest of `k`: the evidence window holds the rows
    a search of the default limit would have fetched (merging at `k` would let single-term
    rows into it once the two-term rows no longer fill `k`)."""
    first = _text_merge(found, window)
    ids = {row["id"] for row in first}
    return [*first, *(row for row in _text_merge(found, k) if row["id"] not in ids)][:k]


def _tsqueries(terms: list[str]) -> tuple[str, str]:
    """Raw tsqueries for any one of the terms, and for any two of the first _MAX_PAIR_TERMS."""
    # Terms are quoted (and only ever letters and digits), so a visitor cannot inject
    # tsquery operators.
    quoted = [f"'{term}'" for term in terms]
    pairs = combinations(quoted[:_MAX_PAIR_TERMS], 2)
    return " | ".join(quoted), " | ".join(f"({a} & {b})" for a, b in pairs)
