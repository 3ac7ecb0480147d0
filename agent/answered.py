"""Whether a turn answered the question: at least one valid citation, and no decline.

Framework-free (the loop sends the verdict in `done`); the same rule labels old rows in the
data migration, and applies to every model, so a real model's "I couldn't find that" counts
as unanswered just like the offline model's.
"""

from __future__ import annotations

import re

from blog.script import simplified_chars

# Finished turns whose text the visitor read as the answer (max_steps: the final-answer call).
FINISHED = ("done", "max_steps")

# Phrases that say "the blog has no answer", in the two languages the blog is written in.
# A decline is said up front, so only the answer's opening is read: an answer that goes on to
# quote "the model says it does not know" or "not covered by CSRF protection" still answers.
_STRONG_EN = (
    r"(could ?n[o']t|can ?n[o']t|did ?n[o']t|was ?n[o']t able to|unable to) find",
    r"(found|find|there is|there's|there are|have|has) (nothing|no (relevant|information|"
    r"articles?|answer|mention|details?|content|posts?))",
    r"no relevant (content|articles?|information|results?)",
    r"(do ?n[o']t|does ?n[o']t|do not) (know|have (an|any) (answer|information))",
    r"no answer (to|for) (that|this|your)",
    r"(outside|beyond) (the )?(scope|what) (of )?(this|the) blog",
)
# "X doesn't cover Y" is a decline only when X is the blog: articles say it of other things.
_WEAK_EN = (
    r"(does ?n[o']t|do ?n[o']t|does not|do not|did not) "
    r"(cover|mention|say|discuss|address|contain|include|give|state)",
    r"(is|are) ?n[o']t (covered|mentioned|discussed|addressed)",
    r"not (covered|mentioned|discussed|addressed)",
)
_BLOG = re.compile(r"\b(blog|articles?|posts?|sources?|knowledge base)\b", re.IGNORECASE)
_DECLINES_ZH = (
    r"没(有)?找到",
    r"找不到",
    r"未(能)?找到",
    r"没有(相关|提到|涉及|介绍|讨论|答案|这方面|关于)",
    r"(并)?未(提到|提及|涉及|介绍|讨论)",
    r"无法(回答|找到|确定)",
    r"不知道",
    r"(没有|不)包含",
    r"(没有|未)(给出|写明|说明)",
)
_STRONG = re.compile("|".join((*_STRONG_EN, *_DECLINES_ZH)), re.IGNORECASE)
_WEAK = re.compile("|".join(_WEAK_EN), re.IGNORECASE)
# The opening: the first sentence, or two when the first is a short lead-in ("Sorry.").
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n\s*\n")
OPENING_MIN_CHARS = 20


def is_decline(text: str) -> bool:
    """True when the answer opens by saying the blog has no answer (English or Chinese, in
    either script: "沒有找到" is "没有找到")."""
    opening = simplified_chars(_opening(text.replace("\u2019", "'")))
    if _STRONG.search(opening):
        return True
    return bool(_WEAK.search(opening) and _BLOG.search(opening))


def _opening(text: str) -> str:
    sentences = [s for s in _SENTENCE_END.split(text.strip()) if s.strip()]
    opening = ""
    for sentence in sentences:
        opening = f"{opening} {sentence}".strip()
        if len(opening) >= OPENING_MIN_CHARS:
            break
    return opening


def turn_declined(*, answer: str, declined: bool | None = None) -> bool:
    """The model's own word (the offline model) when it has one, else the answer's opening."""
    return is_decline(answer) if declined is None else declined


def turn_answered(
    *, status: str, answer: str, citations: list, declined: bool | None = None
) -> bool:
    """A finished turn that cites at least one article and does not decline.

    `declined` is the model's own word when it has one (the offline model); else the answer's
    opening is read (is_decline).
    """
    declined = turn_declined(answer=answer, declined=declined)
    return status in FINISHED and bool(citations) and not declined
