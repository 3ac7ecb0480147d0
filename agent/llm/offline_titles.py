"""The article whose title names everything a question asks about, in either language.

A short question says little besides its subject, and the search weighs its few words
against every chunk: "How do text embeddings work?" found "text", "embedding" and "work" all
in the English pgvector article (coverage 1.0) and led with it, while the article titled
"文本嵌入入门" (a primer on text embeddings) stood third, its Chinese words covering the
question only through the glossary. "智能体循环的每一步做什么？" led with the Chinese
observability article (its "一步", "每一" matched) over "Anatomy of the agent loop". The
title is the author's own name for an article's subject: when one hit's title names each
glossary term of the question (in its own words or through their translations) and the top
hit's does not, the question is about that article.
"""

from __future__ import annotations

from agent.llm.offline_bridge import translations
from agent.llm.offline_text import terms


def title_named(question: str, hits: list[dict]) -> dict | None:
    """The hit whose title names every glossary term of the question, when the top hit's
    title does not and names fewer of the question's words; None otherwise (the hits already
    cleared the search's bar)."""
    found = translations(question)
    ideas = set(found.values())
    if not ideas or len(hits) < 2:
        return None
    named = [hit for hit in hits if _names_all(str(hit.get("title", "")), ideas, found)]
    if not named or named[0] is hits[0]:
        return None
    # A name with no glossary line counts too: "How does pgvector store embeddings?" names
    # "pgvector and HNSW indexes" as much as 文本嵌入入门.
    asked = terms(question)
    if len(_named_words(named[0], asked, found)) <= len(_named_words(hits[0], asked, found)):
        return None
    return named[0]


def _named_words(hit: dict, asked: set[str], found: dict) -> set[str]:
    """The question's terms a hit's title holds, as written or through a translation."""
    title_terms = terms(str(hit.get("title", "")))
    named = asked & title_terms
    for other, words in found.items():
        if other in title_terms:
            named |= asked & {term for word in words for term in terms(word)}
    return named


def title_names(subject: str, title: str) -> bool:
    """Whether a title names, in the other language too, every glossary term of a subject:
    "Why step limits matter" names 步数限制 ("step" and "limit")."""
    found = translations(subject)
    return bool(found) and _names_all(title, set(found.values()), found)


def _names_all(title: str, ideas: set[tuple[str, ...]], found: dict) -> bool:
    """Whether the title holds each idea: its question words, or one of its translations."""
    title_terms = terms(title)
    return all(
        _holds(title, title_terms, idea)
        or any(other in title_terms for other, of in found.items() if of == idea)
        for idea in ideas
    )


def _holds(title: str, title_terms: set[str], idea: tuple[str, ...]) -> bool:
    """A Chinese glossary word as written; English words as `terms` spells them."""
    if all(word.isascii() for word in idea):
        return set(idea) <= title_terms
    return all(word in title for word in idea)
