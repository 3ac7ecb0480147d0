"""How a search's statements reach the database: one round trip, and three backends at once.

blog.search_sql writes the statements; this module sends them. The vocabulary key, the query's
lexemes, the HNSW settings and the vector lists go out together in one psycopg pipeline on the
calling thread's connection, so a search waits on the database once instead of once per
statement (seven before). The full-text statement goes first to a side connection
(blog.parallel) when one can be had, and the nearest lists of the languages after the first (the
Chinese walk, the longest of the vector half) to a second one, so the three run at the same time
in three backends without a second Python thread, and the search waits for the longest of
them instead of the vector half's two walks one after the other. When a side connection cannot
be had, or fails, its statement runs on the calling thread's connection and the search gives
the same rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import psycopg
from django.db import connection
from psycopg.rows import dict_row

from blog import parallel, search_sql
from blog.relevance import QUERY_LEXEMES_SQL, change_key_sql
from ops import tracing


@dataclass
class Fetched:
    """What one search reads from the database."""

    change_key: tuple  # the vocabulary's (blog.relevance.change_key_sql)
    lexemes: list[str]  # the query's, as the index spells them
    vector: list[list[dict]]  # one nearest list per language asked for
    text: tuple[list[dict], list[dict]] | None  # two-term rows, any-term rows
    text_on_side: bool = False  # the text statement ran on a side connection
    vector_on_side: bool = False  # the later languages' lists ran on a side connection


def lists_fetch(
    *,
    lexical: str,
    vector: tuple[str, dict] | None,
    k: int,
    lists: int,
    text: tuple[str, dict] | None,
    side: bool,
    vector_beside: tuple[str, dict] | None = None,
) -> Fetched:
    """Everything a search reads, in one round trip on this thread's connection.

    The vocabulary's change key, the query's lexemes, the HNSW settings and the vector lists
    (`search_sql.vector_statement`) go out together in one pipeline: one implicit
    transaction, so `SET LOCAL` holds for the statements after it. `lists` is how many
    vector lists there are in all, `vector`'s and `vector_beside`'s (numbered after them).
    With `side`, the text statement (`search_sql.text_statement`) is sent first on a side
    connection (blog.parallel), then `vector_beside` with its own HNSW settings on a second
    one, and both are read last, so they run while this connection's statements run; if a
    side connection cannot be had or fails, its statement runs here instead, with the same
    rows.
    """
    on_side = _SideStatement([text]) if text is not None and side else None
    beside = None
    if vector_beside is not None and side:
        beside = _SideStatement([search_sql.hnsw_settings(k), vector_beside])
    try:
        here = [] if vector is None else [vector]
        if vector_beside is not None and (beside is None or beside.failed):
            here.append(vector_beside)
        fetched = _main_fetch(
            lexical, here, k, lists, text if on_side is None or on_side.failed else None
        )
        if beside is not None and not beside.failed:
            rows = beside.rows()
            if rows is None:  # it failed after it was sent: run it here
                rows = vector_rows_fetch(vector_beside, k)
            else:
                fetched.vector_on_side = True
            fetched.vector = _vector_joined(fetched.vector, search_sql.vector_split(rows, lists))
        if on_side is not None and fetched.text is None:
            rows = on_side.rows()
            if rows is None:  # it failed after it was sent: run it here
                fetched.text = text_rows_fetch(text)
            else:
                fetched.text, fetched.text_on_side = search_sql.text_split(rows), True
    finally:
        for sent in (beside, on_side):
            if sent is not None:
                sent.close()
    return fetched


def vector_rows_fetch(statement: tuple[str, dict], k: int) -> list[dict]:
    """Run a `vector_statement` with its HNSW settings on this thread's connection."""
    return _pipelined([search_sql.hnsw_settings(k), statement])[-1]


def text_rows_fetch(statement: tuple[str, dict]) -> tuple[list[dict], list[dict]]:
    """Run a `text_statement` on this thread's connection."""
    with tracing.statements_span([statement[0]]) as span, search_sql.search_cursor() as cursor:
        cursor.execute(*statement)
        rows = cursor.fetchall()
        tracing.statement_rows(span, len(rows))
        return search_sql.text_split(rows)


