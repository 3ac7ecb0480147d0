"""Asks for a downside, a cost, a limit or a comparison, and the sentences that weigh.

"What's the catch with X?", "X or Y?", "how do X and Y differ?", "X 有什么缺点？", "X 和 Y 哪个好？"
are answered by the sentence that weighs one thing against another: "Exact, but memory grows
with the limit", "Its weakness is…", "…at the cost of memory and build time", "缺点是…",
"但代价也明显". Picked by the question's words alone, the quote was often the sentence naming
the subject ("Sliding window counter.") rather than the one saying what goes against it.

Both are read by grammar: contrast conjunctions, words for faults and costs, comparatives.
A sentence that weighs gets a head start among the facts sharing the question's words; it
must still share them (offline_pick), so a weighing sentence on another subject is not quoted.
"""

from __future__ import annotations

import re

from agent.llm.offline_text import Fact

WEIGHS_BONUS = 1.5  # a weighing fact's head start when the ask weighs

_ASKS = re.compile(
    r"\b(downsides?|drawbacks?|disadvantages?|weak(ness|nesses|er)?|shortcomings?|pitfalls?|"
    r"gotchas?|caveats?|(?:the|any|a) catch|trade-?offs?|flaws?|limitations?|blind spots?|cons|"
    r"costs?|price|pay|penalty|risks?|problems? with|wrong with|go(es)? wrong|fall short|"
    r"wrong choice|when (should|would|do) (i|you|we) not|when not|not worth|worth it|"
    r"vs\.?|versus|differ(s|ence|ences)?|compare[sd]?|comparison|better|worse|prefer)\b",
    re.IGNORECASE,
)
_ASKS_ZH = re.compile(
    r"缺点|短板|弱点|弊端|缺陷|局限|劣势|不足|代价|坑|风险|毛病|问题在|不好(?!意思)|"
    r"区别|差别|差异|不同|相比|对比|比较|哪个|哪种|优缺点|优劣|什么时候不|不该|不适合|值得"
)
_WEIGHS = re.compile(
    r"\b(but|however|although|though|whereas|instead|rather than|unlike|yet|"
    r"weakness|drawback|downside|flaw|blind spots?|trade-?off|catch|caveat|"
    r"at the cost of|costs?|expensive|cheaper|slower|faster|better|worse|fewer|less|more than|"
    r"degrades?|fails?|breaks?|struggles?|punish\w*|penalty|risk|mistake)\b",
    re.IGNORECASE,
)
_WEIGHS_ZH = re.compile(
    # 更 as "more", not in 更新/更改/变更; 问题 as "the problem is", not any mention of one.
    r"但|却|然而|不过|缺点|代价|短板|坑|不如|(?<!变)更(?![新改换])|失效|退化|局限|不足"
    r"|问题(?:是|在于)|只能|无法|不宜"
)


def asks_weighing(question: str) -> bool:
    """Whether the question asks what goes against a thing, or how two compare."""
    return bool(_ASKS.search(question) or _ASKS_ZH.search(question) or _choice(question))


def _choice(question: str) -> bool:
    """ "X or Y for Z?": a choice for a purpose. Found as two searches, not `or .+for`, which
    ran to the end of the line from each "or" and back (a message of "or"s took 134 ms)."""
    either = re.search(r"\bor\s", question, re.IGNORECASE)
    return bool(either and re.search(r"\bfor\b", question[either.end() :], re.IGNORECASE))


def weighs(text: str) -> bool:
    """Whether a sentence weighs: a contrast, a fault or cost, a comparative."""
    return bool(_WEIGHS.search(text) or _WEIGHS_ZH.search(text))


def weighed(boost: list[float], facts: list[Fact], question: str) -> list[float]:
    """`boost` with the weighing facts' head start, when the question weighs."""
    if not asks_weighing(question):
        return boost
    return [
        b * WEIGHS_BONUS if weighs(fact.text) else b for b, fact in zip(boost, facts, strict=True)
    ]
