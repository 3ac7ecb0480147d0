"""Hyphenated names the blog never writes: "cross-encoder", "multi-tenant", "k-means".

The search terms split a question's words at hyphens, so "Is RRF better than a cross-encoder?"
asks, to the relevance, about "cross" and "encoder", two words the blog uses (in
"cross-language" and "the encoder"), and an article that never mentions cross-encoders passes
the bar. Such a compound names one thing. When the blog writes it in no form (hyphenated,
as two words in a row, or run together), it is a term the blog does not know, weighed like
any other (blog.relevance.weighted_terms); when the blog does write it, its parts already
carry it and nothing is added.
"""

from __future__ import annotations

import re
from functools import cache

from django.db import connection

from blog.relevance import visible_chunks_sql

_COMPOUND = re.compile(r"(?<![\w-])[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)+(?![\w-])")
MAX_COMPOUNDS = 4  # a question names a few; more is a pasted list, and each costs a lookup
# The compound's lexeme as the index stems it (the hyphenated token's own lexeme), and
# whether a visible chunk holds its parts as a phrase or its parts run together. Visible only,
# like the vocabulary: a post scheduled for later must not answer "does the blog write X?".
_WRITTEN_SQL = """
SELECT t.compound,
       (SELECT lexeme FROM unnest(to_tsvector('english', t.compound)) WHERE lexeme LIKE '%%-%%'
        ORDER BY length(lexeme) DESC LIMIT 1),
       EXISTS (SELECT 1 {visible}
                 AND (search_vector @@ phraseto_tsquery('english', replace(t.compound, '-', ' '))
                      OR search_vector @@ plainto_tsquery('english', replace(t.compound, '-', ''))))
FROM unnest(%s::text[]) AS t(compound)
"""


def compounds(question: str) -> list[str]:
    """The question's hyphenated words, lower case, at most MAX_COMPOUNDS."""
    found = dict.fromkeys(match.lower() for match in _COMPOUND.findall(question))
    return list(found)[:MAX_COMPOUNDS]


def unknown_compounds(question: str, frequency: dict[str, int]) -> dict[str, list[str]]:
    """Each compound the blog writes in no form, as its lexeme, with the word it spells.

    One statement, and only for a question that has a hyphenated word.
    """
    found = compounds(question)
    if not found:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(_written_sql(), [found])
        rows = cursor.fetchall()
    return {
        lexeme: [compound]
        for compound, lexeme, written in rows
        if lexeme and lexeme not in frequency and not written
    }


@cache
def _written_sql() -> str:
    return _WRITTEN_SQL.format(visible=visible_chunks_sql())
