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

from functools import cache

from agent.llm.offline_text import language, terms
from blog.glossary_file import glossary_pairs


@cache
def _entries() -> tuple[tuple[frozenset[str], tuple[str, ...], frozenset[str]], ...]:
    """Each glossary line as (English terms, Chinese strings, Chinese terms)."""
    entries = []
    for english, chinese in glossary_pairs():
        english_terms = frozenset(terms(" ".join(english)))
        chinese_terms = frozenset(t for term in chinese for t in terms(term))
        if english_terms and chinese_terms:
            entries.append((english_terms, chinese, chinese_terms))
    return tuple(entries)


def translated_terms(question: str) -> frozenset[str]:
    """The terms of the question's glossary words as the other language writes them."""
    if language(question) == "zh":
        return _from_chinese(question)
    asked = terms(question)
    return frozenset().union(*(zh for en, _, zh in _entries() if en <= asked))


def _from_chinese(question: str) -> frozenset[str]:
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
    return frozenset().union(*(e for found in fewest.values() for e in found))


def question_terms(question: str) -> set[str]:
    """The question's own terms and their translations."""
    return terms(question) | translated_terms(question)
