"""Follow-ups that ask about the answer before them: "tell me more", "why?", "an example?".

A short follow-up made only of such an ask has no subject of its own: it asks for more of
the article the answer before it quoted. It is answered from that article's passages the
answer did not quote yet, chosen by what it asks for: more of the same section, the other
items of a list or table it quoted one of, a reason, an example, the code, the article's own
summary ("in short?"), or the section the quote came from ("where does it say that?").
A follow-up naming something new is no such ask: it is searched and answered as before.
"""

from __future__ import annotations

import re
from collections import Counter

from agent.llm.offline_facts import _fact_terms, _facts, _standalone
from agent.llm.offline_figures import states_figure
from agent.llm.offline_more_ask import answer_ask
from agent.llm.offline_render import SOURCE, _link, _render
from agent.llm.offline_shape import FENCED, code_blocks, fenced
from agent.llm.offline_text import Fact, blocks, inert, plain, terms
from agent.llm.offline_turn import _Turn
from blog.chunking import TABLE_RULE

CODE_NEAR = 0.75  # an example in code, in the quoted section: a sentence right after it wins
ANNOUNCED = 2.0  # a table or list its lead calls an example ("A worked example with k = 60:")
MORE_FACTS = 3  # "tell me more": a few passages, not the article again
FIGURES = 6  # "the key numbers": one sentence or row per section, up to this many
OTHER_ROWS = 8  # "and the other ones?": a list or table of up to this many

# Words that give a reason or an example, in either language.
_REASON = re.compile(
    r"\b(?:because|since|so that|otherwise|reason|which is why|that is why|means|avoids?|"
    r"prevents?|so the|so a|so it|so you)\b|因为|所以|为了|否则|因此|由于|以免|避免|才能|这样",
    re.I,
)
# An example given in passing ("such as 1.5", "a line like “…”"), and one announced as such.
_EXAMPLE = re.compile(
    r"\b(?:for example|for instance|e\.g\.|such as|examples?|like a)\b|\blike [\"“]|"
    r"例如|比如|举例|示例|像是",
    re.I,
)
_STRONG_EXAMPLE = re.compile(r"\bexamples?\b|例如|举例|示例|例子", re.I)
# A section or a list whose lead says it gives reasons ("Why append in call order", "There
# are three reasons:", "为什么…", "原因有三").
_REASONS = re.compile(r"^why\b|\breasons?\b|为什么|原因|好处", re.I)
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s*")
_CITED = re.compile(r"\]\((/articles/[^)\s]+)\)")

WHERE = {
    "en": "That comes from the section “{section}” of {link}:",
    "zh": "这出自{link}的“{section}”一节：",
}
SUMMARY = {"en": "In short, as the article puts it:", "zh": "简单地说（文章自己的概括）："}


def about_answer(turn: _Turn, sources: list[dict]) -> str:
    """The answer to a follow-up that only asks about the answer before it ("why?"), from
    the articles read for it; "" for any other question (it is answered as before)."""
    kind = answer_ask(turn.question)
    if not kind:
        return ""
    return compose_about_answer(
        kind=kind,
        question=turn.question,
        previous_answer=turn.previous_answer,
        said_before=turn.answers,
        context=" ".join(turn.earlier),
        sources=sources,
        lang=turn.lang,
    )


def compose_about_answer(
    *,
    kind: str,
    question: str,
    previous_answer: str,
    context: str,
    sources: list[dict],
    lang: str,
    said_before: str = "",
) -> str:
    """The answer to an ask about `previous_answer`, from the first article it cited that
    was read again (`sources`); "" when none was, or the article has nothing more to give.
    `context` is the conversation's earlier questions: what "more" is more of."""
    cited = _CITED.findall(previous_answer)
    article = next((s for s in sources if s.get("url") in cited and s.get("body")), None)
    if article is None:
        return ""
    if kind == "shorter":
        summary = plain(str(article.get("summary") or ""))
        return _cite(f"{SUMMARY[lang]}\n\n{inert(summary)}", article, lang) if summary else ""
    read = _Read(article, previous_answer, context, said_before or previous_answer)
    read.asked = question
    if kind == "where":
        return _where(read.quoted, article, lang)
    if kind in ("code", "example"):
        answer = _example(read) if kind == "example" else _code(read)
        if answer or kind == "code":
            return _cite(answer, article, lang) if answer else ""
    if kind == "figures":
        picked = _figures(read)
        return _cite(_render(picked, lang), article, lang) if picked else ""
    picked = _others(read) if kind == "other" else []
    picked = picked or _more(read, why=kind == "why")
    return _cite(_render(picked, lang), article, lang) if picked else ""


