"""The facts of an article as the offline model quotes them, and what each fact shares.

A fact (a sentence, list item or table row, offline_text) is matched by its own words and,
for a row or item, by its heading and columns. Quoted alone it must read alone: a sentence
leaning on the one before brings it along or is left out, and a clause pointing to another
article is cut, since the answer cites only the articles it quotes. Picking (offline_pick),
figures (offline_figure_pick) and explanations (offline_explain) all read facts this way.
"""

from __future__ import annotations

from agent.llm.offline_text import Fact, article_facts, article_pointers, terms, without_pointers

MAX_TABLE_ROWS = 8

# Sentences that lean on the one before; shown alone they would be out of context.
_LEANING = (
    "this ", "that ", "these ", "those ", "it ", "its ", "they ", "their ", "both ", "such ",
    "the other ", "then ", "so ", "but ", "and ", "also ", "here ", "there ",
    "otherwise", "however", "instead", "therefore", "thus ", "hence ", "for example",
    "for instance", "in that case", "in this case", "as a result",
    "这", "那", "它", "其", "但", "而", "因此", "所以", "否则", "此外", "不过", "然而", "于是",
)  # fmt: skip


def _facts(source: dict, passage: str | None = None) -> list[Fact]:
    """The source's facts (of `passage`, the search's excerpt, when given) as they can be
    quoted under its source line alone: without the clauses naming another article it links
    to ("…, described in Why step limits matter, …"), which the answer would name and not
    cite, and without a fact that is all such a pointer (nor the sentence leaning on it)."""
    pointers = article_pointers(str(source.get("body") or ""), str(source.get("url") or ""))
    facts = article_facts(str(source.get("body") or "") if passage is None else passage)
    kept: list[Fact] = []
    gone: set[int] = set()
    for fact in facts:
        cut = without_pointers(fact, pointers)
        if cut is None or (_leans(fact) and fact.order - 1 in gone):
            gone.add(fact.order)
        else:
            kept.append(cut)
    return kept


def _id(source: dict) -> object:
    return source.get("article_id")


def _other_language(source: dict, lang: str) -> bool:
    """True when the article is not in the question's language, or its language is unknown."""
    return source.get("language") not in (lang, "")


def _fact_terms(fact: Fact) -> set[str]:
    return _core_terms(fact) | _context_terms(fact)


def _core_terms(fact: Fact) -> set[str]:
    # A row's column names repeat in every row: alone they match every row equally.
    return terms(fact.text) - terms(fact.header)


def _context_terms(fact: Fact) -> set[str]:
    # A row or item sits under a heading and columns that name what it lists.
    return terms(f"{fact.header} {fact.section}") if fact.kind != "sentence" else set()


def _shared(fact: Fact, wanted: dict[str, float]) -> set[str]:
    """The wanted terms a fact has, its own words and those of its heading or columns."""
    return set(wanted) & (_core_terms(fact) | _context_terms(fact))


def _with_context(
    pool: list[tuple[int, Fact]], picked: list[int], shared: list[set[str]], *, compares: bool
) -> list[tuple[int, Fact]]:
    """Picked facts with what they need to be read alone.

    A table row brings the rest of its (small) table when the question compares ("which is
    cheapest?") and several of its rows match.
    A sentence that leans on its predecessor brings it along, or is left out.
    """
    chosen = set(picked)
    for i in picked:
        n, fact = pool[i]
        if fact.kind == "row" and compares:
            table = [j for j, (m, f) in enumerate(pool) if m == n and f.group == fact.group]
            matching = sum(1 for j in table if shared[j] & _core_terms(pool[j][1]))
            if matching >= 2 and len(table) <= MAX_TABLE_ROWS:
                chosen.update(table)
        if not _leans(fact):
            continue
        before = i - 1
        if before >= 0 and pool[before][0] == n and pool[before][1].section == fact.section:
            chosen.add(before)
        else:
            chosen.discard(i)
    return [pool[i] for i in sorted(chosen)]


def _leans(fact: Fact) -> bool:
    """A sentence that leans on the one before ("It resets…", "Otherwise…")."""
    return fact.kind == "sentence" and fact.text.lower().startswith(_LEANING)


def _standalone(facts: list[Fact]) -> list[Fact]:
    """The facts that can be read on their own: a leaning sentence stays only after its own
    predecessor (same section), which is kept."""
    kept: list[Fact] = []
    for fact in facts:
        if _leans(fact) and not (kept and kept[-1].section == fact.section):
            continue
        kept.append(fact)
    return kept
