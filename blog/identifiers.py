"""Names written with underscores: "ef_search", "AGENT_TOOL_TIMEOUT", "pg_trgm".

PostgreSQL's parser splits such a name at its underscores, so "What's a good value for
ef_search?" asked the coverage about "ef" and "search", and the fusion article (which writes
"search" on every line and never "ef_search") covered it better than the pgvector article that
tunes it: the fusion article was the answer, "The articles I found don't mention ef_search".
A part of a name counts for an article only where the article writes the name itself.
"""

from __future__ import annotations

import re

from blog.spelling import stem

_NAME = re.compile(r"(?<![\w.])[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+(?![\w])")
_WORD = re.compile(r"[a-z0-9]+")
MAX_NAMES = 4  # a question names a few; more is pasted code


def name_parts(question: str, lexemes: list[str]) -> dict[str, frozenset[str]]:
    """Each underscored name of the question (lower case) with the query lexemes only its parts
    give: a part the question also says on its own ("search with ef_search") is left alone."""
    names = list(dict.fromkeys(name.lower() for name in _NAME.findall(question)))[:MAX_NAMES]
    if not names:
        return {}
    said = {stem(word) for word in _WORD.findall(_NAME.sub(" ", question).lower())}
    parts = {}
    for name in names:
        own = {stem(part) for part in name.split("_") if part} & set(lexemes)
        if own - said:
            parts[name] = frozenset(own - said)
    return parts


def written_parts(
    matched: set[str], texts: list[str], names: dict[str, frozenset[str]]
) -> set[str]:
    """`matched` (an article's lexemes among the query's) less the parts of each name its texts
    never write whole."""
    if not names:
        return matched
    text = "\n".join(texts).lower()
    unwritten = [parts for name, parts in names.items() if name not in text]
    return matched.difference(*unwritten) if unwritten else matched
