"""Answers that explain a subject as a whole: "what is X?", "how does X work?", "why X?".

The article that says what X is goes first. A section the question names answers with its
opening; an article titled after X answers with its summary's claims and its first sentences
about X, each with the lead-in it needs. A "why" opens with the article's own reason, its
summary, when the summary is about the very thing asked.
"""

from __future__ import annotations

import re

from agent.llm.offline_definitions import defined_subject, defines, named, names
from agent.llm.offline_facts import _leans, _standalone
from agent.llm.offline_figures import asks_for_figure
from agent.llm.offline_pick import MAX_FACTS
from agent.llm.offline_text import Fact, plain, sentences, terms
from agent.llm.offline_titles import title_names

_WHY = re.compile(r"^\W*(why|how come)\b|为什么|为何|为啥", re.IGNORECASE)

EXPLANATION_FACTS = 3  # the opening of the section a "how does X work?" names
# Two subjects weighed against each other ("cancelled vs interrupted?", "the difference between
# X and Y"): no article titled after both explains the comparison with its summary.
_COMPARED = re.compile(
    r"\b(?:vs\.?|versus|differences? between|compared (?:to|with))(?=\s|$)|"
    r"区别|差别|差异|对比|相比",
    re.IGNORECASE,
)
TITLE_FACTS = 2  # the first sentences about X of an article titled after X


def _definition_first(
    question: str, read: list[tuple[dict, list[Fact]]]
) -> list[tuple[dict, list[Fact]]]:
    """For "what is X?", an article read that defines X goes first when the top one does not.

    `read` pairs each source with its facts. The articles read are all close to the top hit;
    of those, the one that says what X is answers the question, whichever language it is in.
    """
    subject = defined_subject(question)
    if not subject or not read:
        return read
    defining = [any(defines(fact.text, subject) for fact in facts) for _, facts in read]
    if defining[0] or not any(defining):
        return read
    n = defining.index(True)
    return [read[n], *read[:n], *read[n + 1 :]]


def _explanation(question: str, read: list[tuple[dict, list[Fact]]]) -> list[tuple[int, Fact]]:
    """For "what is X?" or "how does X work?", where an article explains X as a whole.

    A section the question names ("How HNSW works" for "How does HNSW work?") answers with its
    opening. Failing that, when no article read says "X is…", an article titled after X
    answers with its first sentences about X: "What is pgvector?" had quoted a Chinese
    article's aside that merely uses the word. [] when neither applies.
    """
    subject = defined_subject(question)
    if not subject or asks_for_figure(question):  # "what is the default X?" wants the figure
        return []
    for n, (_, facts) in enumerate(read):
        section = [
            fact for fact in facts if fact.section and names(fact.section, question, subject)
        ]
        if section:
            return [(n, fact) for fact in _standalone(section)[:EXPLANATION_FACTS]]
    if any(defines(fact.text, subject) for _, facts in read for fact in facts):
        return []  # _definition_first put that article first; the picking quotes it
    if _COMPARED.search(subject):
        # "cancelled vs interrupted?" quoted the cancellation article's opening, titled after
        # both through the glossary; the sentence weighing the two is what was asked.
        return []
    name = named(subject)  # "the RRF algorithm": an article titled after RRF
    for n, (source, facts) in enumerate(read):
        # The slug counts as the title: "hybrid-search-with-rrf" is titled after RRF.
        slug = str(source.get("url", "")).replace("-", " ")
        # Across languages through the glossary: "什么是步数限制？" of "Why step limits matter".
        title = str(source.get("title", ""))
        if terms(name) <= terms(f"{title} {slug}") or title_names(name, title):
            about = [f for f in facts if f.kind == "sentence" and name in f.text.lower()]
            return [(n, fact) for fact in _told(_summary_claims(source), about, facts)]
    return []


def _told(claims: list[Fact], about: list[Fact], facts: list[Fact]) -> list[Fact]:
    """The summary's claims, then the sentences about X, each with what it needs to be read
    alone: TITLE_FACTS in all, a sentence and its lead-in not parted."""
    told = list(claims[:TITLE_FACTS])
    for fact in about:
        if len(told) >= TITLE_FACTS:
            break
        told += [f for f in _with_lead_in(fact, facts) if f not in told]
    return told


