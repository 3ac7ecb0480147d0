"""A reader's symptom: the sentence of a story that says what goes wrong.

Stuck readers describe what they see, not the articles' terms: "My agent keeps searching for
nearly the same thing again and again and never answers. The bill for one question was huge.
How can I put a stop to it?" The "it" of the ask is the trouble, not the sentence nearest it:
read with "The bill for one question was huge." alone, the answer quoted the article's story
of a large bill, not the patterns of a runaway loop. A librarian reads the ask with the
sentence that says what goes wrong, and with what the reader added after it.

A symptom is told by grammar, in either language: something that keeps happening ("keeps
searching", "again and again", 反复, 一直, 总是), does not happen ("never answers", "does
nothing", "returns nothing", 不起作用, 搜不到), happens at the wrong time or way ("all at
once", "instead of", 才, 一下子), fails ("hangs", "times out", "raises", 报错, 卡住, 断了),
or got worse ("got slower", 变慢). Not by the topics it names.

The rest of a reader's clauses about themselves is their set-up ("We run a small Flask
site", "I'm trying to run the loop inside a Celery worker"): its names are excused when no
article uses them (offline_ask's scene), and a short ask ("Any idea why?") is about the story
without it. A symptom's names are the question's: "…but asyncio.gather just hangs" is not
answered by an article that never names asyncio.gather.
"""

from __future__ import annotations

import re

_SYMPTOM_EN = re.compile(
    r"\b(?:keeps?|kept)\s+(?:on\s+)?\w+ing\b|\bagain and again\b|\bover and over\b"
    r"|\b(?:never|nothing|no longer|anymore|any more)\b"
    r"|\b(?:doesn't|don't|didn't|won't|can't|cannot|isn't|aren't|wasn't|weren't|couldn't)\b"
    r"|\b(?:does|do|did|is|are|was|were|can|could|will) not\b"
    r"|\b(?:fails?|failed|failing|hangs?|hung|hanging|freezes?|froze|frozen|crash(?:es|ed|ing)?"
    r"|breaks?|broke|broken|stuck|drops?|dropped|disappears?|disappeared|rejects?|rejected"
    r"|raises?|raised|throws?|threw|errors?|timed out|times out|time out|timeouts?)\b"
    r"|\b(?:instead of|all at once|at once|only ever|at most|too (?:slow|long|many|much))\b"
    r"|\b(?:got|gets|getting|became|becomes) (?:\w+ )?(?:worse|slower|slow|stuck)\b"
    r"|\b(?:slower|worse)\b",
    re.IGNORECASE,
)
_SYMPTOM_ZH = re.compile(
    r"总是|老是|一直|反复|一再|不停|每次都|经常|偶尔|莫名其妙|居然|竟然|根本"
    r"|不起作用|没反应|没有反应|不了|不到|不住|不上|没存|丢了|没了|不见了"
    r"|失败|报错|出错|异常|卡住|卡死|挂起|断了|断开|超时|变慢|越来越|才[^，。？！]{0,6}(?:出来|停|好)"
    r"|一下子|等半天|好久"
)


# Where a sentence's clauses part: a comma or semicolon, or a conjunction that starts a new
# clause ("We run Django behind a proxy and users say…", "…inside a worker, but it hangs").
_CLAUSE = re.compile(
    # (?<!\s): a run of spaces is tried from its start only; tried from each of its spaces,
    # 3,900 spaces took 2.6 s of a worker's CPU per question (the review of pass 51).
    r"[,，;；:：]\s*|(?<!\s)\s+(?=(?:and|but|so|yet|though|although|while|because|until)\s)",
    re.IGNORECASE,
)


def is_symptom(sentence: str) -> bool:
    """True for a sentence that says what goes wrong, in either language."""
    return bool(_SYMPTOM_EN.search(sentence) or _SYMPTOM_ZH.search(sentence))


def symptom_start(parts: list[str], nearest: int) -> int:
    """Where the ask's story of what goes wrong starts: the last sentence before `nearest`
    (the sentence the ask points back to) that says what goes wrong, when `nearest` itself
    does not; else `nearest`."""
    if is_symptom(parts[nearest]):
        return nearest
    return next((n for n in range(nearest - 1, -1, -1) if is_symptom(parts[n])), nearest)


def clauses(sentences: list[str]) -> list[str]:
    """The sentences' clauses, in order."""
    return [c.strip() for s in sentences for c in _CLAUSE.split(s) if c and c.strip()]


def without_set_up(sentences: list[str], about_reader: re.Pattern[str]) -> str:
    """The story told in `sentences` without the reader's set-up: each clause about the reader
    that says nothing goes wrong is left out ("We run a small Flask site"); "" when no clause
    says what goes wrong, or none is set-up."""
    told = clauses(sentences)
    set_up = [c for c in told if about_reader.search(c) and not is_symptom(c)]
    if not set_up or not any(is_symptom(c) for c in told):
        return ""
    return " ".join(c for c in told if c not in set_up)
