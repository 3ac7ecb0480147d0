"""The parts of a question asked in two ("…? …?", "how X, and why Y?", "X 和 Y 分别…").

A two-part question often needs two articles, one for each part. Searched as one question, the
article answering the part with more (or rarer) words fills the top hits, and the other part's
article may not be read at all. Each part is searched on its own too, so its best article is
read; the answer then quotes the article that answers each part.
"""

from __future__ import annotations

import re

from agent.llm.offline_compare import comparison_parts
from agent.llm.offline_text import language, terms

MIN_TERMS = 2  # a part needs this many words of its own (Chinese: twice as many bigrams)
MAX_PARTS = 2
# "…, and how …", "… and why …": a second question joined to the first.
_AND_ASKS = re.compile(
    r",?\s+(?:and|but|plus|also)\s+(?=(?:how|why|what|which|when|where|who|whether|does|do|did|"
    r"is|are|can|could|should|would|will)\b)",
    re.IGNORECASE,
)
# "…；…", "…，又…", "…，另外…": a Chinese second question after a pause.
_ZH_THEN = re.compile(r"[；;]|[，,](?=(?:又|另外|还有|以及|再)[^，,]{2,})")
# "限流和步数上限分别防止了什么？": two subjects sharing one predicate. Found by hand, not by
# one regex: two lazy runs around 和 took 2.7 s on "和 和 和 …" (500 characters).
_RESPECTIVELY = "分别"
_SUBJECT_CHAR = re.compile(r"[\w\s.-]")
_AND = re.compile(r"和|与|跟|以及")
# A part that points back ("what range do *those* scores fall in?", "那些分数") is not a
# question of its own: searched alone, it finds whatever matches its other words. "It" is not
# counted: in a question about a system it names the system ("what m is *its* HNSW index built
# with?") or a thing of its own part ("before embedding *it* with e5") as often as the other
# part's subject, and searched alone such parts found their own articles (docs/answer-quality.md,
# "Thirty-second pass").
_LEANS = re.compile(
    r"\b(they|them|their|those|these|such|the former|the latter)\b|它们|这些|那些|前者|后者",
    re.IGNORECASE,
)


# "…慢多少？有没有实测数据", "…? Any numbers on that?": a part asking for the other's evidence
# has no subject of its own. Searched alone it matched a sentence about data in another article
# ("若要设阈值，应当用自己的数据实测") and was answered from it.
_EVIDENCE_TAIL = re.compile(
    r"^(?:那|请问|另外|以及)?(?:有没有|有无|是否有|能不能给|能否给|可以给|能给|给|有)(?:个|一些|点|些)?"
    r"(?:具体|实测|实际|真实|详细|准确|示例)?的?"
    r"(?:数字|数据|数值|例子|示例|代码|测试|对比|出处|来源|参考|资料|案例|benchmark|基准)"
    r"[吗呢吧啊]?\s*[?？。！!]*$|"
    r"^(?:and |so |but )?(?:are there |is there |got |do you have |have you got )?any "
    r"(?:real |concrete |actual |hard )?(?:numbers|data|figures|benchmarks|examples|sources|"
    r"measurements)(?: (?:on|for|to back) (?:it|that|this|them)(?: up)?)?\s*[?？.!]*$",
    re.IGNORECASE,
)


# "…kill the Postgres query still running? pg_cancel_backend or something like that?": a part
# that only guesses at the answer names what the first part asks for; it is no question of its
# own. Split off, the first part was answered from the step-limits article's opening (it shares
# "stop", "query", "killed") and the guess alone was declined: an answer to a question no
# article answers. Riding with the first part, the guessed name no article mentions declines
# the whole question.
_GUESS_TAIL = re.compile(
    r"^(?:(?:maybe|perhaps|probably|like|something like)\s+)?[^\s?？]+(?:\s+[^\s?？]+){0,3}\s+"
    r"or\s+(?:something|anything)(?:\s+(?:like\s+(?:that|this|it)|similar|else))?\s*[?？.!]*$"
    r"|^[^\s，,。？?][^，,。？?]{0,29}(?:之类的|什么的)(?:吗|吧|呢)?\s*[?？。！!]*$",
    re.IGNORECASE,
)


def question_parts(question: str) -> list[str]:
    """The question's two parts, or [] when it is asked in one.

    Each part must carry words of its own: "What is RRF, and why?" is one question.
    """
    text = question.strip()
    for split in (_by_question_marks, _by_conjunction, _respectively):
        parts = [part.strip(" ,，。") for part in split(text)]
        # A tail asking for evidence rides with what it asks it of; the rest may still split.
        # So does a guess at the answer ("pg_cancel_backend or something like that?").
        parts = parts[:1] + [part for part in parts[1:] if not _tail(part)]
        if len(parts) >= 2 and all(_substantial(part) for part in parts):
            if any(_leans_back(part) for part in parts[1:]):
                return []
            # A third part rides with the second: each part's answer must cover what it asks.
            return [*parts[: MAX_PARTS - 1], " ".join(parts[MAX_PARTS - 1 :])]
    # A comparison's subjects (offline_compare); "they" there points at both, each part's own.
    parts = comparison_parts(text)
    return parts if parts and all(_substantial(part) for part in parts) else []


def _tail(part: str) -> bool:
    """A part asking for the other's evidence, or guessing at its answer: no subject of its own."""
    return bool(_EVIDENCE_TAIL.match(part) or _GUESS_TAIL.match(part))


# "…cut into chunks before *they* are embedded": a pronoun opening a clause of the part's own,
# after words of its own, points at those. Anywhere else ("how does pgvector build *them*?")
# it points at the other part.
_OWN_CLAUSE = re.compile(
    r"\b(?:before|after|when|whenever|once|until|while|if|unless|because|since)\s+$",
    re.IGNORECASE,
)


def _leans_back(part: str) -> bool:
    """Whether the part points at the other one ("what range do *those* scores fall in?")."""
    for match in _LEANS.finditer(part):
        before = part[: match.start()]
        if not (_OWN_CLAUSE.search(before) and _substantial(before)):
            return True
    return False


def _by_question_marks(text: str) -> list[str]:
    return [part for part in re.split(r"(?<=[?？])\s*", text) if part.strip()]


def _by_conjunction(text: str) -> list[str]:
    pieces = _AND_ASKS.split(text, maxsplit=1)
    if len(pieces) == 2:
        return pieces
    return _ZH_THEN.split(text, maxsplit=1)


def _respectively(text: str) -> list[str]:
    at = text.find(_RESPECTIVELY)
    if at < 0 or not text[at + len(_RESPECTIVELY) :].strip():
        return []
    # The subjects are the run of words before 分别; what comes before them ("在 Postgres 里，")
    # frames both parts.
    start = at
    while start > 0 and _SUBJECT_CHAR.match(text[start - 1]):
        start -= 1
    subjects = text[start:at]
    conjunction = _AND.search(subjects)
    if not conjunction:
        return []
    a, b = subjects[: conjunction.start()].strip(), subjects[conjunction.end() :].strip()
    if len(a) < 2 or len(b) < 2:
        return []
    head, rest = text[:start], text[at + len(_RESPECTIVELY) :]
    return [f"{head}{a}{rest}", f"{head}{b}{rest}"]


def _substantial(part: str) -> bool:
    need = 2 * MIN_TERMS if language(part) == "zh" else MIN_TERMS
    return len(terms(part)) >= need
