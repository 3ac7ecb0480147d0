"""The quote shaped to what the question asks for, read from its grammar.

The facts an answer quotes are picked by the words they share with the question
(offline_pick); this module fits what was picked to the kind of ask:

- A reader asking for code ("show me the SQL…", "what does the config look like?", "代码怎么写？")
  wants the article's code block, which is no fact (offline_text drops code): the lead article's
  block sharing most of the question's words comes after its facts.
- A list item read alone is a fragment ("network round trip from browser to your server,"): it
  comes with the sentence that leads into its list ("It is made up of:").
- A reader asking for several things ("what are the steps…", "list the…", "哪些", "哪几种") gets
  the whole short list or table the picked item or row belongs to, not one line of it.
- A "why" question whose words a "Why …" heading of the lead article holds ("Why append in call
  order") is answered by that section: the article gives its reasons there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from agent.llm.offline_artifact import artifact_wanted, asks_artifact, block_weight
from agent.llm.offline_explain import _WHY
from agent.llm.offline_facts import _facts, _leans, _standalone
from agent.llm.offline_render import CODE
from agent.llm.offline_text import _SPLIT, Fact, blocks, plain, sentences, terms

MAX_CODE_LINES = 30  # a longer block is a program to read on the page, not an answer to quote
MAX_LIST = 8  # list items brought along for "what are the steps?"
MAX_ROWS = 12  # table rows brought along: a field table is read whole
WHY_FACTS = 2  # the opening sentences of a "Why …" section with no list of reasons

# A noun naming code: what a reader asks to be shown. The gaps between the words are bounded
# (80 characters): an unbounded `.*` made a 4,800-character "show me show me …" cost 0.16 s.
_CODE_NOUN = (
    r"(?:code|sql|snippet|query|queries|statement|config|configuration|settings?|python|"
    r"function|command|example)"
)
_ASKS_CODE = re.compile(
    rf"\b(?:show|give|send)\s+(?:me|us)\b.{{0,80}}\b{_CODE_NOUN}\b"
    rf"|\bshow\s+(?:me|us)\s+how\b"
    rf"|\b{_CODE_NOUN}\b.{{0,80}}\blooks?\s+like\b"
    rf"|\bwhat(?:'s|\s+is|\s+are)\s+the\s+(?:[\w.-]+\s+){{0,2}}{_CODE_NOUN}\b"
    rf"|\bwhat\s+(?:sql|code|query|command)\b"
    r"|(?:代码|函数|配置|语句|SQL|sql).{0,6}(?:怎么写|如何写|是什么样|什么样|长什么样)"
    r"|给我看.{0,30}(?:代码|函数|配置|语句|SQL|sql)",
    re.IGNORECASE,
)
# A question asking for several things: a list, its steps, options, kinds or fields.
# A plural noun counts only as what is asked for ("what patterns…", "the steps of…"), not as a
# subject asked about ("what do the capacity and expiry options control?"). "Which X do…" asks
# for several only when X is plural: "which operator class do I use?" wants one row.
_ASKS_MANY = re.compile(
    r"\blist\b|\bwhat\s+are\s+the\b|\bwhich\s+(?:\w+\s+){0,3}are\b"
    r"|\bwhich\s+(?:\w+\s+){0,2}\w*[^\Ws]s\s+do\b|\bin\s+what\s+ways\b"
    r"|\b(?:what|which|the)\s+(?:\w+\s+){0,2}(?:steps|phases|stages|options|ways|kinds|types|"
    r"patterns|fields|rules|parameters|pitfalls|mistakes)\b"
    r"|哪些|哪几|几种|几个|步骤|阶段|有什么坑|什么坑",
    re.IGNORECASE,
)
_WHY_HEADING = re.compile(r"^\W*(?:why\b|为什么)", re.IGNORECASE)
FENCED = re.compile(r"^\s*(```|~~~)([^\n]*)\n(.*?)^\s*\1[^\n]*$", re.MULTILINE | re.DOTALL)
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Block:
    """A fenced code block of an article, under its section heading."""

    info: str
    code: str
    section: str


def asks_code(question: str) -> bool:
    """Does the question ask to be shown code, SQL or a configuration?"""
    return bool(_ASKS_CODE.search(question)) or asks_artifact(question)


def asks_many(question: str) -> bool:
    """Does the question ask for several things: steps, options, a list?"""
    return bool(_ASKS_MANY.search(question))


def shaped(
    *, question: str, source: dict, facts: list[Fact], wanted: dict[str, float], lead: bool
) -> list[Fact]:
    """`facts` (one article's picks) fitted to the ask: whole lists, lead-ins, code.

    `lead`: the article the answer opens with; only its code block is quoted.
    """
    body = str(source.get("body") or "")
    every = _facts(source)
    if lead and _WHY.search(question):
        facts = _why_section(facts, every, wanted)
    if asks_many(question):
        facts = _whole_lists(facts, every)
    facts = _with_lead_ins(facts, body)
    title = str(source.get("title") or "")
    block = (
        _best_block(body, artifact_wanted(question, wanted, title), facts)
        if lead and asks_code(question)
        else None
    )
    if block is None:
        return facts
    order = max((fact.order for fact in facts), default=0) + 1
    return [*facts, Fact(fenced(block.code, block.info), CODE, block.section, order)]


def _why_section(facts: list[Fact], every: list[Fact], wanted: dict[str, float]) -> list[Fact]:
    """The reasons a "Why …" section gives, when its heading holds two of the question's words
    and no fact picked is in it: its list of reasons, else its opening sentences."""
    best, best_weight = "", 0.0
    for section in dict.fromkeys(fact.section for fact in every):
        if not _WHY_HEADING.match(section):
            continue
        shared = terms(section) & set(wanted)
        weight = sum(wanted[term] for term in shared)
        if len(shared) >= 2 and weight > best_weight:
            best, best_weight = section, weight
    if not best or any(fact.section == best for fact in facts):
        return facts
    inside = [fact for fact in every if fact.section == best]
    items = [fact for fact in inside if fact.kind == "item"]
    if items and len(items) <= MAX_LIST:
        return [fact for fact in items if fact.group == items[0].group]
    return _standalone([fact for fact in inside if fact.kind == "sentence"])[:WHY_FACTS]


def _whole_lists(facts: list[Fact], every: list[Fact]) -> list[Fact]:
    """Each picked item or row with the rest of its list or table, when that is short."""
    chosen = {fact.order: fact for fact in facts}
    for fact in facts:
        if fact.kind not in ("item", "row"):
            continue
        members = [f for f in every if f.group == fact.group and f.kind == fact.kind]
        if len(members) <= (MAX_LIST if fact.kind == "item" else MAX_ROWS):
            chosen.update({member.order: member for member in members})
    return sorted(chosen.values(), key=lambda fact: fact.order)


def _with_lead_ins(facts: list[Fact], body: str) -> list[Fact]:
    """Each picked list item preceded by the sentence leading into its list, once per list."""
    leads = _lead_ins(body)
    out: list[Fact] = []
    seen: set[int] = set()
    for fact in facts:
        lead = leads.get(fact.text[:40]) if fact.kind == "item" else None
        if lead and fact.group not in seen:
            seen.add(fact.group)
            out.extend(
                Fact(text, "sentence", fact.section, fact.order) for text in lead
            )  # same order: sorting keeps it first, being stable
        out.append(fact)
    return out


@lru_cache(maxsize=64)
def _lead_ins(body: str) -> dict[str, tuple[str, ...]]:
    """For each list item (its first 40 characters), the sentence ending in a colon right
    before its list, with the sentence before that when the lead-in leans on it ("It is made
    up of:")."""
    found: dict[str, tuple[str, ...]] = {}
    lead: tuple[str, ...] = ()
    previous = ""
    for kind, _, text, _ in blocks(body):
        if kind == "paragraph":
            lead = _colon_lead(text)
        elif kind == "item" and previous in ("paragraph", "item"):
            if lead:
                found.setdefault(text[:40], lead)
        else:
            lead = ()
        previous = kind
    return found


def _colon_lead(paragraph: str) -> tuple[str, ...]:
    """The paragraph's last sentence when it ends in a colon (what introduces a list)."""
    parts = [s for s in _SPLIT.split(paragraph) if s.strip()]  # "2.1 秒" is no sentence end
    if not parts or not parts[-1].rstrip().endswith((":", "：")):
        return ()
    last = parts[-1].strip()
    kept = sentences(" ".join(parts[:-1]))
    probe = Fact(last, "sentence", "", 0)
    if _leans(probe) and kept:
        return (kept[-1], last)
    return (last,)


def _best_block(body: str, wanted: dict[str, float], facts: list[Fact]) -> Block | None:
    """The article's code block sharing most of the question's weight (its section's words
    count too, and a block in the section of a picked fact is preferred); None if no block
    shares a word."""
    sections = {fact.section for fact in facts}
    best, best_score = None, 0.0
    for block in code_blocks(body):
        if block.code.count("\n") + 1 > MAX_CODE_LINES:
            continue
        score = block_weight(body, block.code, block.section, wanted)
        if block.section in sections:
            score *= 1.5
        if score > best_score:
            best, best_score = block, score
    return best


def fenced(code: str, info: str = "") -> str:
    """`code` as a fenced block no line of it can close: the fence is longer than any run of
    backticks inside."""
    longest = max((len(run) for run in re.findall(r"`+", code)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{code}\n{fence}"


@lru_cache(maxsize=64)
def code_blocks(body: str) -> tuple[Block, ...]:
    """Every fenced code block of `body`, with the heading above it."""
    found = []
    for match in FENCED.finditer(body):
        # A "#" comment in an earlier block is no heading.
        headings = _HEADING.findall(FENCED.sub("", body[: match.start()]))
        section = plain(headings[-1]) if headings else ""
        found.append(Block(match.group(2).strip(), match.group(3).rstrip("\n"), section))
    return tuple(found)
