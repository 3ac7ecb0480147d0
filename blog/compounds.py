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
# Another form of a compound the blog writes: its last part at least this long, and at most
# this many letters more ("emb" + "ed", "optim" + "ize"); a shorter part matches too much.
MIN_TAIL = 3
MAX_ENDING = 4
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
    unknown = [(compound, lexeme) for compound, lexeme, written in rows if lexeme and not written]
    unknown = [(compound, lexeme) for compound, lexeme in unknown if lexeme not in frequency]
    if not unknown:
        return {}
    # The vocabulary's own compounds, listed only when a question's compound is new to it.
    hyphenated = [known for known in frequency if "-" in known]
    return {
        lexeme: [compound] for compound, lexeme in unknown if not _inflected(lexeme, hyphenated)
    }


def _inflected(lexeme: str, hyphenated: list[str]) -> bool:
    """Whether the blog writes the compound in another form: the stemmer cuts a verb deeper
    than its -ing noun ("re-embed" is `re-emb`, the blog's "re-embedding" `re-embed`), so
    "Do I have to re-embed everything?" counted a word the blog writes as unknown. A form
    that extends the compound's last part by a few letters is the same word."""
    tail = lexeme.rpartition("-")[2]
    if len(tail) < MIN_TAIL:
        return False
    return any(
        known.startswith(lexeme) and len(known) - len(lexeme) <= MAX_ENDING for known in hyphenated
    )


@cache
def _written_sql() -> str:
    return _WRITTEN_SQL.format(visible=visible_chunks_sql())
