"""Picking the facts an offline answer quotes from the articles read.

Facts are scored by the question's words they share, rarer words counting more (a word in
every fact says little). A follow-up's earlier question counts at half weight. Facts are
picked greedily for the question words they add, so a two-part question draws on both
articles that answer it. The answer opens with the search's best article unless a lower one
read answers better in its own words; across languages, words are shared only through two
translations.
"""

from __future__ import annotations

import re

from agent.llm.offline_bridge import question_terms, translations
from agent.llm.offline_definitions import defined_subject, defines
from agent.llm.offline_facts import _core_terms, _id, _other_language, _shared, _with_context
from agent.llm.offline_figures import asks_for_figure
from agent.llm.offline_second import TWO_PART_FLOOR, Second, names_it, second_article
from agent.llm.offline_text import Fact, language, plain, terms
from agent.llm.offline_weigh import weighed

MAX_FACTS = 4
NEXT_FACT_FLOOR = 0.4  # a further fact must add this share of the first fact's weight
HEADER_ONLY = 0.5
RANK_DECAY = 0.8  # a lower search hit needs a slightly better fact

# Questions in two parts ("X and Y", "分别", two question marks) may need two articles.
_TWO_PART = re.compile(
    r"\b(and|both|together|versus|vs|compared?|relate[sd]?|while)\b|分别|以及|和|与|[?？].+[?？]",
    re.IGNORECASE,
)
_WHICH = re.compile(r"\bwhich\b|哪", re.IGNORECASE)
# A question that compares ("which is cheapest?", "哪个最快") needs the whole small table;
# any other question needs only the rows that answer it.
_COMPARES = re.compile(
    r"\b(which|compare[sd]?|comparison|versus|vs|differ(s|ence)?|best|worst|most|least|"
    r"fastest|slowest|cheapest|smallest|largest|biggest|highest|lowest|better|worse|faster|"
    r"slower|cheaper|rank|order)\b|哪|最|比较|区别|对比|相比|差别",
    re.IGNORECASE,
)

EXCERPT_BONUS = 1.1  # the search chose this passage: a small head start among equals
FACT_BONUS = 1.15  # a table row or list item says more per word than prose
DEFINES_BONUS = 2.0  # "what is X?" is best answered by the sentence saying what X is


def compares(question: str) -> bool:
    """Does the question compare ("which is cheapest?", "哪个最快")? "At most" asks for one
    figure, not a comparison: "一轮最多调用几次模型？" wants the cap, not the whole table."""
    if not _COMPARES.search(question):
        return False
    return not asks_for_figure(question) or bool(_WHICH.search(question))


def _pick(
    pool: list[tuple[int, Fact]],
    wanted: dict[str, float],
    question: str,
    excerpts: dict,
    sources: list[dict],
    *,
    asked: set[str] | None = None,
) -> list[tuple[int, Fact]]:
    """Greedy cover: each step takes the fact adding the most not-yet-covered weight.

    Every fact must share a word with `asked` (the question itself: an earlier question
    only helps to rank).
    """
    shared = _across([_shared(fact, wanted) for _, fact in pool], pool, sources, question)
    said = question_terms(question)
    asked = {t for t in wanted if t in said} if asked is None else asked
    shared = _beyond_titles(pool, shared, asked, sources)
    subject = defined_subject(question)
    shared = _defined_whole(pool, shared, subject, wanted)
    boost = [
        _boost(n, fact, shared[i], excerpts, sources, subject) for i, (n, fact) in enumerate(pool)
    ]
    boost = weighed(boost, [fact for _, fact in pool], question)  # offline_weigh
    two_part = bool(_TWO_PART.search(question))
    words = said | asked
    # A two-part question's articles each answer one part, so no one fact can show that a
    # lower article answers better: it keeps the search's best first.
    rivals = set() if two_part else _rivals(pool, shared, asked, sources, language(question))
    lead = _lead_article(pool, shared, asked, wanted, boost, rivals)
    # A second article, if any, names what the first lacks or is the first in search order
    # with a strong fact of its own: the search's ranking is a better judge of the runner-up
    # than which article happens to add one more question word.
    second = (
        second_article(
            question=question,
            sources=sources,
            facts=[(n, shared[i]) for i, (n, _) in enumerate(pool)],
            asked=asked,
            wanted=wanted,
        )
        if two_part
        else Second()
    )
    allowed = {0, second.article} if two_part else {lead}
    picked: list[int] = []
    passed: set[int] = set()  # not worth adding now; weaker ones may still be
    covered: set[str] = set()
    while len(picked) < MAX_FACTS:
        best, best_gain = None, 0.0
        for i, terms_i in enumerate(shared):
            if i in picked or i in passed or not terms_i & asked:
                continue
            if not picked and pool[i][0] != lead:
                continue  # the answer opens with the lead article, or not at all
            if pool[i][0] not in allowed:
                continue
            gain = sum(wanted[t] for t in terms_i - covered)
            # Already-covered words still count a little: a second fact on the same point.
            gain += 0.2 * sum(wanted[t] for t in terms_i & covered)
            if gain * boost[i] > best_gain:
                best, best_gain = i, gain * boost[i]
        if best is None:
            break
        if (
            picked
            and not _for_a_name(best, picked, pool, second)
            and (
                _coincidence(shared[best] & asked, covered, words)
                or not _worth_adding(
                    best, best_gain, picked, pool, shared, covered, asked, wanted, two_part
                )
            )
        ):
            passed.add(best)
            continue
        picked.append(best)
        covered |= shared[best]
    return _with_context(pool, picked, shared, compares=compares(question))


