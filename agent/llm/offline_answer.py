"""Writing the offline model's answers: the best facts of the articles read, each cited.

compose_answer decides in order: decline a name or rare word no article read mentions
(offline_declines); read the articles' facts (offline_facts); for "what is X?" prefer an
article's own explanation (offline_explain), else pick facts (offline_pick); make sure a
figure asked for is given (offline_figure_pick); and quote the passage the search chose when
no word can match across languages. A question in two parts is answered part by part, each
from its own article, and each quoted article is cited right after its facts (offline_render).
"""

from __future__ import annotations

from collections import Counter

from agent.answered import is_decline
from agent.llm.offline_bridge import question_terms
from agent.llm.offline_declines import (
    NOTHING_FOR_PART,
    _nearest_label,
    _no_figure,
    _not_mentioned,
    _part_label,
    _quoted_from_label,
)
from agent.llm.offline_explain import _WHY, _definition_first, _explanation, _with_thesis
from agent.llm.offline_facts import (
    _fact_terms,
    _facts,
    _id,
    _other_language,
    _standalone,
)
from agent.llm.offline_figure_pick import _ASKS_DEFAULT, _assigned, _figure_instead, _has_figure
from agent.llm.offline_figures import (
    asks_for_figure,
    asks_price,
    frame_terms,
)
from agent.llm.offline_maker import asks_maker, maker_label, states_maker
from agent.llm.offline_names import aside, mentions, missing_names, named_terms
from agent.llm.offline_pick import _pick
from agent.llm.offline_remedy import remedied
from agent.llm.offline_render import SOURCE, _link, _render
from agent.llm.offline_shape import shaped
from agent.llm.offline_support import not_stated_label, states_support, supported_kind
from agent.llm.offline_text import (
    UNIT_MARK,
    Fact,
    article_facts,
    article_text,
    language,
    terms,
)
from agent.llm.offline_value import valued

CONTEXT_WEIGHT = 0.3


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
    picked = remedied(question=question, pool=pool, picked=picked, wanted=wanted)
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
    kind = supported_kind(question) if picked and not context else ""
    if kind and not states_support([fact for _, fact in picked], kind):
        # "Which browsers does Docent support?" quoted a row on proxies that "need explicit
        # upgrade support": the list asked for is given only where the blog says it.
        picked = [(n, fact) for n, fact in pool if states_support([fact], kind)][:2]
        if not picked:
            return _not_mentioned(lang, not_stated_label(kind, lang), sources[0], part)
    if picked and not context and asks_maker(question):
        if not states_maker([fact for _, fact in picked]):
            # "Who created Docent?" quoted the one sentence of the persistence article that
            # says most about Docent: its principle, not its maker.
            return _not_mentioned(lang, maker_label(lang), sources[0], part)
    groups = []
    for n, source in enumerate(sources):
        facts = sorted((fact for m, fact in picked if m == n), key=lambda fact: fact.order)
        if facts:
            fitted = shaped(
                question=question, source=source, facts=facts, wanted=wanted, lead=not groups
            )
            if not groups:  # a value only the lead article's code states (offline_value)
                fitted = valued(question=question, body=str(source.get("body") or ""), facts=fitted)
            groups.append((source, fitted))
    if not groups:
        return ""
    # Each article's facts, then its source line: who said what stays clear.
    answer = "\n\n".join(
        f"{_render(facts, lang)}\n\n{SOURCE[lang]}{_link(source)}" for source, facts in groups
    )
    # A passage that shares no word with the question is the search's guess, not a match: the
    # reader is told so, in their language, before reading it.
    if blind:
        return f"{_nearest_label(sources[0], lang)}\n\n{answer}"
    if (
        len(groups) == 1
        and _other_language(groups[0][0], language(question))
        and language(_render(groups[0][1], lang)) != language(question)
    ):
        # "什么是混合检索？" answered in English with no word of Chinese before it read as a
        # glitch: one article in the other language is named, with its language, first. Not
        # when the words quoted are in the question's own: an English article's Chinese
        # summary was introduced as "以下摘自英文文章…（原文）" over a Chinese sentence.
        return f"{_quoted_from_label(groups[0][0], lang)}\n\n{answer}"
    return answer


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
