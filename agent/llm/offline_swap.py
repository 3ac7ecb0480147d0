"""A follow-up that keeps the question and swaps its subject ("what about X?", "那 X 呢？") or
the language of the answer ("and in Chinese?", "用英文说一下").

"What is the per-conversation token budget?" then "what about the step limit?" asks the same
thing of a new subject. Searched with the earlier question in front, the earlier subject's
words outweigh the new one's, and the answer quoted the token-budget article again. The new
subject is searched on its own too, and its best article is read first.
"""

from __future__ import annotations

import re

from agent.llm.offline_text import terms

# "what about X?", "how about X?", "and what about X?", "ok, and X?"; "and X" must not open a
# question of its own ("and how is it set?", "and if one fails…"): that one leans on the
# earlier subject, or asks a new question in full.
_EN = re.compile(
    r"^(?:\W*(?:ok(?:ay)?|so|but|then|right)?\W*(?:and\s+)?(?:what|how)\s+about\s+(?P<a>.+?)|"
    r"^\W*(?:ok(?:ay)?|so|right)?\W*and\s+(?!(?:what|how|why|when|where|who|whom|whose|which|"
    r"whether|if|is|are|was|were|do|does|did|can|could|should|would|will|has|have|had|so|then|"
    r"also)\b)(?P<b>.+?))\s*[?？.!。！]*\s*$",
    re.IGNORECASE,
)
# "那 X 呢？", "X 呢？", "还有 X 呢？", "那 X 怎么样？": one clause, the subject before 呢.
_ZH = re.compile(
    r"^\s*(?:那么|那(?![个些种样位条篇次])|还有|另外|而)?\s*(?P<c>[^，,。？?！!；;]+?)\s*(?:呢|怎么样|又如何|又怎样)"
    r"\s*[？?。！!]*\s*$"
)
# The subject must be a thing of its own, not the earlier one pointed at ("and that one?",
# "那它呢？", "those?"): a pointing word keeps the earlier subject.
_POINTS_BACK = re.compile(
    r"\b(it|its|that|this|those|these|they|them|one|ones|same|either|both|the other)\b|"
    r"它|这|那|其|前者|后者|两者",
    re.IGNORECASE,
)
# "and in Chinese?", "英文呢？" ask for the same answer in a language, not about a new subject.
_LANGUAGE = re.compile(
    r"^\W*(?:in\s+)?(?:chinese|english|mandarin)\W*$|^\s*(?:用|换成)?(?:中文|英文|汉语|英语)\s*$",
    re.IGNORECASE,
)


def swapped_subject(question: str) -> str:
    """The new subject of a follow-up asked as "what about X?" or "那 X 呢？", else ""."""
    text = question.strip()
    match = _EN.match(text) or _ZH.match(text)
    if not match:
        return ""
    subject = next(group for group in match.groups() if group is not None).strip(" ,，")
    if _POINTS_BACK.search(subject) or _LANGUAGE.match(subject) or not terms(subject):
        return ""
    return subject


# "and in Chinese?", "can you say that in English?", "用中文说一下", "英文呢？": the question
# before, answered in that language. Searched as asked, "Chinese" found the article on Chinese
# full-text search; the reader asked for no new subject.
_IN_LANGUAGE = re.compile(
    r"^\W*(?:ok(?:ay)?\W*|so\W*)?(?:and\s+|now\s+|please\s+)?(?:(?:can|could) you\s+)?"
    r"(?:(?:say|answer|give|put|write)\s+(?:it|that|this|the answer|me that)\s+)?(?:in\s+)?"
    r"(?P<en>chinese|english|mandarin)(?:\s+please)?\W*$|"
    r"^\s*(?:那|请|能不能|可以)?(?:用|换成|换)?(?P<zh>中文|英文|汉语|英语)"
    r"(?:说|回答|讲|写)?(?:一下|一遍)?(?:吗|呢|吧)?\s*[？?。！!]*\s*$",
    re.IGNORECASE,
)
_CODES = {"chinese": "zh", "mandarin": "zh", "中文": "zh", "汉语": "zh", "english": "en",
          "英文": "en", "英语": "en"}  # fmt: skip


def asked_language(question: str) -> str:
    """The language a follow-up asks the last answer in ("zh", "en"), else ""."""
    match = _IN_LANGUAGE.match(question.strip())
    if not match:
        return ""
    return _CODES[(match.group("en") or match.group("zh")).lower()]