def _main_fetch(
    lexical: str, vector: list[tuple[str, dict]], k: int, lists: int, text: tuple | None
) -> Fetched:
    statements = [(change_key_sql(), None), (QUERY_LEXEMES_SQL, [lexical])]
    if vector:
        statements += [search_sql.hnsw_settings(k), *vector]
    if text is not None:
        statements.append(text)
    results = _pipelined(statements)
    (change_key,), (lexemes,) = results[0], results[1]
    vector_rows = [row for rows in results[3 : 3 + len(vector)] for row in rows]
    return Fetched(
        change_key=tuple(change_key.values()),
        lexemes=list(lexemes["array"]),
        vector=search_sql.vector_split(vector_rows, lists),
        text=search_sql.text_split(results[-1]) if text is not None else None,
    )


def _vector_joined(here: list[list[dict]], beside: list[list[dict]]) -> list[list[dict]]:
    """Each list from whichever statement ran it (the other's is empty)."""
    return [mine or theirs for mine, theirs in zip(here, beside, strict=True)]


def _pipelined(statements: list[tuple[str, Any]]) -> list[list[dict]]:
    """Each statement's rows, all sent in one pipeline on this thread's connection."""
    connection.ensure_connection()
    raw = connection.connection
    # Only statements that bind the vector need its binary adapter (registering costs ~0.1 ms).
    cursors = [
        search_sql.search_cursor(raw)
        if isinstance(params, dict) and "vector" in params
        else psycopg.Cursor(raw, row_factory=dict_row)
        for _, params in statements
    ]
    try:
        with tracing.statements_span([sql for sql, _ in statements]) as span, raw.pipeline():
            for cursor, (sql, params) in zip(cursors, statements, strict=True):
                cursor.execute(sql, params)
            results = [cursor.fetchall() for cursor in cursors]
            tracing.statement_rows(span, sum(len(rows) for rows in results))
    finally:
        for cursor in cursors:
            cursor.close()
    return results


class _SideStatement:
    """Statements sent together on a side connection (one implicit transaction, so a
    `SET LOCAL` holds for those after it), to be read later; `rows()` gives the last one's,
    None on failure."""

    def __init__(self, statements: list[tuple[str, Any]]) -> None:
        self.failed = True
        self._span: Any = None
        self._side = parallel.take()
        if self._side is None:
            return
        # From sending to reading: beside the main round trip's span, it shows which part of
        # the search the time went to.
        self._span = tracing.statement_span_start([sql for sql, _ in statements])
        tracing.span_note(self._span, **{"docent.db.side_connection": True})
        try:
            # A side connection's cursors all carry the vector adapters (blog.parallel).
            self._cursors = [search_sql.search_cursor(self._side) for _ in statements]
            self._pipeline = self._side.pipeline()
            self._pipeline.__enter__()  # sent now; the rows are read in rows()
            for cursor, statement in zip(self._cursors, statements, strict=True):
                cursor.execute(*statement)
            self.failed = False
        except psycopg.Error as exc:
            self._span_end(type(exc).__qualname__)
            self.close()

    def rows(self) -> list[dict] | None:
        if self.failed:
            return None
        try:
            rows = [cursor.fetchall() for cursor in self._cursors][-1]
            self._pipeline.__exit__(None, None, None)
        except psycopg.Error as exc:
            self._span_end(type(exc).__qualname__)
            self.close()
            return None
        tracing.statement_rows(self._span, len(rows))
        self._span_end()
        parallel.give_back(self._side)
        self._side = None
        return rows

    def close(self) -> None:
        """Drop the connection unless rows() handed it back (an error, or never read)."""
        self.failed = True
        self._span_end("not_read")  # failed when sent, or the search raised before reading it
        if self._side is not None:
            parallel.discard(self._side)
            self._side = None

    def _span_end(self, error_type: str = "") -> None:
        if self._span is None:
            return
        if error_type:
            tracing.span_failed(self._span, error_type)
        self._span.end()
        self._span = None
