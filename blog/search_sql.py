"""The search's candidate lists, each fetched in one SQL statement with the vector sent in binary.

blog.search used to build these lists with the ORM: four to six querysets per search, each
compiled anew (about a millisecond apiece) and carrying the 384-float query vector as a text
literal. At 100k chunks that Python and text work cost more than the index scans themselves
(docs/benchmarks.md, "Search at scale"). Here each half of a search is one fixed statement:

- the vector half: one nearest-chunk list per article language, `UNION ALL`-ed, each on the
  HNSW index (a partial index per language, see blog.models);
- the text half: the chunks holding two or more query terms, and only when those are fewer
  than `k` the chunks holding any one of them (a one-time filter skips that scan otherwise).

blog.search_fetch sends them, with the vocabulary key and the query's lexemes, in one round
trip. The rows are the dicts blog.search fuses (same keys as its former `.values(...)` rows), so
fusion, evidence and relevance are untouched. The published rule is compiled from
`published_q`, not written again.
"""

from __future__ import annotations

import weakref
from functools import cache

import psycopg
from django.conf import settings
from django.db import connection
from pgvector import Vector
from pgvector.psycopg.vector import register_vector_info
from psycopg.rows import dict_row
from psycopg.types import TypeInfo

from blog.models import Article, published_q, scheduled_q
from ops import tracing

# `matched`: the query's lexemes the chunk holds, in the tsvector's (sorted) order. It is the
# query's tsvector minus (the query's minus the chunk's) lexemes: two ts_delete calls, each a
# binary search per lexeme in C. Unnesting the chunk's tsvector in a subquery and filtering it
# against the query's lexemes gave the same arrays at five times the cost (about 45 against
# 8 us per row, for the ~120 rows of a search; docs/benchmarks.md, "matched lexemes").
_COLUMNS_TEMPLATE = """
    blog_chunk.id, blog_chunk.article_id, blog_article.title AS "article__title",
    blog_article.slug AS "article__slug", blog_chunk.text, blog_chunk.heading_path,
    blog_chunk.language, {distance} AS distance,
    tsvector_to_array(ts_delete({query}, tsvector_to_array(
        ts_delete({query}, tsvector_to_array(blog_chunk.search_vector))))) AS matched"""
_DISTANCE = "blog_chunk.embedding <=> %(vector)b"
# The query's lexemes as a tsvector. Uncorrelated subqueries: PostgreSQL computes each once per
# statement (an InitPlan), not once per row. array_to_tsvector refuses empty strings.
_QUERY_OF_LEXEMES = "(SELECT array_to_tsvector(array_remove(%(lexemes)s::text[], '')))"
_QUERY_OF_LEXICAL = "(SELECT to_tsvector('english', %(lexical)s))"
_COLUMNS = _COLUMNS_TEMPLATE.format(distance=_DISTANCE, query=_QUERY_OF_LEXEMES)
_FROM = "blog_chunk JOIN blog_article ON blog_article.id = blog_chunk.article_id"
# ts_rank normalization 1: rank / (1 + log(length)); see blog.search_lists._RANK_NORMALIZATION.
# Visibility applies before the cap: a post scheduled for later has its chunks indexed, and
# capped first, enough of them (a long post, or several, using the query's words) took every
# place of the cap and the visible chunks were never ranked. The capped rows are ranked where
# they are, not looked up again by id.
# Each match's article is looked up by its key as the match is read (a LATERAL subquery with
# LIMIT is never flattened into a join), so the cap stops the look-ups at `cap` visible rows.
# As a plain join the planner hashed every visible article first whenever it expected many
# matches: 12 of 40 statements at 100k chunks, about 1.9 ms of a 4 ms statement for 9,500
# articles, to keep 200 rows. The rows come in the same order either way, the matches' own.
_TEXT_LIST = """
    SELECT {columns}, blog_chunk.rank
    FROM (SELECT *,
                 ts_rank(search_vector, to_tsquery('english', %(ranking)s), 1) AS rank
          FROM (SELECT blog_chunk.* FROM blog_chunk
                CROSS JOIN LATERAL (SELECT FROM blog_article
                    WHERE blog_article.id = blog_chunk.article_id AND {published}
                    LIMIT 1) AS visible
                WHERE search_vector @@ to_tsquery('english', %({matching})s)
                LIMIT %(cap)s) AS capped
          ORDER BY rank DESC, id) AS blog_chunk
    JOIN blog_article ON blog_article.id = blog_chunk.article_id
    ORDER BY blog_chunk.rank DESC, blog_chunk.id LIMIT %(k)s"""
