"""The second article of a two-part answer ("X and Y", "分别", two questions in one).

A question in two parts may need two articles, one for each part, and a wrong second article
costs more than a missing one: it puts a link under the answer that does not answer it. So a
second article must be nearly as relevant as the first by the search's own calibrated measure,
and then either:

- it mentions a name the question asks about (“E5”, “HNSW”, "asyncio.shield") that the first
  article never mentions: a name is spelled alike in both languages, so it points at the
  article for the other part even when that article is written in the other language and
  shares no other word with the question; or
- it is the best-ranked such article with a strong fact sharing two of the question's words.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent.llm.offline_names import mentions, named_terms

TWO_PART_FLOOR = 0.2  # the second article's best fact against the first's, in question words
# A second article's relevance against the first's. The articles that answer a two-part
# question both match it; a runner-up well below the first is a loosely related article (on
# the tuning halves the right second articles sat at 0.93-0.99 of the first, the wrong ones at
# 0.66-0.84, and every share from 0.85 to 0.92 kept the same ones).
SECOND_SHARE = 0.88


@dataclass(frozen=True)
class Second:
    """Which read article (its index, 0 for none) joins the answer, and for which names."""

    article: int = 0
    names: tuple[str, ...] = ()


def second_article(
    *,
    question: str,
    sources: list[dict],
    facts: list[tuple[int, set[str]]],
    asked: set[str],
    wanted: dict[str, float],
) -> Second:
    """The article that answers a two-part question's other part, if one does.

    `facts` pairs each fact's article index with the question terms it shares. Returns
    Second() when no article is close enough to the first, or none says enough.
    """
    close = [n for n in range(1, len(sources)) if _close(sources, n)]
    named = _naming(question, sources, close)
    if named.article:
        return named
    strength: dict[int, float] = {}
    for n, shared in facts:
        if n == 0 or (n in close and len(shared & asked) >= 2):
            strength[n] = max(strength.get(n, 0.0), sum(wanted[t] for t in shared))
    first = strength.get(0, 0.0)
    strong = sorted(n for n in strength if n != 0 and strength[n] >= TWO_PART_FLOOR * first)
    return Second(strong[0]) if strong else Second()


def names_it(text: str, names: tuple[str, ...]) -> bool:
    """Whether a fact's text mentions one of the names its article was chosen for."""
    lowered = text.lower()
    return any(mentions(lowered, name) for name in names)


def _naming(question: str, sources: list[dict], close: list[int]) -> Second:
    """The first close article mentioning a name of the question that the first one lacks."""
    if not sources:
        return Second()
    first = _text(sources[0])
    absent = [name for name in named_terms(question) if not mentions(first, name)]
    for n in close:
        text = _text(sources[n])
        found = tuple(name for name in absent if mentions(text, name))
        if found:
            return Second(n, found)
    return Second()


def _close(sources: list[dict], n: int) -> bool:
    """Whether article n is nearly as relevant as the first (True when either is unknown)."""
    top, this = sources[0].get("relevance"), sources[n].get("relevance")
    if not isinstance(top, int | float) or not isinstance(this, int | float):
        return True
    return this >= SECOND_SHARE * top


def _text(source: dict) -> str:
    return f"{source.get('title', '')} {source.get('summary', '')} {source.get('body', '')}".lower()