# A sentence pointing back inside itself: "Django Channels adds that capability on top of
# ordinary Django, and this post covers the pieces we actually use." ("That" is as often a
# relative pronoun, "a connection that stays open", so it is not read as pointing back.)
_POINTS_BACK = re.compile(r"\b(?:this|these|those|such)\s+[a-z]+\b", re.IGNORECASE)
LEAD_IN = 2  # at most this many sentences before it in its paragraph come along
_OF_THE_ARTICLE = re.compile(r"(?:in )?this (?:post|article)\b|本文|本篇|这篇", re.IGNORECASE)


def _with_lead_in(fact: Fact, facts: list[Fact]) -> list[Fact]:
    """A sentence about X, after the sentences of its paragraph before it when it points back
    ("It also…", "…adds that capability, and this post covers…"); [] when it points back
    with nothing, or too much, before it in its paragraph."""
    if _OF_THE_ARTICLE.match(fact.text):
        return []  # "This post covers the parts of pgvector…" is about the post, not pgvector
    if not (_leans(fact) or _POINTS_BACK.search(fact.text[1:])):
        return [fact]
    before = [
        f for f in facts if f.kind == "sentence" and f.group == fact.group and f.order < fact.order
    ]
    return [*before, fact] if 0 < len(before) <= LEAD_IN else []


# A summary sentence that speaks of the article, not of its subject: "Includes a comparison
# with IVFFlat.", "A practical guide to…", "Storing embeddings in…", "本文介绍…".
_BLURB = re.compile(
    r"^(?:includes|here is|how|this (?:post|article)|an? (?:[\w-]+ )?(?:guide|walk|tour|look)"
    r"|\w+ing)\b|本文|本篇|这篇",
    re.IGNORECASE,
)


# A summary sentence that lists the article's topics instead of saying something of them:
# "Server-Sent Events or WebSockets, deltas or full snapshots, and the proxy setting that
# silently buffers everything." Three or more short phrases, the last short too or a noun
# with a relative clause: no predicate follows the list, as one does in "A hard cap…, an
# honest message…, and a final-answer fallback keep runaway loops cheap and visible."
_RELATIVE = re.compile(r"\b(?:that|which|who|whose|where)\b", re.IGNORECASE)
LIST_PHRASE_WORDS = 4


def _topic_list(text: str) -> bool:
    """Is the sentence a list of short phrases with no predicate after it?"""
    phrases = [p.strip() for p in re.split(r"[,;]", text.rstrip(".!?")) if p.strip()]
    if len(phrases) < 3 or any(len(p.split()) > LIST_PHRASE_WORDS for p in phrases[:-1]):
        return False
    last = re.sub(r"^(?:and|or)\s+", "", phrases[-1], flags=re.IGNORECASE)
    return len(last.split()) <= LIST_PHRASE_WORDS or bool(_RELATIVE.search(last))


def _summary_claims(source: dict) -> list[Fact]:
    """The summary sentences of an article titled after X that say something of X itself.

    "Why step limits matter" never writes "a step limit is…"; its summary says what one is
    and does ("A hard cap on model calls… keep runaway loops cheap and visible"), where the
    sentences naming it were an aside ("A step limit is also a sensor.").
    """
    summary = plain(str(source.get("summary") or ""))
    claims = [
        text for text in sentences(summary) if not _BLURB.search(text) and not _topic_list(text)
    ]
    return [Fact(text, "sentence", "", i - len(claims), -1) for i, text in enumerate(claims)]


def _with_thesis(
    picked: list[tuple[int, Fact]], sources: list[dict], question: str
) -> list[tuple[int, Fact]]:
    """A "why" question opens with the article's own reason: its summary, when the summary
    holds all of the question's words but one (the author's one-line case for the very topic
    asked about; a why about one detail of the article shares only its topic words)."""
    n = picked[0][0]
    summary = plain(str(sources[n].get("summary") or ""))
    asked = terms(question)
    quoted = {fact.text for _, fact in picked}
    if asked and asked <= terms(str(sources[n].get("title") or "")):
        # "Why step limits?" of "Why step limits matter": the whole article is the case for
        # it, and its summary's claims (not its blurbs) are that case in brief.
        claims = [fact for fact in _summary_claims(sources[n]) if fact.text not in quoted]
        return [*((n, fact) for fact in claims), *picked][: max(MAX_FACTS, len(claims) + 1)]
    held = terms(summary) & asked
    if not summary or len(held) < 2 or len(asked - held) > 1:
        return picked
    thesis = [s for s in sentences(summary) if s not in quoted]
    facts = [(n, Fact(text, "sentence", "", -len(thesis) + i, -1)) for i, text in enumerate(thesis)]
    return [*facts, *picked][: max(MAX_FACTS, len(facts) + 1)]