def _beyond_titles(
    pool: list[tuple[int, Fact]], shared: list[set[str]], asked: set[str], sources: list[dict]
) -> list[set[str]]:
    """No shared words for a fact sharing only its article's title words with the question,
    in an article where some fact shares another of its words.

    The title says what every sentence of its article is about, so sharing only title words
    shows the question is on the article's subject, not that this sentence answers it: "In
    the agent loop, what happens if the model calls a tool name that doesn't exist?" quoted
    the loop article's "Once you can draw it on a whiteboard you can debug almost any agent."
    for "agent". A fact sharing a word beyond the title keeps its title words too: they are
    often what the question turns on. When only title words match anywhere in the article
    (the question names its subject and little else), every fact keeps them.
    """
    topics = [terms(str(source.get("title") or "")) for source in sources]
    pairs = zip(shared, pool, strict=True)
    beyond = [bool((words & asked) - topics[n]) for words, (n, _) in pairs]
    matching = {n for more, (n, _) in zip(beyond, pool, strict=True) if more}
    return [
        set() if n in matching and not beyond[i] else shared[i] for i, (n, _) in enumerate(pool)
    ]


def _defined_whole(
    pool: list[tuple[int, Fact]], shared: list[set[str]], subject: str, wanted: dict[str, float]
) -> list[set[str]]:
    """The sentence saying what X is holds all of X's words: "HNSW stands for…" answers "What
    is an HNSW index?" though it never says "index", and a bullet holding both words did not."""
    whole = question_terms(subject) & set(wanted) if subject else set()
    if not whole:
        return shared
    return [
        words | whole if defines(fact.text, subject) else words
        for words, (_, fact) in zip(shared, pool, strict=True)
    ]


def _across(
    shared: list[set[str]], pool: list[tuple[int, Fact]], sources: list[dict], question: str
) -> list[set[str]]:
    """A fact in the other language shares words with the question through translations
    (offline_bridge) only when they translate two of its words: "Two index types ship with
    pgvector." is no answer to "哪种索引更准确？" for holding "index", nor "第一个聊天机器人…" to
    "Which chatbot is more accurate?" for the four bigrams of "chatbot". With fewer it shares
    none, and the search's own passage is quoted as the nearest found."""
    own, lang, origin = terms(question), language(question), translations(question)
    return [
        words
        if not _other_language(sources[n], lang)
        or words & own
        or len({source for word in words for source in origin.get(word, (word,))}) >= 2
        else set()
        for words, (n, _) in zip(shared, pool, strict=True)
    ]


def _rivals(
    pool: list[tuple[int, Fact]],
    shared: list[set[str]],
    asked: set[str],
    sources: list[dict],
    lang: str,
) -> set[int]:
    """The lower articles whose words can be weighed against the top article's.

    Shared words compare two articles in one language. Across languages they do not: an
    article in the other language shares few words however right it is. So a lower article
    in the top's language may contest the lead, and one in another language only when the
    top (in the other language) shares no word at all, when the answer would otherwise be
    its passage quoted blind.
    """
    top_language = sources[0].get("language") if sources else None
    top_silent = not any(shared[i] & asked for i, (n, _) in enumerate(pool) if n == 0)
    blind = top_silent and bool(sources) and _other_language(sources[0], lang)
    return {
        n for n in range(1, len(sources)) if sources[n].get("language") == top_language or blind
    }


