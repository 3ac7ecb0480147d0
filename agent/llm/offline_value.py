"""A value asked for that only the article's code states: the code line giving it.

Facts are picked from prose, tables and lists (offline_text leaves code out), so a value the
article writes only in code was never quoted: "What capacity is configured for the Redis
channel layer?" got the sentence saying what capacity means, while the settings block says
`"capacity": 100`; "How many dimensions does the vector column have?" got "a 768-dimension
vector will simply be rejected", while the table is declared `vector(384)`. For a value ask
whose quote gives no asked thing its value, the lead article's code line that does comes
after the quote: a line where a word of the question names what a number is given to.
"""

from __future__ import annotations

import re

from agent.llm.offline_artifact import block_lead
from agent.llm.offline_figure_pick import _assigns
from agent.llm.offline_figures import asks_for_figure
from agent.llm.offline_render import CODE
from agent.llm.offline_shape import Block, code_blocks, fenced
from agent.llm.offline_text import Fact, plain

# "What capacity is configured…?", "which port is it set to?", "what expiry do they use?": a
# noun asked for by the setting that gives it, beside the figure asks offline_figures reads.
_ASKS_SETTING = re.compile(
    r"\b(?:what|which)\s+(?:[\w.-]+\s+){1,3}(?:is|are|was|were|gets?|do|does)\s+"
    r"(?:\w+\s+){0,3}(?:configured|set|used|given|passed|declared)\b",
    re.IGNORECASE,
)
# A name given a number in code: `"capacity": 100`, `max_model_calls=5`, `vector(384)`,
# `ef_search = 100`. (Up to one quote or closing bracket between them: a dict key.)
_GIVEN = re.compile(r"([A-Za-z_][\w.]*)[\"'\]]?\s*(?:=|:|\()\s*(\d[\d_.]*)")
_WORD = re.compile(r"[A-Za-z][\w.]*")
# Words of an ask that name no setting however code spells them ("limit=8" is the limit of a
# call, not the one asked about in "what is the limit on…?"; SQL's LIMIT alike).
_NOT_NAMES = frozenset(
    "what which how many much does did the for and with set used default value limit number "
    "size max min maximum minimum is are".split()
)
MIN_NAME = 3  # "k", "m": a letter alone matches too many code lines ("k = 60" is prose too)


def asks_value(question: str) -> bool:
    """Does the question ask for a value: a figure, or what a setting is set to?"""
    return asks_for_figure(question) or bool(_ASKS_SETTING.search(question))


def valued(*, question: str, body: str, facts: list[Fact]) -> list[Fact]:
    """`facts` and, for a value ask they give no asked value, the code line of `body` that does."""
    names = _names(question)
    if not names or not asks_value(question) or any(_assigns(f.text, names) for f in facts):
        return facts
    quoted = " ".join(fact.text for fact in facts)
    for block in code_blocks(body):
        for line in block.code.splitlines():
            value = _value(line, names)
            if value and not _holds(quoted, value):
                return [*facts, *_stated(body, block, line, value, facts)]
    return facts


def _stated(body: str, block: Block, line: str, value: str, facts: list[Fact]) -> list[Fact]:
    """The code line, after the sentence introducing its block when that says the value too
    ("Our embedding model produces 384 numbers per passage, so:"): the article's own words."""
    order = max((fact.order for fact in facts), default=0) + 1
    code = Fact(fenced(line.strip(), block.info), CODE, block.section, order + 1)
    lead = plain(block_lead(body, block.code))
    if not _holds(lead, value):
        return [code]
    return [Fact(lead, "sentence", block.section, order), code]


def _holds(text: str, value: str) -> bool:
    """Does `text` write the number `value` (not as a part of another: 384 is not in 3840)?"""
    return bool(re.search(rf"(?<![\d.]){re.escape(value)}(?![\d])", text))


def _names(question: str) -> list[str]:
    """The question's words that may name a setting, lower case, plural or not."""
    words = [w.lower().rstrip(".") for w in _WORD.findall(question)]
    found = [w for w in words if len(w) >= MIN_NAME and w not in _NOT_NAMES]
    return list(dict.fromkeys([*found, *(w[:-1] for w in found if w.endswith("s"))]))


def _value(line: str, names: list[str]) -> str:
    """The number `line` gives one of `names`, "" when none: the name itself, or an
    identifier's last part with one more ("model calls" names `max_model_calls`; "model" alone
    does not: it is a part of many names)."""
    for name, number in _GIVEN.findall(line):
        parts = re.split(r"[_.]", name.lower())
        whole = name.lower() in names
        if whole or (len(parts) > 1 and parts[-1] in names and set(parts[:-1]) & set(names)):
            return number
    return ""