class _Read:
    """An article as a follow-up reads it: its facts, those the answer quoted, the sentence
    leading each list or table ("The loop has four ways to end:"), and its code blocks."""

    def __init__(self, article: dict, previous_answer: str, context: str, said: str) -> None:
        self.body = str(article.get("body") or "")
        self.facts = _facts(article)
        self.quoted = [f for f in self.facts if inert(f.text) in previous_answer]
        # Facts any earlier answer quoted: a second "tell me more" repeated the first answer.
        self.said = {f.order for f in self.facts if inert(f.text) in said}
        self.context = context
        # The earlier questions' words, read once: per fact they cost 0.25 s a turn on
        # questions at the message cap.
        self.context_terms = terms(context)
        self.asked = ""  # the follow-up's own words ("the other ways it can end")
        self.leads = _leads(self.body, self.facts)
        frequency = Counter(t for f in self.facts for t in _fact_terms(f))
        self.rarity = {t: 1 / n for t, n in frequency.items()}

    def fresh(self) -> list[Fact]:
        return [f for f in _standalone(self.facts) if f.order not in self.said]

    def group(self, group: int) -> list[Fact]:
        return [f for f in self.facts if f.group == group and f.kind in ("item", "row")]

    def sections(self) -> set[str]:
        return {f.section for f in self.quoted}


def _more(read: _Read, *, why: bool) -> list[Fact]:
    """The unquoted facts nearest the quote and the earlier question; for "why?", a list
    announced as reasons, else the facts giving a reason first."""
    if why and (listed := _reason_list(read)):
        return listed
    fresh = read.fresh()
    if why:
        fresh = [f for f in fresh if _reason(f, read)] or fresh
    ranked = sorted(fresh, key=lambda f: -(_closeness(f, read) + _reason(f, read) * why))
    return sorted(ranked[: 2 if why else MORE_FACTS], key=lambda f: f.order)


def _figures(read: _Read) -> list[Fact]:
    """The article's figures not quoted yet, in its order: those of the sections the answer
    quoted first ("What is a token budget?", then "and the numbers?"), then one per other
    section (on a page, nothing quoted yet: the numbers of the whole article, not one table's),
    then the others."""
    stated = [f for f in read.fresh() if states_figure(f.text)]
    near = [f for f in stated if f.section in read.sections()]
    first: dict[str, Fact] = {}
    for fact in stated:
        if fact not in near:
            first.setdefault(fact.section, fact)
    rest = [f for f in stated if f not in near and f not in first.values()]
    return sorted([*near, *first.values(), *rest][:FIGURES], key=lambda f: f.order)


def _reason(fact: Fact, read: _Read) -> float:
    """How plainly a fact gives a reason: by its own words ("because"), else by its section's
    heading ("Why append in call order")."""
    return 1.0 if _REASON.search(fact.text) else 0.5 if _REASONS.search(fact.section) else 0.0


def _reason_list(read: _Read) -> list[Fact]:
    """The items of a list its lead announces as reasons ("There are three reasons:"), in a
    section the answer quoted or one sharing the earlier question's words."""
    asked = read.context_terms
    for group, lead in read.leads.items():
        rows = read.group(group)
        if not rows or not _REASONS.search(lead):
            continue
        section = rows[0].section
        if section in read.sections() or asked & terms(section):
            return [f for f in rows if f.order not in read.said][:OTHER_ROWS]
    return []


def _others(read: _Read) -> list[Fact]:
    """The other items or rows of the list or table the ask is about: the one whose lead,
    heading and other rows share most of the conversation's words (the quoted one on a tie),
    or, for a quoted sentence opening a paragraph, the section's other such paragraphs."""
    asked = terms(f"{read.context} {read.asked}")
    quoted_groups = {f.group for f in read.quoted if f.kind in ("item", "row")}
    groups = {f.group for f in read.facts if f.kind in ("item", "row")}

    def score(group: int) -> tuple[float, bool]:
        rows = [f for f in read.group(group) if f.order not in read.said]
        if not rows:
            return 0.0, False
        text = " ".join([read.leads.get(group, ""), rows[0].section, rows[0].header])
        words = terms(text) | {t for f in rows for t in _fact_terms(f)}
        return sum(read.rarity.get(t, 1.0) for t in asked & words), group in quoted_groups

    best = max(groups, key=score, default=None)
    if best is not None and score(best)[0] > 0:
        return [f for f in read.group(best) if f.order not in read.said][:OTHER_ROWS]
    return _other_paragraphs(read)


