"""A question as the search read it: each typo it corrected put in the word meant.

The search corrects a typo in its full-text terms (blog.spelling), and says so on each hit
(`read_as`: {"pgvecter": "pgvector"}): the audited tool call shows what was searched for,
and whoever reads the hits can read the question the same way. A check that a question's
words appear in the articles (the blog's rare words, the names an answer must mention) then
looks for "pgvector", not for a word no article writes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from blog.spelling import MIN_CHUNKS

# A word of letters, alone or a part of a snake_case name ("database_sync_to_asnyc": the
# search reads its parts as words); not a part of a hyphenated word or of a word with digits.
_WORD = re.compile(r"(?<![A-Za-z0-9-])[A-Za-z]+(?![A-Za-z0-9-])")


def spelling_words(frequency: Mapping[str, int]) -> Mapping[str, int]:
    """The words a typo may be read as: the blog's lexemes (`frequency`, chunks per lexeme),
    and the glossary's English words, which the blog writes in Chinese ("segmentation" is
    分词 there): "segmentaton" is a slip of a word the blog covers."""
    # Imported here: the offline model reads `respelled` inside the framework-free agent
    # loop, and the glossary module imports Django (tests/agent/test_import_purity.py).
    from blog.glossary import glossary

    global _merged
    last = _merged  # one read: another thread may replace it meanwhile
    if last[0] is not frequency:
        # Built once per vocabulary: a ChainMap looked up through both doubled the cost.
        last = _merged = (frequency, {**dict.fromkeys(glossary.english_lexemes(), MIN_CHUNKS),
                                      **frequency})  # fmt: skip
    return last[1]


# The vocabulary the merged words were built from (held, so its id is never reused), and them.
_merged: tuple[Mapping[str, int] | None, dict[str, int]] = (None, {})


def acronyms(query: str) -> frozenset[str]:
    """The query's words typed in capitals ("QUIC", "JSONB"), lower-cased: an acronym is typed
    on purpose, and one letter from a blog word is still another thing ("quick", "jsons")."""
    return frozenset(word.lower() for word in _CAPITALS.findall(query))


_CAPITALS = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2,}(?![A-Za-z0-9])")


def respelled(text: str, read_as: Mapping[str, str]) -> str:
    """`text` with each word `read_as` maps (by its lower case) written as the word meant.

    A stop word's slip ("teh", mapped to "") is left as typed: it says nothing either way.
    """
    if not read_as:
        return text

    def fix(match: re.Match[str]) -> str:
        return read_as.get(match.group().lower()) or match.group()

    return _WORD.sub(fix, text)
