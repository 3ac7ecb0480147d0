"""The query's words marked in a search page's passage, so a reader sees why it matched.

Plain text in, segments out: the template escapes each segment and wraps the matched ones in
`<mark>`, so nothing a query or a passage holds is ever read as markup. A word of the query
marks the passage's words that begin with it ("index" marks "indexes"), case aside; a Chinese
query marks its two-character runs, as the index reads Chinese.
"""

import re

PASSAGE_CHARS = 280  # what a card shows of a passage
MAX_TERMS = 20  # a query names a few things; a pasted paragraph marks its first twenty

_LATIN = re.compile(r"[^\W_]{2,}", re.ASCII)
_HAN_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]{2,}")
# Words every question uses; marked, they would light up every passage.
_COMMON = frozenset(
    "the and for are how what why does with from that this into can its was were you your "
    "use using when where which who whom not but about than then there their they have has "
    "had will would should could also just any all some do is it an to of in on or by at be "
    "as if my me we us so no up i a".split()
)


def query_terms(query: str) -> list[str]:
    """The query's words worth marking, longest first (so "indexes" wins over "index")."""
    latin = [w.lower() for w in _LATIN.findall(query) if w.lower() not in _COMMON]
    han = [run[i : i + 2] for run in _HAN_RUN.findall(query) for i in range(len(run) - 1)]
    unique = list(dict.fromkeys([*latin, *han]))[:MAX_TERMS]
    return sorted(unique, key=len, reverse=True)


def marked_passage(passage: str, query: str) -> list[tuple[str, bool]]:
    """`passage` cut to what a card shows, as (text, matched) segments in order."""
    shown = passage if len(passage) <= PASSAGE_CHARS else passage[: PASSAGE_CHARS - 1] + "…"
    terms = query_terms(query)
    if not terms:
        return [(shown, False)]
    pattern = re.compile("|".join(map(_term_pattern, terms)), re.IGNORECASE)
    segments, start = [], 0
    for match in pattern.finditer(shown):
        if match.start() > start:
            segments.append((shown[start : match.start()], False))
        segments.append((match.group(), True))
        start = match.end()
    if start < len(shown):
        segments.append((shown[start:], False))
    return segments


def _term_pattern(term: str) -> str:
    """A Chinese pair as written; a Latin word where a word starts, to that word's end. Han
    characters on either side are no word of it ("使用pgvector建索引" marks "pgvector")."""
    if not term.isascii():
        return re.escape(term)
    return rf"(?<![A-Za-z0-9]){re.escape(term)}[A-Za-z0-9]*"
