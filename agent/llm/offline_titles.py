"""Whether an article's title names a subject, in either language.

"什么是步数限制？" asks what the step limit is; the article about it is titled "Why step limits
matter". Its title names the subject only through the glossary ("step", "limit"), and "what is
X?" of an article titled after X opens with its summary's claims (offline_answer), so the
glossary must count as naming too.

The thirty-fourth pass also read a question alone from the hit whose title named all of its
glossary terms when the top hit's did not: measured, it lost one right answer on the test
halves (a generic term, "answers", named "Prompts for grounded answers"), and it was taken out
(docs/answer-quality.md, "Thirty-fourth pass").
"""

from __future__ import annotations

from agent.llm.offline_bridge import translations
from agent.llm.offline_text import terms


def title_names(subject: str, title: str) -> bool:
    """Whether a title names, in the other language too, every glossary term of a subject:
    "Why step limits matter" names 步数限制 ("step" and "limit")."""
    found = translations(subject)
    return bool(found) and _names_all(title, _widest(set(found.values())), found)


def _widest(ideas: set[tuple[str, ...]]) -> set[tuple[str, ...]]:
    """The ideas not inside a wider one: 混合检索 ("hybrid search") holds 检索 ("retrieval"),
    and a title that names hybrid search need not say "retrieval" too."""
    return {idea for idea in ideas if not any(_inside(idea, wider) for wider in ideas - {idea})}


def _inside(idea: tuple[str, ...], wider: tuple[str, ...]) -> bool:
    if all(word.isascii() for word in idea + wider):
        return set(idea) < set(wider)
    return "".join(idea) in "".join(wider)


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
