"""The second article of a two-part answer ("X and Y", "分别", two questions in one).

A question in two parts may need two articles, one for each part. The second one is:

- an article that mentions a name the question asks about (“E5”, "asyncio.shield") that the
  first article never mentions: a name is spelled alike in both languages, so it points at the
  article for the other part even when that article is written in the other language and
  shares no other word with the question; or else
- the best-ranked article with a strong fact sharing two of the question's words: the search's
  order judges the runner-up better than whichever article adds one more question word.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent.llm.offline_names import mentions, named_terms
from agent.llm.offline_text import article_text

TWO_PART_FLOOR = 0.2  # the second article's best fact against the first's, in question words


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
    Second() when no other article names what the first lacks or says enough.
    """
    named = _naming(question, sources)
    if named.article:
        return named
    strength: dict[int, float] = {}
    for n, shared in facts:
        if n == 0 or len(shared & asked) >= 2:
            strength[n] = max(strength.get(n, 0.0), sum(wanted[t] for t in shared))
    first = strength.get(0, 0.0)
    strong = sorted(n for n in strength if n != 0 and strength[n] >= TWO_PART_FLOOR * first)
    return Second(strong[0]) if strong else Second()


def names_it(text: str, names: tuple[str, ...]) -> bool:
    """Whether a fact's text mentions one of the names its article was chosen for."""
    lowered = text.lower()
    return any(mentions(lowered, name) for name in names)


def _naming(question: str, sources: list[dict]) -> Second:
    """The best-ranked other article mentioning a name of the question that the first lacks."""
    if not sources:
        return Second()
    first = _text(sources[0])
    absent = [name for name in named_terms(question) if not mentions(first, name)]
    for n in range(1, len(sources)):
        found = tuple(name for name in absent if mentions(_text(sources[n]), name))
        if found:
            return Second(n, found)
    return Second()


def _text(source: dict) -> str:
    return article_text(source).lower()
