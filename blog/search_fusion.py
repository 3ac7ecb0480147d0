"""Fusing the candidate lists into articles, each with the evidence for its relevance.

Reciprocal-rank fusion per article, divided by the number of lists that could have found it
(Chinese full text cannot find an English article). Each article found gets its evidence
(best similarity, coverage of the question, known share, margin over the next article in
its language), and blog.relevance turns that into the calibrated relevance that orders hits.
"""

from dataclasses import dataclass, field

from django.conf import settings

from blog.glossary import Bridge, bridged_coverage
from blog.identifiers import written_parts
from blog.relevance import Evidence, coverage, relevance


@dataclass
class _Query:
    """A query's vector and weighted lexemes, shared by every candidate list."""

    text: str
    language: str
    vector: list[float]
    weights: dict[str, float]
    known: float
    known_across: float  # `known`, counting terms the blog writes in the other language
    languages: tuple[str, ...]
    bridges: list[Bridge]  # the question's terms in the other language (blog.glossary)
    # Underscored names and the lexemes only their parts give (blog.identifiers).
    names: dict[str, frozenset[str]] = field(default_factory=dict)


_Ranked = tuple[list[dict], frozenset[str] | None]  # rows, and the languages the list can see


def _fuse(lists: list[_Ranked], prepared: _Query, window: int) -> list["_Candidate"]:
    """Reciprocal-rank fusion per article; the excerpt is its chunk with the best fused score.

    An article's RRF sum is divided by the number of lists that could have found it, so an
    English article is not behind for a Chinese question only because Chinese full text
    cannot match it (ties go to the larger sum). Every article found gets its evidence: the
    best similarity among its chunks in any list, and the coverage of the query by the
    lexemes those chunks hold, read from the first `window` rows of each list (see
    EVIDENCE_LIMIT); an article found only further down gets it from all its rows.
    """
    rrf_k = settings.SEARCH_RRF_K
    article_score: dict[int, float] = {}
    chunk_score: dict[int, float] = {}
    rows: dict[int, dict] = {}
    early: set[int] = set()  # chunk ids within the evidence window of some list
    for ranked, _ in lists:
        for rank, row in enumerate(_per_article(ranked), start=1):
            article_score[row["article_id"]] = article_score.get(row["article_id"], 0.0) + 1 / (
                rrf_k + rank
            )
        for rank, row in enumerate(ranked, start=1):
            chunk_score[row["id"]] = chunk_score.get(row["id"], 0.0) + 1 / (rrf_k + rank)
            rows[row["id"]] = row
            if rank <= window:
                early.add(row["id"])
    best: dict[int, dict] = {}
    for chunk_id, row in rows.items():
        current = best.get(row["article_id"])
        if current is None or chunk_score[chunk_id] > chunk_score[current["id"]]:
            best[row["article_id"]] = row
    seen = _Seen.of([row for chunk_id, row in rows.items() if chunk_id in early])
    later = _Seen.of([row for row in rows.values() if row["article_id"] not in seen.similarity])
    similarity = {**later.similarity, **seen.similarity}
    matched, chunks = {**later.matched, **seen.matched}, {**later.rows, **seen.rows}
    alpha = settings.SEARCH_FUSION_ALPHA
    eligible = _Eligible(lists)
    fused = {
        article_id: total / eligible.count(article_id, best[article_id]["language"]) ** alpha
        for article_id, total in article_score.items()
    }
    order = sorted(article_score, key=lambda a: (-fused[a], -article_score[a], a))
    margins = _margins(similarity, {a: best[a]["language"] for a in best})
    candidates = []
    for article_id in order:
        cross = bool(best[article_id]["language"]) and (
            best[article_id]["language"] != prepared.language
        )
        evidence = Evidence(
            similarity=similarity[article_id],
            coverage=_coverage(prepared, matched[article_id], chunks[article_id], cross=cross),
            known=prepared.known_across if cross else prepared.known,
            cross=cross,
            margin=margins[article_id],
            question_language=prepared.language,
        )
        candidates.append(
            _Candidate(best[article_id], fused[article_id], evidence, relevance(evidence))
        )
    return candidates


@dataclass
class _Seen:
    """Per article, what a set of its chunk rows shows: best similarity, lexemes, the rows."""

    similarity: dict[int, float]
    matched: dict[int, set[str]]
    rows: dict[int, list[dict]]

    @classmethod
    def of(cls, rows: list[dict]) -> "_Seen":
        seen = cls({}, {}, {})
        for row in rows:
            article_id = row["article_id"]
            seen.similarity[article_id] = max(
                seen.similarity.get(article_id, -1.0), 1.0 - row["distance"]
            )
            seen.matched.setdefault(article_id, set()).update(row["matched"])
            seen.rows.setdefault(article_id, []).append(row)
        return seen


def _texts(rows: list[dict]) -> list[str]:
    # The title and headings are indexed with the text (blog.chunking.embedding_text), so a
    # same-language question matches them; a translation must be able to as well.
    return [f"{row['article__title']}\n{row['heading_path']}\n{row['text']}" for row in rows]


def _coverage(prepared: _Query, matched: set[str], rows: list[dict], *, cross: bool) -> float:
    """The query's share an article holds; in the other language, through the glossary too.
    A part of an underscored name counts only where the name is written (blog.identifiers).

    The texts are joined only when a name or a bridge reads them (most questions have
    neither: about 120 candidates' texts a search, for nothing)."""
    if prepared.names:
        matched = written_parts(matched, _texts(rows), prepared.names)
    if cross:
        text = "\n".join(_texts(rows)) if prepared.bridges else ""
        return bridged_coverage(prepared.weights, matched, prepared.bridges, text)
    return coverage(prepared.weights, matched)


def _margins(similarity: dict[int, float], language: dict[int, str]) -> dict[int, float]:
    """Each article's similarity lead over the next candidate in its language (0 if behind)."""
    top_two: dict[str, list[float]] = {}
    for article_id, value in similarity.items():
        best = top_two.setdefault(language[article_id], [])
        best[:] = sorted([*best, value], reverse=True)[:2]
    margins = {}
    for article_id, value in similarity.items():
        best = top_two[language[article_id]]
        runner_up = best[1] if len(best) > 1 else value
        margins[article_id] = value - runner_up if value >= best[0] else 0.0
    return margins


class _Eligible:
    """How many of the lists could have found an article (by its language), or did."""

    def __init__(self, lists: list[_Ranked]) -> None:
        self._lists = [(sees, {row["article_id"] for row in rows}) for rows, sees in lists]
        self._seeing: dict[str, int] = {}  # lists that see a language, per language

    def count(self, article_id: int, language: str) -> int:
        # A language of "" (indexed before languages were recorded) is visible to every list.
        if not language:
            return len(self._lists)
        seeing = self._seeing.get(language)
        if seeing is None:
            seeing = self._seeing[language] = sum(
                1 for sees, _ in self._lists if sees is None or language in sees
            )
        # and the lists that found it though they could not see its language
        return seeing + sum(
            1
            for sees, ids in self._lists
            if sees is not None and language not in sees and article_id in ids
        )


def _per_article(rows: list[dict]) -> list[dict]:
    """The best-ranked chunk of each article, in rank order."""
    seen: dict[int, dict] = {}
    for row in rows:
        seen.setdefault(row["article_id"], row)
    return list(seen.values())


@dataclass(frozen=True)
class _Candidate:
    row: dict  # the article's best chunk
    score: float
    evidence: Evidence
    relevance: float
