"""A question's words in the blog's other language, so a quote can answer across languages.

A Chinese question shares no word with an English article however well the article answers
it ("工具调用失败了，循环会怎么办？" and "When a tool call fails, the loop…"), so the offline
model could only quote such an article blind (the passage the search chose) or fall back to a
weaker article in the question's own language that happens to share "失败" and "怎么办". The
blog's glossary (blog/glossary.txt) names each technical idea in both languages: its other
side, spelled as `terms` spells words, lets a fact in the other language share words with the
question and be picked on its merits.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache, lru_cache
from types import MappingProxyType

from agent.llm.offline_text import language, terms
from blog.glossary_file import glossary_pairs


@cache
def _entries() -> tuple[tuple[frozenset[str], tuple[str, ...], frozenset[str]], ...]:
    """Each glossary line as (English terms, Chinese strings, Chinese terms).

    A line with an English word `terms` reads as no topic ("time out", "by hand") is left out:
    its other words alone ("time") do not name its idea.
    """
    entries = []
    for english, chinese in glossary_pairs():
        english_terms = frozenset(terms(" ".join(english)))
        chinese_terms = frozenset(t for term in chinese for t in terms(term))
        if all(terms(word) for word in english) and chinese_terms:
            entries.append((english_terms, chinese, chinese_terms))
    return tuple(entries)


# An answer asks several times (the weights, the pick, the match across languages); bounded, as
# every question a visitor types is a key.
@lru_cache(maxsize=1024)
def translations(question: str) -> Mapping[str, tuple[str, ...]]:
    """Each term of the question's glossary words as the other language writes them, with the
    question's words it translates: "上限" gives "cap", "limit" and "maximum", each from one
    word of the question; "chatbot" gives four Chinese bigrams, all from one word too, and
    "step limit" gives "步数", "上限"… from two."""
    if language(question) == "zh":
        return MappingProxyType(_from_chinese(question))
    asked = terms(question)
    found: dict[str, tuple[str, ...]] = {}
    for english, _, chinese in _entries():
        if english <= asked:
            found.update(dict.fromkeys(chinese - found.keys(), tuple(sorted(english))))
    return MappingProxyType(found)


def translated_terms(question: str) -> frozenset[str]:
    """The terms of the question's glossary words as the other language writes them."""
    return frozenset(translations(question))


def _from_chinese(question: str) -> dict[str, tuple[str, ...]]:
    """For each Chinese term the question holds, the entries that say the least in English:
    "循环" alone is "loop", not also "agent loop" (whose line lists it as a short form)."""
    fewest: dict[str, list[frozenset[str]]] = {}
    for english, chinese, _ in _entries():
        for term in chinese:
            if term not in question:
                continue
            known = fewest.setdefault(term, [english])
            if len(english) < len(known[0]):
                fewest[term] = [english]
            elif len(english) == len(known[0]) and english not in known:
                known.append(english)
    return {word: (term,) for term, found in fewest.items() for e in found for word in e}


def question_terms(question: str) -> set[str]:
    """The question's own terms and their translations."""
    return terms(question) | translated_terms(question)