def _lead_article(
    pool: list[tuple[int, Fact]],
    shared: list[set[str]],
    asked: set[str],
    wanted: dict[str, float],
    boost: list[float],
    rivals: set[int],
) -> int:
    """The article the answer opens with: the search's best, unless a lower one read answers
    better in its own words.

    The articles read are all close to the top hit, and the top hit is often a loosely related
    article (a hub section that many questions land near). A lower article among `rivals`
    leads only with a fact sharing two of the question's words whose weight, after the rank
    decay (RANK_DECAY per rank), beats every such fact of the top.
    """
    best: dict[int, float] = {}
    for i, (n, _) in enumerate(pool):
        # The top article is weighed as its rivals are, by facts sharing two of the question's
        # words: one shared word is a coincidence it cannot hold the lead on ("Why stream
        # tokens instead of waiting for the full answer?" opened with the rate-limit article's
        # "…rather than the full address", over the streaming article's "Re-sending the whole
        # answer-so-far…", which shares "answer", "stream" and "token").
        if (n == 0 or n in rivals) and len(shared[i] & asked) >= 2:
            strength = sum(wanted[t] for t in shared[i] & asked) * boost[i]
            best[n] = max(best.get(n, 0.0), strength)
    top = best.get(0, 0.0)
    better = [n for n in sorted(best) if n != 0 and best[n] > top]
    return max(better, key=lambda n: best[n]) if better else 0


def _boost(
    n: int, fact: Fact, shared: set[str], excerpts: dict, sources: list[dict], subject: str
) -> float:
    """Multipliers: search rank, the search's own passage, structured facts, header-only,
    and the definition a "what is X?" asks for."""
    factor = RANK_DECAY**n
    if defines(fact.text, subject):
        factor *= DEFINES_BONUS
    if fact.text[:60] in plain(str(excerpts.get(_id(sources[n]), ""))):
        factor *= EXCERPT_BONUS
    if fact.kind != "sentence":
        factor *= FACT_BONUS
    if shared and not shared & _core_terms(fact):
        factor *= HEADER_ONLY  # only its heading or columns match: they repeat on every row
    return factor


def _for_a_name(best: int, picked: list[int], pool: list[tuple[int, Fact]], second: Second) -> bool:
    """The first fact of a second article chosen for a name, mentioning it, is quoted.

    Across languages it may share no other word with the question, so it would not pass as
    a strong fact; the name is what makes it the answer to the other part.
    """
    n, fact = pool[best]
    if not second.names or n != second.article or any(pool[i][0] == n for i in picked):
        return False
    return names_it(fact.text, second.names)


def _coincidence(sharing: set[str], covered: set[str], words: set[str]) -> bool:
    """Once the facts picked hold most of the question's words, a further fact sharing just
    one is a coincidence ("Inserting a value…" for "which lists value suits a million rows?").
    Before that, its one word may be what is asked ("when does the cap reset?")."""
    return len(sharing) < 2 and 2 * len(covered & words) >= len(words)


def _worth_adding(
    best: int,
    gain: float,
    picked: list[int],
    pool: list[tuple[int, Fact]],
    shared: list[set[str]],
    covered: set[str],
    asked: set[str],
    wanted: dict[str, float],
    two_part: bool,
) -> bool:
    """A weak extra fact dilutes the answer; one from another article must be strong."""
    first = sum(wanted[t] for t in shared[picked[0]])  # without boosts: a plain yardstick
    sources = {pool[i][0] for i in picked}
    if pool[best][0] in sources:
        return gain >= NEXT_FACT_FLOOR * first or len((shared[best] - covered) & asked) >= 2
    if not two_part or len(sources) > 1 or len(shared[best] & asked) < 2:
        return False  # one question, one article; one shared word is a coincidence
    # "X and Y": a second article with a strong fact of its own may answer Y, even when the
    # first already touched it.
    return sum(wanted[t] for t in shared[best]) >= TWO_PART_FLOOR * first
