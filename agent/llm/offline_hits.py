"""Which search hits the offline model reads, and which article answers each part.

The top hit is read, and lower hits nearly as relevant or covering other words of the
question (at most MAX_READ). A question asked in two is searched per part too: each part's
own best article is read, since searched whole the hits fill up with the article answering
the part with more (or rarer) words.
"""

from __future__ import annotations

from typing import Any

from agent.llm.offline_bridge import question_terms
from agent.llm.offline_compare import comparison_parts
from agent.llm.offline_parts import question_parts
from agent.llm.offline_summary_request import titled_first
from agent.llm.offline_text import terms

MAX_READ = 3  # articles read in full per question

# A lower hit is read too when its relevance is at least this share of the top hit's.
SECOND_HIT_SHARE = 0.75
# Hits this close to a part's first hit tie with it: the search's order cannot tell them apart.
PART_TIE = 0.05


def with_part_tops(chosen: list[dict], parts: list[list[dict]]) -> list[dict]:
    """The articles to read: the question's top hit, then each part's top hit, then the rest.

    Searched whole, a two-part question's hits fill up with the article answering the part
    with more (or rarer) words; each part's own best article is what answers the other.
    """
    ids = {hit["article_id"] for hit in chosen[:1]}
    tops = []
    for hits in parts:
        if hits and hits[0]["article_id"] not in ids:
            tops.append(hits[0])
            ids.add(hits[0]["article_id"])
    rest = [hit for hit in chosen[1:] if hit["article_id"] not in ids]
    return [*chosen[:1], *tops, *rest][:MAX_READ]


def titled_part_tops(question: str, parts: list[list[dict]]) -> list[list[dict]]:
    """Each part's hits, a tie for its first place going to the article whose title names more
    of the part's words, in either language (through the glossary).

    "For Chinese posts, how does Docent split the text for keyword search" put the embeddings
    primer first (0.95) by a hair over the Chinese full-text article (0.94), whose title names
    "中文" and "检索": the part was answered from the primer, a wrong citation beside the right
    one. Only the parts' own searches (they come first after the whole question's) are
    reordered; a title that names no more of the part's words leaves the search's order.
    """
    texts = question_parts(question[:500]) if parts else []
    return [_titled_tie(texts[n], hits) if n < len(texts) else hits for n, hits in enumerate(parts)]


def _titled_tie(part: str, hits: list[dict]) -> list[dict]:
    top = _relevance(hits[0]) if hits else None
    if top is None:
        return hits
    tied = [hit for hit in hits if top - (_relevance(hit) or 0.0) <= PART_TIE]
    wanted = question_terms(part)

    def named(hit: dict) -> int:
        return len(wanted & terms(str(hit.get("title", ""))))

    best = max(tied, key=named)  # the first of equals: the search's order
    if named(best) <= named(hits[0]):
        return hits
    return [best, *(hit for hit in hits if hit is not best)]


def answered_parts(
    question: str, chosen: list[dict], parts: list[list[dict]]
) -> list[tuple[str, int]]:
    """Each part of a two-part question with the article (its index in `chosen`) its own
    search ranked first, when every part has an article of its own; [] otherwise (the whole
    question's answer serves both)."""
    texts = question_parts(question[:500]) if parts else []
    ids = [hit["article_id"] for hit in chosen]
    tops = [hits[0]["article_id"] if hits else None for hits in parts]
    if len(texts) != len(tops) or len(set(tops)) < len(tops) or not set(tops) <= set(ids):
        return []
    return [(text, ids.index(top)) for text, top in zip(texts, tops, strict=True)]


def compared_in_one(question: str, hits: list[dict]) -> bool:
    """Whether a comparison's top hit names both its subjects: one article weighs them, and it
    answers whole. Searched alone, a short subject matched a stray word elsewhere: "Memory-only
    model" put the persistence article first (0.90, its "内存"), over the article whose table
    sets it beside the tool-driven agent."""
    parts = comparison_parts(question[:500]) if hits else []
    if len(parts) != 2:
        return False
    # The comparing words stay a subject's: left out, "…: how do they differ in what they
    # stop?" counted "cap on model calls" named by the step-limits article alone.
    first, second = (terms(part) for part in parts)
    named = terms(_hit_text(hits[0]))
    return all(_named(own, named) for own in (first - second, second - first) if own)


def _named(own: set[str], named: set[str]) -> bool:
    """A subject of one or two words is named when all are ("step limits": the budget article's
    "limit" alone is not it); a longer one when at least half are."""
    found = len(own & named)
    return found == len(own) if len(own) <= 2 else found * 2 >= len(own)


def subject_top(subject: str, hits: list[dict]) -> dict:
    """The best hit for a subject searched alone, or a nearly as relevant one titled after it.

    A short subject is matched nearly alike by every article that mentions it ("the step
    limit": the audit article 0.95, "Why step limits matter" 0.95); the article named after
    it is about it.
    """
    top = _relevance(hits[0]) or 0.0
    close = [hit for hit in hits if (_relevance(hit) or 0.0) >= SECOND_HIT_SHARE * top]
    return titled_first(subject, close)[0]


def _hit_list(output: Any) -> list[dict]:
    return output if isinstance(output, list) else []


def choose_hits(question: str, hits: list[dict]) -> list[dict]:
    """The top hit, plus lower hits that are nearly as relevant or cover other question words."""
    if not hits:
        return []
    chosen, top = [hits[0]], _relevance(hits[0])
    wanted = terms(question)
    covered = wanted & terms(_hit_text(hits[0]))
    for hit in hits[1:]:
        if len(chosen) == MAX_READ:
            break
        relevance, new = _relevance(hit), (wanted & terms(_hit_text(hit))) - covered
        close = relevance is not None and top and relevance >= SECOND_HIT_SHARE * top
        if close or len(new) >= 2:
            chosen.append(hit)
            covered |= new
    return chosen


def _relevance(hit: dict) -> float | None:
    value = hit.get("relevance")
    return float(value) if isinstance(value, int | float) else None


def _hit_text(hit: dict) -> str:
    return f"{hit.get('title', '')} {hit.get('heading', '')} {hit.get('excerpt', '')}"


def _relevant(question: str, hits: list[dict]) -> bool:
    """Hits that carry a calibrated relevance already cleared the search's bar.

    Without one (an older search), a hit counts only when it shares a word with the question.
    """
    if not hits:
        return False
    if _relevance(hits[0]) is not None:
        return True
    return bool(terms(question) & terms(_hit_text(hits[0])))


def _failed(output: Any) -> bool:
    """A tool result the loop wrote for a failed call (its messages start "Error:")."""
    return isinstance(output, str) and output.startswith("Error:")
