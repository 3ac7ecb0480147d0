"""A question asking which things a subject supports, and the sentence that would answer it.

"Which browsers does Docent support?" or "Docent 支持哪些大模型？" asks for a list the blog
gives only where it says so: a sentence that holds a form of "support" (支持, 兼容) and the
kind of thing asked for. Every word of such a question is one the blog writes in another
sense ("browser", "model", "support" in "needs explicit upgrade support"), so the search clears
the bar (0.6-0.8) and the quote was a sentence about the browser, or about the model, that
says nothing of what is supported.
"""

from __future__ import annotations

import re

from agent.llm.offline_text import Fact, terms

# "which browsers does Docent support", "what kinds of databases is it compatible with",
# "which languages besides English and Chinese does Docent support": the kind is the word after
# "which" (or "kinds of"); the verb comes later in the same clause.
_ASKS_EN = re.compile(
    r"\b(?:which|what)\s+(?:(?:kinds?|sorts?|types?)\s+of\s+)?(?P<kind>[a-z][a-z0-9-]+)\b"
    r"[^?.!;]*?\b(?:does|do|can|will|is|are)\b[^?.!;]*?"
    r"\b(?:support(?:s|ed)?|compatible)\b",
    re.IGNORECASE,
)
# The auxiliary itself after "what" ("What does Docent support?") names no kind.
_NOT_KIND = frozenset("does do can will is are".split())
# "支持哪些大模型", "兼容什么数据库", "支持哪几种语言": the kind follows the question word.
_ASKS_ZH = re.compile(
    r"(?:支持|兼容)(?:哪些|哪几种|哪几个|哪种|哪个|什么样的|什么|啥)(?P<kind>[\u4e00-\u9fff]{1,6})"
)
_SAYS_SUPPORT = re.compile(r"\bsupport|\bcompatib|支持|兼容", re.IGNORECASE)


def supported_kind(question: str) -> str:
    """The kind of thing a question asks which of a subject supports ("browsers", "大模型"),
    or "" for any other question ("Does Docent support cancelling a turn?" asks yes or no)."""
    found = _ASKS_ZH.search(question)
    if found:
        return found.group("kind")
    found = _ASKS_EN.search(question)
    if found and found.group("kind").lower() not in _NOT_KIND:
        return found.group("kind")
    return ""


def states_support(facts: list[Fact], kind: str) -> bool:
    """Does one of `facts` say what is supported: a form of "support" beside the kind asked
    for? Across languages ("支持哪些大模型？" quoting an English article) no word of the kind
    can match, so the form of "support" alone must be there."""
    wanted = terms(kind)
    for fact in facts:
        if not _SAYS_SUPPORT.search(fact.text):
            continue
        if not wanted or wanted & terms(fact.text) or _other_script(fact.text, kind):
            return True
    return False


def _other_script(text: str, kind: str) -> bool:
    """A Chinese kind against an English sentence, or the reverse."""
    return (not kind.isascii()) != bool(re.search(r"[\u4e00-\u9fff]", text))


def not_stated_label(kind: str, lang: str) -> str:
    """What the decline says the articles do not mention ("supported browsers", "支持的大模型")."""
    return f"支持的{kind}" if lang == "zh" else f"supported {kind.lower()}"
