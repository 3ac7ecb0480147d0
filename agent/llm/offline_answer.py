"""Writing the offline model's answers: the best facts of the articles read, each cited.

Facts are scored by the question's words they share, rarer words counting more (a word in
every fact says little). A follow-up's earlier question counts at half weight. Facts are
picked greedily for the question words they add, so a two-part question draws on both
articles that answer it, and each quoted article is cited right after its facts.
"""

from __future__ import annotations

import re
from collections import Counter

from agent.answered import is_decline
from agent.llm.offline_bridge import question_terms
from agent.llm.offline_declines import (
    NOTHING_FOR_PART,
    _nearest_label,
    _no_figure,
    _not_mentioned,
    _part_label,
)
from agent.llm.offline_definitions import defined_subject, defines, named, names
from agent.llm.offline_facts import (
    _fact_terms,
    _facts,
    _id,
    _leans,
    _other_language,
    _standalone,
)
from agent.llm.offline_figure_pick import _ASKS_DEFAULT, _assigned, _figure_instead, _has_figure
from agent.llm.offline_figures import (
    asks_for_figure,
    asks_price,
    frame_terms,
)
from agent.llm.offline_names import aside, mentions, missing_names, named_terms
from agent.llm.offline_pick import MAX_FACTS, _pick
from agent.llm.offline_render import SOURCE, _link, _render
from agent.llm.offline_text import (
    UNIT_MARK,
    Fact,
    article_facts,
    article_text,
    language,
    plain,
    sentences,
    terms,
)
from agent.llm.offline_titles import title_names

_WHY = re.compile(r"^\W*(why|how come)\b|为什么|为何|为啥", re.IGNORECASE)
CONTEXT_WEIGHT = 0.3
EXPLANATION_FACTS = 3  # the opening of the section a "how does X work?" names
TITLE_FACTS = 2  # the first sentences about X of an article titled after X


def compose_answer(
    *,
    question: str,
    context: str,
    sources: list[dict],
    excerpts: dict,
    lang: str,
    own: str = "",
    parts: list[tuple[str, int]] | None = None,
    unknown: tuple[str, ...] = (),
    part: str = "",
) -> str:
    """Quote the best facts of `sources` (articles with a body), citing each one quoted.

    `own` is what the system messages say (the assistant's name, the page on screen): a name
    from there is not a topic the articles must mention. `parts` pairs each part of a question
    asked in two with the source that answers it (offline_parts). `unknown` are the
    question's rare words no article of the blog uses (the search's `unknown_words`: "tiktoken"):
    like a name no article read mentions, one declines the question. `part`: the question is
    one part of a two-part question, whose decline names the part, not the article read.
    Returns "" when no source has anything to quote.
    """
    if parts:
        answer = _by_parts(parts, sources, excerpts, lang, own, unknown)
        if answer:
            return answer
    names = _missing_names(question, sources, excerpts, own)
    missing = [*names, *_unknown(unknown, own, question, names)]
    if missing and sources:
        return _not_mentioned(lang, missing[0], sources[0], part)
    read = _definition_first(question, [(source, _facts(source)) for source in sources])
    sources = [source for source, _ in read]
    # A follow-up quotes the article its (combined) search ranked first: the conversation's topic.
    quoted = read[:1] if context else read
    pool = [(n, fact) for n, (_, facts) in enumerate(quoted) for fact in facts]
    # How rare a word is goes by all the articles say, the clauses quoting leaves out included.
    said = [fact for source, _ in quoted for fact in article_facts(str(source.get("body") or ""))]
    wanted = _weights(question, context, said)
    explained = [] if context else _explanation(question, read)
    picked = explained or _pick(pool, wanted, question, excerpts, sources)
    asks = asks_for_figure(question) and not explained  # "how does X work?" wants no figure
    if picked and asks and not _has_figure(picked, question):
        instead = _figure_instead(pool, picked, wanted, question)
        # A follow-up ("and how much looser is it?") has too few words of its own to judge
        # that the figure is missing: it keeps what it picked, unless it names a price ("what
        # does that work out to in dollars?"), which no other figure gives.
        if not instead and (not context or asks_price(question)):
            return _no_figure(lang, sources[0], part)
        picked = instead or picked
    elif picked and asks and not _assigned(picked, question):
        # A figure, but not the setting's: "what's ef_search set to by default?" had "fewer than
        # ten results" quoted, and "hnsw.ef_search (default 40)" is the one asked for.
        instead = _figure_instead(pool, picked, wanted, question, assigned_only=True)
        if not instead and not context and _ASKS_DEFAULT.search(question):
            # "If I don't pass a lists value, what default does pgvector use?" was answered with
            # other settings' defaults ("probes (default 1)"): no fact gives this one's.
            return _no_figure(lang, sources[0], part)
        picked = instead or picked
    if picked and not context and _WHY.search(question):
        picked = _with_thesis(picked, sources, question)
    if not picked and context:  # a follow-up whose own words miss: the top article, in context
        top = [(n, fact) for n, fact in pool if n == 0]
        picked = _pick(top, wanted, question, excerpts, sources, asked=set(wanted))
        if picked and asks_price(question) and not _has_figure(picked, question):
            return _no_figure(lang, sources[0], part)
    # Whether a word could match goes by the question's language; `lang` only frames.
    blind = not picked and bool(sources) and _other_language(sources[0], language(question))
    if blind:
        # Asked in the other language, no word can match: the passage the search chose. In
        # the same language, an article sharing no word with the question does not answer it.
        passage = _facts(sources[0], passage=str(excerpts.get(_id(sources[0]), "")))
        picked = [(0, fact) for fact in _standalone(passage)][:2]
        if picked and asks and not _has_figure(picked, question):
            # "…比 zhparser 慢多少？" quoted a passage on how English text is stemmed: a
            # passage standing in for an answer must at least give the figure asked for.
            return _no_figure(lang, sources[0], part)
    groups = []
    for n, source in enumerate(sources):
        facts = sorted((fact for m, fact in picked if m == n), key=lambda fact: fact.order)
        if facts:
            groups.append((source, facts))
    if not groups:
        return ""
    # Each article's facts, then its source line: who said what stays clear.
    answer = "\n\n".join(
        f"{_render(facts, lang)}\n\n{SOURCE[lang]}{_link(source)}" for source, facts in groups
    )
    # A passage that shares no word with the question is the search's guess, not a match: the
    # reader is told so, in their language, before reading it.
    return f"{_nearest_label(sources[0], lang)}\n\n{answer}" if blind else answer


