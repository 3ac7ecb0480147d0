"""Hybrid retrieval over published articles: pgvector neighbours + full-text, fused by RRF.

Both lists are ranked by PostgreSQL (the HNSW index for vectors, ts_rank for text) and
filtered to published articles inside the same SQL; Python only fuses the two rankings.
Everything here is sync and uses the calling thread's connection, so the agent's tool can
run it through `sync_to_async` in a worker thread.
"""

import re
from dataclasses import asdict, dataclass
from itertools import combinations

from django.conf import settings
from django.contrib.postgres.search import SearchQuery, SearchRank
from django.db import connection, transaction
from django.db.models import F, QuerySet
from django.urls import reverse
from pgvector.django import CosineDistance

from blog.chunking import query_terms
from blog.embeddings import Embedder, embedder_get, embedding_dimensions_check
from blog.models import Chunk, published_q
from blog.rendering import heading_anchor

EXCERPT_MAX_CHARS = 600
MAX_LIMIT = 50
_PUBLISHED = published_q("article__")
_SENTENCE_END = re.compile(r"[.!?。！？](?=\s|$)|[。！？]")
_FIELDS = ("id", "article_id", "article__title", "article__slug", "text", "heading_path")
# ts_rank (term frequency) divided by 1 + log(length). With OR-queries it ranked better than
# ts_rank_cd, whose cover density rewards adjacent terms a question rarely repeats
# (bench/retrieval_quality.py, see the README).
_RANK_NORMALIZATION = 1
_MAX_PAIR_TERMS = 12  # 66 pairs; a long question's later terms still count in the rank


@dataclass(frozen=True)
class SearchHit:
    """One ranked article with its best excerpt, as the chat and the API see it."""

    rank: int
    article_id: int
    title: str
    url: str
    excerpt: str
    score: float
    section_url: str = ""  # the url with the anchor of the excerpt's section, when it has one

    def as_dict(self) -> dict:
        """JSON-ready dict."""
        return asdict(self)


def article_search(
    *, query: str, limit: int = 5, embedder: Embedder | None = None
) -> list[SearchHit]:
    """Hybrid search: nearest chunks and full-text matches, fused by reciprocal rank.

    Raises:
        EmbeddingDimensionMismatch: the index was built with a model of another width.
        EmbeddingError: the query could not be embedded.
    """
    query, limit = query.strip(), _clamp(limit)
    if not query:
        return []
    k = limit * settings.SEARCH_CANDIDATES_FACTOR
    vector = _query_vector(query=query, embedder=embedder)  # before the transaction: it may be slow
    with transaction.atomic():
        vector_rows = list(chunk_nearest(vector=vector, k=k).values(*_FIELDS, "distance"))
        text_rows = chunk_text_candidates(query=query, k=k)
    return _fuse([vector_rows, text_rows], limit=limit)


def article_search_vector(
    *, query: str, limit: int = 5, embedder: Embedder | None = None
) -> list[SearchHit]:
    """Vector-only search (cosine similarity of the best chunk as the score)."""
    query, limit = query.strip(), _clamp(limit)
    if not query:
        return []
    vector = _query_vector(query=query, embedder=embedder)
    with transaction.atomic():
        k = limit * settings.SEARCH_CANDIDATES_FACTOR
        rows = list(chunk_nearest(vector=vector, k=k).values(*_FIELDS, "distance"))
    return _hits(rows, limit=limit, score=lambda row: 1.0 - row["distance"])


def article_search_text(*, query: str, limit: int = 5) -> list[SearchHit]:
    """Full-text-only search (ts_rank of the best chunk as the score)."""
    query, limit = query.strip(), _clamp(limit)
    rows = chunk_text_candidates(query=query, k=limit * settings.SEARCH_CANDIDATES_FACTOR)
    return _hits(rows, limit=limit, score=lambda row: row["rank"])


def chunk_nearest(*, vector: list[float], k: int) -> QuerySet:
    """Published chunks nearest to `vector` by cosine distance, on the HNSW index.

    Call inside a transaction: the index settings below are `SET LOCAL`.
    """
    _hnsw_configure(k=k)
    return (
        Chunk.objects.filter(_PUBLISHED)
        .annotate(distance=CosineDistance("embedding", vector))
        .order_by("distance")[:k]
    )


def _hnsw_configure(*, k: int) -> None:
    with connection.cursor() as cursor:
        # HNSW returns at most ef_search rows, so it must be >= k. Iterative scans (pgvector
        # 0.8) keep walking the graph when the published-only filter drops rows, so hidden
        # chunks near the query (an article scheduled for later, or unpublished a moment ago)
        # cannot leave the list short; strict_order keeps the exact distance order.
        cursor.execute(
            "SELECT set_config('hnsw.ef_search', %s, true), "
            "set_config('hnsw.iterative_scan', 'strict_order', true)",
            [str(max(settings.SEARCH_EF_SEARCH, k))],
        )