def _other_paragraphs(read: _Read) -> list[Fact]:
    """A quoted sentence opening a paragraph ("Sliding window counter."): the section's other
    paragraphs opening alike (with a label when it is one), each by its first two sentences."""
    opening = {f.group: f for f in reversed(read.facts) if f.kind == "sentence"}
    lead = next((f for f in read.quoted if opening.get(f.group) is f), None)
    if lead is None:
        return []
    label = len(lead.text.split()) <= 4 or len(lead.text) <= 8
    picked = []
    for kind, section, text, _ in blocks(read.body):
        first = _SENTENCE.split(text)
        if kind != "paragraph" or section != lead.section or text.startswith(lead.text):
            continue
        if label and not (len(first[0].split()) <= 4 or len(first[0]) <= 8):
            continue
        said = " ".join(first[:2]) if label else first[0]
        picked.append(Fact(said, "sentence", section, len(picked)))
    return picked[:OTHER_ROWS]


def _example(read: _Read) -> str:
    """An example: a sentence giving one, a list or table announced as one (with the sentence
    after it), or a code block; the one nearest the quote and the earlier question."""
    candidates = _examples(read)
    for block in code_blocks(read.body):
        near = CODE_NEAR if block.section in read.sections() else 0.0
        score = near + _overlap(terms(block.code), read)
        candidates.append((score, fenced(block.code, block.info)))
    return max(candidates, key=lambda c: c[0])[1] if candidates else ""


def _examples(read: _Read) -> list[tuple[float, str]]:
    found: list[tuple[float, str]] = []
    for fact in read.fresh():
        if _EXAMPLE.search(fact.text):
            found.append((_closeness(fact, read), _render([fact], _lang(fact.text))))
    for group, lead in read.leads.items():
        rows = read.group(group)
        if rows and _STRONG_EXAMPLE.search(lead):
            after = read.facts[rows[-1].order + 1 : rows[-1].order + 2]
            tail = [f for f in after if f.kind == "sentence" and f.section == rows[0].section]
            shown = [*rows[:OTHER_ROWS], *tail]
            found.append((ANNOUNCED + _closeness(rows[0], read), _render(shown, _lang(lead))))
    return found


def _lang(text: str) -> str:
    return "en" if text.isascii() else "zh"


def _overlap(words: set[str], read: _Read) -> float:
    return sum(read.rarity.get(t, 0.0) for t in read.context_terms & words)


def _closeness(fact: Fact, read: _Read) -> float:
    """How near a fact is to what was asked: the earlier question's rarer words it shares,
    and whether it follows a quoted fact closely in the same section."""
    after = [fact.order - q.order for q in read.quoted if q.section == fact.section]
    near = [d for d in after if 0 < d <= 3]
    return _overlap(_fact_terms(fact), read) + (1 / min(near) if near else 0.5 if after else 0.0)


def _leads(body: str, facts: list[Fact]) -> dict[int, str]:
    """The sentence introducing each list or table ("…four ways to end:"), by its group:
    quoting leaves it out (it ends with a colon), but it says what the list is."""
    lines = FENCED.sub("", body).splitlines()
    leads: dict[int, str] = {}
    for at, line in enumerate(lines[:-1]):
        text = line.strip()
        if not text.endswith((":", "：")) or text.startswith("#"):
            continue
        below = [ln.strip() for ln in lines[at + 1 : at + 5] if ln.strip()]
        if not below or not re.match(r"^(\||[-*+] |\d+[.)] )", below[0]):
            continue
        probe = _probe(below)
        group = next(
            (f.group for f in facts if f.kind != "sentence" and all(p in f.text for p in probe)),
            None,
        )
        if group is not None and probe:
            leads.setdefault(group, plain(text))
    return leads


def _probe(below: list[str]) -> list[str]:
    """The first item or row under a lead, as pieces its fact holds."""
    first = below[0]
    if first.startswith("|"):
        rows = [ln for ln in below[1:] if ln.startswith("|") and not TABLE_RULE.match(ln)]
        return [plain(c) for c in (rows[0].strip("|").split("|") if rows else []) if plain(c)]
    return [plain(re.sub(r"^([-*+]|\d+[.)])\s+", "", first))[:24]]


def _code(read: _Read) -> str:
    """The code block in a section the answer quoted, else the one sharing most of the
    earlier question's words, as a fenced block."""
    blocks = code_blocks(read.body)
    if not blocks:
        return ""
    sections = read.sections()
    asked = read.context_terms
    best = max(blocks, key=lambda b: (b.section in sections, len(asked & terms(b.code))))
    return fenced(best.code, best.info)


def _where(quoted: list[Fact], article: dict, lang: str) -> str:
    """The section the answer's first quote came from, and the quote again."""
    first = next((f for f in quoted if f.section), None)
    if first is None:
        return ""
    line = WHERE[lang].format(section=inert(first.section), link=_link(article))
    return _cite(f"{line}\n\n{_render([first], lang)}", article, lang)


def _cite(text: str, article: dict, lang: str) -> str:
    return f"{text}\n\n{SOURCE[lang]}{_link(article)}"