def _by_parts(
    parts: list[tuple[str, int]],
    sources: list[dict],
    excerpts: dict,
    lang: str,
    own: str,
    unknown: tuple[str, ...] = (),
) -> str:
    """Each part answered from its own article, the answered parts first.

    A part its article does not answer ("this blog's articles don't give that figure") is
    said after the others: the answer opens with what the blog does say. "" when no part is
    answered.
    """
    said, unsaid = [], []
    for text, n in parts:
        answer = compose_answer(
            question=text,
            context="",
            sources=[sources[n]],
            excerpts=excerpts,
            lang=lang,
            own=own,
            # The part that asks about the word the blog lacks is declined, the other answered.
            unknown=tuple(word for word in unknown if mentions(text.lower(), word.lower())),
            part=text,
        )
        if not answer:
            unsaid.append(NOTHING_FOR_PART[lang].format(part=_part_label(text)))
            continue
        blind = _nearest_label(sources[n], lang)
        if answer.startswith(blind):  # quoted blind: say which part it stands in for
            answer = _nearest_label(sources[n], lang, part=text) + answer[len(blind) :]
        (unsaid if is_decline(answer) else said).append(answer)
    return "\n\n".join([*said, *unsaid]) if said else ""


def _missing_names(question: str, sources: list[dict], excerpts: dict, own: str) -> list[str]:
    """The question's names ("HTTP/2", "Postgres", "10") that no article read mentions.

    The search's passages count too: a long body reaches the model truncated. So does `own`:
    "Does Docent answer from memory?" names the assistant, not a topic.
    """
    texts = [article_text(source) for source in sources]
    return missing_names(question, [*texts, *(str(e) for e in excerpts.values()), own])


def _unknown(words: tuple[str, ...], own: str, question: str, missing: list[str]) -> list[str]:
    """The search's unknown words, less those the system messages use ("Docent") and those
    the question only sets beside its subject ("does it stream like ChatGPT?")."""
    said = [name for name in named_terms(question) if name not in missing]
    return [
        word
        for word in words
        if not mentions(own.lower(), word) and not aside(question, word, said)
    ]


def _weights(question: str, context: str, facts: list[Fact]) -> dict[str, float]:
    """Each wanted term's weight: 1/df for the question's, half that for the context's."""
    frequency = Counter(term for fact in facts for term in _fact_terms(fact))
    asked = question_terms(question) - frame_terms(question)
    weights = {term: 1 / frequency[term] for term in asked if frequency[term]}
    for term in terms(context) - asked:
        if frequency[term]:
            weights[term] = CONTEXT_WEIGHT / frequency[term]
    if asks_for_figure(question):
        weights |= _units(asked, frequency)
    return weights


def _units(asked: set[str], frequency: Counter) -> dict[str, float]:
    """A figure's unit for each Chinese word of the question the articles never write.

    Chinese writes a figure with the first character of the word asked about: "维度是多少？"
    is answered by "384 维", "次数" by "3 次", "秒数" by "30 秒". The articles have no "维度",
    so without its unit the sentence giving the figure matched only "向量".
    """
    units = {}
    for term in asked:
        unit = UNIT_MARK + term[0]
        if len(term) == 2 and not term.isascii() and not frequency[term] and frequency[unit]:
            units[unit] = 1 / frequency[unit]
    return units


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