def _query_vector(*, query: str, embedder: Embedder | None) -> list[float]:
    embedder = embedder or embedder_get()
    embedding_dimensions_check(embedder=embedder)
    return embedder.embed_query(query)


def chunk_matching(*, terms: list[str], k: int, at_least_two: bool = False) -> QuerySet:
    """Published chunks matching the terms, best first by ts_rank over all of them (GIN index).

    With `at_least_two`, only chunks holding two or more of the terms; otherwise any one of
    them. At most SEARCH_TEXT_MAX_MATCHES matches are ranked: ts_rank reads every match, and
    a word common to a large corpus would otherwise make each query rank thousands of rows.
    """
    # Terms are quoted (and only ever letters and digits), so a visitor cannot inject
    # tsquery operators.
    quoted = [f"'{term}'" for term in terms]
    ranking = SearchQuery(" | ".join(quoted), search_type="raw", config="english")
    matching = ranking
    if at_least_two:
        pairs = combinations(quoted[:_MAX_PAIR_TERMS], 2)
        matching = SearchQuery(
            " | ".join(f"({a} & {b})" for a, b in pairs), search_type="raw", config="english"
        )
    # Drafts have no chunks (unpublishing removes them), so the cap can ignore visibility:
    # only articles scheduled for later are filtered out, in the outer query.
    capped = Chunk.objects.filter(search_vector=matching).order_by().values("pk")
    matches = Chunk.objects.filter(_PUBLISHED, pk__in=capped[: settings.SEARCH_TEXT_MAX_MATCHES])
    return matches.annotate(
        rank=SearchRank(F("search_vector"), ranking, normalization=_RANK_NORMALIZATION)
    ).order_by("-rank", "id")[:k]


def chunk_text_candidates(*, query: str, k: int) -> list[dict]:
    """The `k` best full-text chunks for a query: OR semantics, two-term matches first.

    A question rarely repeats all of an article's words, so any term may match. The rank
    puts chunks with several terms first anyway, so they are fetched on their own first;
    single-term matches are ranked only when those are fewer than `k`.
    """
    terms = query_terms(query)
    if not terms:
        return []
    rows: list[dict] = []
    if len(terms) > 1:
        rows = list(chunk_matching(terms=terms, k=k, at_least_two=True).values(*_FIELDS, "rank"))
    if len(rows) < k:
        more = chunk_matching(terms=terms, k=k).values(*_FIELDS, "rank")
        merged = {row["id"]: row for row in [*more, *rows]}
        rows = sorted(merged.values(), key=lambda row: (-row["rank"], row["id"]))[:k]
    return rows


def _fuse(lists: list[list[dict]], *, limit: int) -> list[SearchHit]:
    """Reciprocal-rank fusion per article; the excerpt is its chunk with the best fused score."""
    rrf_k = settings.SEARCH_RRF_K
    article_score: dict[int, float] = {}
    chunk_score: dict[int, float] = {}
    rows: dict[int, dict] = {}
    for ranked in lists:
        for rank, row in enumerate(_per_article(ranked), start=1):
            article_score[row["article_id"]] = article_score.get(row["article_id"], 0.0) + 1 / (
                rrf_k + rank
            )
        for rank, row in enumerate(ranked, start=1):
            chunk_score[row["id"]] = chunk_score.get(row["id"], 0.0) + 1 / (rrf_k + rank)
            rows[row["id"]] = row
    best: dict[int, dict] = {}
    for chunk_id, row in rows.items():
        current = best.get(row["article_id"])
        if current is None or chunk_score[chunk_id] > chunk_score[current["id"]]:
            best[row["article_id"]] = row
    order = sorted(article_score, key=lambda article_id: (-article_score[article_id], article_id))
    return [
        _hit(best[article_id], rank=rank, score=article_score[article_id])
        for rank, article_id in enumerate(order[:limit], start=1)
    ]


def _per_article(rows: list[dict]) -> list[dict]:
    """The best-ranked chunk of each article, in rank order."""
    seen: dict[int, dict] = {}
    for row in rows:
        seen.setdefault(row["article_id"], row)
    return list(seen.values())


def _hits(rows: list[dict], *, limit: int, score) -> list[SearchHit]:
    firsts = _per_article(rows)[:limit]
    return [_hit(row, rank=rank, score=score(row)) for rank, row in enumerate(firsts, start=1)]


def _hit(row: dict, *, rank: int, score: float) -> SearchHit:
    url = reverse("blog:article", kwargs={"slug": row["article__slug"]})
    return SearchHit(
        rank=rank,
        article_id=row["article_id"],
        title=row["article__title"],
        url=url,
        excerpt=excerpt_cut(row["text"]),
        score=round(float(score), 6),
        section_url=_section_url(url, row.get("heading_path") or ""),
    )


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


def _clamp(limit: int) -> int:
    return max(1, min(int(limit), MAX_LIMIT))