_vector_types: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_vector_connections: weakref.WeakSet = weakref.WeakSet()  # vector adapters on the connection


def vector_lists(
    *, vector: list[float], lexemes: list[str], k: int, languages: tuple[str | None, ...]
) -> list[list[dict]]:
    """The `k` published chunks nearest to `vector` for each language (None: any language).

    Call inside a transaction: the HNSW settings are `SET LOCAL`.
    """
    sql, params = vector_statement(vector=vector, lexemes=lexemes, k=k, languages=languages)
    with tracing.statements_span([sql]) as span, search_cursor() as cursor:
        hnsw_configure(cursor, k=k)
        cursor.execute(sql, params)
        rows = cursor.fetchall()
        tracing.statement_rows(span, len(rows))
        return vector_split(rows, len(languages))


def vector_split(rows: list[dict], count: int) -> list[list[dict]]:
    # UNION ALL appends each list in turn, each in its own distance order.
    lists: list[list[dict]] = [[] for _ in range(count)]
    for row in rows:
        lists[row.pop("list")].append(row)
    return lists


def vector_statement(
    *,
    vector: list[float],
    lexemes: list[str] | None = None,
    k: int,
    languages: tuple[str | None, ...],
    lexical: str = "",
    first: int = 0,
) -> tuple[str, dict]:
    """The SQL and parameters of `vector_lists`: one `LIMIT k` nearest-first query per list.

    A list of one language is planned on that language's partial HNSW index (the statement
    is planned with its values, so `language = 'zh'` matches the index's predicate). Each
    row's `matched` lexemes are those among `lexemes`, or with `lexemes=None` among the
    lexemes of `lexical` (computed in the statement, as the text half does). Each row carries
    its list's number, `first` for the first language: a search that sends its later lists
    as a statement of their own (blog.search_fetch) numbers them after the first.
    """
    parts = []
    params = {"vector": Vector(vector), "k": k}
    if lexemes is None:
        columns = _COLUMNS_TEMPLATE.format(distance=_DISTANCE, query=_QUERY_OF_LEXICAL)
        params["lexical"] = lexical
    else:
        columns = _COLUMNS
        params["lexemes"] = lexemes or [""]
    for i, language in enumerate(languages):
        same_language = "TRUE"
        if language is not None:
            params[f"language{i}"] = language
            same_language = f"blog_chunk.language = %(language{i})s"
        parts.append(
            # Only constants and placeholder names are formatted in; values are bound.
            f"(SELECT {first + i} AS list, {columns} FROM {_FROM} "  # noqa: S608
            f"WHERE {_published_sql()} AND {same_language} "
            f"ORDER BY blog_chunk.embedding <=> %(vector)b LIMIT %(k)s)"
        )
    return " UNION ALL ".join(parts), params | _published_params()


def text_rows(
    *,
    vector: list[float] | None,
    k: int,
    ranking: str,
    pairs: str | None,
    lexical: str = "",
) -> tuple[list[dict], list[dict]]:
    """Chunks matching the `pairs` tsquery, and (only if those are fewer than `k`) `ranking`.

    Both are ranked by `ranking` (every term OR-ed) and capped at SEARCH_TEXT_MAX_MATCHES
    visible matches before ranking. `matched` holds each chunk's lexemes among those of `lexical`
    (computed here, so this half need not wait for the query's weights). Returns
    (two-term rows, any-term rows).
    """
    sql, params = text_statement(vector=vector, k=k, ranking=ranking, pairs=pairs, lexical=lexical)
    with search_cursor() as cursor:
        cursor.execute(sql, params)
        return text_split(cursor.fetchall())


