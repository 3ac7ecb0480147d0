"""A question asking who made a thing, and the sentence that would answer it.

"Who created Docent?" or "Docent 是谁开发的？" asks for a person or a team. The blog names
Docent in most of its articles, so such a question clears the bar on that name alone (0.64)
and the quote was whatever sentence says most about Docent ("Docent 的原则很简单：先让用户看到
结果，再慢慢存。"). A sentence that says who made something holds the making verb or a word
for its maker ("built by", "作者", "开发"); one without it answers another question.
"""

from __future__ import annotations

import re

from agent.llm.offline_text import Fact

_ASKS_EN = re.compile(
    r"\bwho\s+(?:(?:first|originally|actually|really)\s+)?"
    r"(?:created|made|built|wrote|developed|develops|maintains|designed|founded|owns|started)\b"
    r"|\bwho(?:'s|\s+is|\s+are|\s+was|\s+were)\s+(?:the\s+)?"
    r"(?:authors?|creators?|makers?|developers?|maintainers?|founders?|company|team)\b",
    re.IGNORECASE,
)
_ASKS_ZH = re.compile(
    r"谁(?:写|开发|做|创建|创造|维护|设计|发明|搞)的|是谁(?:写|开发|做|创建|维护|设计)"
    r"|(?:作者|开发者|开发团队|维护者|创始人)是谁|哪(?:家|个)公司(?:开发|做)的?"
)
# The making verb in any form, or its maker, in either language.
_SAYS_MAKER = re.compile(
    r"\b(?:creat|made\b|make[rs]\b|built\b|build(?:er|s)\b|wr[io]t|develop|maintain|design|found(?:ed|er)"
    r"|authored|author\b|authors\b|team\b|compan)"
    r"|作者|开发|维护|创建|设计|团队|公司|写的",
    re.IGNORECASE,
)


def asks_maker(question: str) -> bool:
    """Does `question` ask who made its subject ("Who created Docent?", "Docent 是谁开发的？")?"""
    return bool(_ASKS_EN.search(question) or _ASKS_ZH.search(question))


def states_maker(facts: list[Fact]) -> bool:
    """Does one of `facts` speak of who made something?"""
    return any(_SAYS_MAKER.search(fact.text) for fact in facts)


def maker_label(lang: str) -> str:
    """What the decline says the articles do not mention."""
    return "谁开发了它" if lang == "zh" else "who made it"