def text_statement(
    *, vector: list[float] | None, k: int, ranking: str, pairs: str | None, lexical: str
) -> tuple[str, dict]:
    """The SQL and parameters of `text_rows`."""
    params = {
        "lexical": lexical,
        "k": k,
        "ranking": ranking,
        "pairs": pairs,
        "cap": settings.SEARCH_TEXT_MAX_MATCHES,
    } | _published_params()
    text_columns = _COLUMNS_TEMPLATE.format(
        distance="NULL::float8" if vector is None else _DISTANCE, query=_QUERY_OF_LEXICAL
    )
    columns = {"columns": text_columns, "published": _published_sql()}
    if vector is not None:  # no vector: no evidence wanted, no distance to compute
        params["vector"] = Vector(vector)
    any_term = _TEXT_LIST.format(matching="ranking", **columns)
    if pairs is None:
        return f"SELECT 1 AS list, * FROM ({any_term}) AS one", params  # noqa: S608
    two_terms = _TEXT_LIST.format(matching="pairs", **columns)
    sql = (
        f"WITH two AS MATERIALIZED ({two_terms}) "  # noqa: S608 (constants only)
        "SELECT 0 AS list, * FROM two UNION ALL "
        f"SELECT 1 AS list, * FROM ({any_term}) AS one "
        "WHERE (SELECT count(*) FROM two) < %(k)s"
    )
    return sql, params


def text_split(rows: list[dict]) -> tuple[list[dict], list[dict]]:
    lists: tuple[list[dict], list[dict]] = ([], [])
    for row in rows:
        lists[row.pop("list")].append(row)
    return lists


def hnsw_configure(cursor, *, k: int) -> None:
    """`SET LOCAL` the HNSW scan: ef_search >= k, and iterative scans in strict order.

    HNSW returns at most ef_search rows, so it must be >= k. Iterative scans (pgvector 0.8)
    keep walking the graph when the published-only filter drops rows, so hidden chunks near
    the query cannot leave the list short; strict_order keeps the exact distance order.
    """
    cursor.execute(*hnsw_settings(k))


def hnsw_settings(k: int) -> tuple[str, list]:
    return (
        "SELECT set_config('hnsw.ef_search', %s, true), "
        "set_config('hnsw.iterative_scan', 'strict_order', true)",
        [str(max(settings.SEARCH_EF_SEARCH, k))],
    )


def search_cursor(raw: psycopg.Connection | None = None) -> psycopg.Cursor:
    """A server-side-binding cursor on this thread's Django connection (or `raw`), vectors
    in binary.

    Django's own cursors bind client-side, so a vector went as 4 KB of text to format and
    parse; bound here it goes as 1.5 KB of floats. The statement is still planned with the
    actual values (unnamed statements get a custom plan), so the partial indexes apply.
    """
    if raw is None:
        connection.ensure_connection()
        raw = connection.connection
    cursor = psycopg.Cursor(raw, row_factory=dict_row)
    if raw in _vector_connections:  # a side connection: its every cursor has them already
        return cursor
    info = _vector_types.get(raw)
    if info is None:
        info = _vector_types[raw] = TypeInfo.fetch(raw, "vector")
    register_vector_info(cursor, info)  # this cursor only: Django's own cursors keep text
    return cursor


def vector_register(raw: psycopg.Connection) -> None:
    """Register the vector adapters on a connection only searches use (blog.parallel's).

    Registering them on each cursor makes two adapter classes each time, about 0.2 ms of a
    search's Python at load (80 us when quiet); a side connection needs them once.
    """
    register_vector_info(raw, TypeInfo.fetch(raw, "vector"))
    _vector_connections.add(raw)


@cache
def _published_compiled() -> tuple[str, tuple]:
    return _where_compiled(published_q())


def _where_compiled(rule) -> tuple[str, tuple]:
    query = Article.objects.filter(rule).query
    compiler = query.get_compiler(connection=connection)
    sql, params = compiler.compile(query.where)
    return sql, tuple(params)


def _published_sql() -> str:
    """`published_q` as SQL on `blog_article`, its parameters named (see _published_params)."""
    sql, params = _published_compiled()
    return sql % tuple(f"%(published{i})s" for i in range(len(params)))


@cache
def published_sql_inline() -> str:
    """`published_q` as SQL on `blog_article` with its values written in, for a statement
    that takes another's text (ts_stat)."""
    sql, params = _published_compiled()
    return connection.ops.compose_sql(sql, params)


@cache
def scheduled_sql_inline() -> str:
    """`scheduled_q` as SQL on `blog_article` with its values written in."""
    return connection.ops.compose_sql(*_where_compiled(scheduled_q()))


def _published_params() -> dict:
    return {f"published{i}": str(value) for i, value in enumerate(_published_compiled()[1])}
