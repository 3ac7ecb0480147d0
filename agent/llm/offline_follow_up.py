"""Follow-up questions: whether a question leans on the one before, and what it is about.

A pronoun ("which of those…", "那个呢？") or almost no words of its own make a follow-up: it
is searched together with the question it leans on, and it is about what the answer before
it quoted (that answer's source lines), unless it names a new subject ("what about X?").
"""

from __future__ import annotations

import re
from functools import cache

from agent.llm.offline_definitions import defined_subject
from agent.llm.offline_more_ask import answer_ask
from agent.llm.offline_render import SOURCE
from agent.llm.offline_replies import found_nothing
from agent.llm.offline_summary_request import _SUMMARY, summary_topic
from agent.llm.offline_text import language, terms
from agent.llm.offline_turn import _Turn

# Words that lean on the previous question ("which of those is cheapest?", "那个呢？").
_FOLLOW_UP = re.compile(
    r"\b(those|these|them|they|it|its|this|there|the two|the first|the second|the latter|"
    r"the former|either|both|the other|same)\b|^\s*(and|but|so|then|also|what about|"
    r"how about)\b|那些|这些|它们|它|哪个|哪一个|其中|上面|前者|后者|那个|这个|两者|两种|"
    # A demonstrative with a measure word points back as "这个" does: "这条记录" (this record),
    # "这一轮" (this turn), "分这么细" (split this finely), "那两路结果" (those two lists).
    r"[这那](?:[种样么条篇次轮俩两位项步段]|一[种条篇次轮个项步])|"
    # "that" with a particle is the object of a phrasal verb: "turn that off", "set that up".
    r"\bthat (?:off|on|up|down|out|back|away|instead)\b|"
    # "one" standing for a thing named before: "Which one did Docent pick?" as 哪个 does
    # ("the one that trades recall for speed" names it in its own clause).
    r"\b(?:which|that) ones?\b|"
    # A leading 那 ("then", or a demonstrative: 那么, 那些, 那里) leans back: "那单次模型调用呢？",
    # "那在生产环境里…", "那上限设多少合适？" (after "why do agents need a step limit?"); not as
    # the first sound of 那不勒斯 (Naples).
    r"^\s*(那(?!不勒斯)|如果|还|再|另外|而)|呢[？?]?\s*$|"
    # "that" after a verb or a preposition points back ("how long does that take?", "is there a
    # limit on that?"); after a noun it starts a clause ("a tool that does not exist").
    r"\b(?:does|do|did|is|was|are|were|will|would|can|could|should|about|for|with|of|on|in|"
    r"from|to|after|before|without|like|by) that\b",
    re.IGNORECASE,
)
# Openings that announce a new subject: what follows is not about the answer before it.
_NEW_TOPIC = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|so|and|also|oh|hey)\W+)?(?:"
    r"unrelated|(?:a |an )?(?:different|other|new|another) (?:topic|subject)|different question|"
    r"new question|on (?:a|an)?\s*(?:different|another|other|unrelated) (?:note|topic)|"
    r"(?:changing|change of|switching|to change the) (?:the )?(?:subject|topic)s?|"
    r"by the way|btw|totally different)\b"
    r"|^\W*(?:好的?\W*|另外\W*)?(?:换个话题|换个问题|换一个问题|换一个话题|换个方向|题外话|顺便问|"
    r"顺带问|问个别的|问点别的|不相关的问题|问个不相关|无关的问题|跟上面无关|和上面无关)",
    re.IGNORECASE,
)


# A fenced block the reader pasted, one line of code at least: what "this" points at.
_PASTED_CODE = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n.*\S.*\n[ \t]*\1", re.MULTILINE | re.DOTALL)
FOLLOW_UP_TERMS = 2  # a question with this few words of its own leans on the one before
# What a "what is X?" may ask without naming anything: the default, the limit, the catch of
# whatever was asked before. "What is a step limit?" then "what is the default?" searched "what
# is the default?" alone and was declined.
_ASPECTS = (
    "default defaults value values limit limits maximum minimum max min cap cost costs price "
    "difference differences catch downside downsides drawback drawbacks tradeoff tradeoffs "
    "benefit benefits advantage advantages reason reasons point purpose risk risks fix "
    "workaround number figure unit exactly typical usual recommended "
    "默认 默认值 上限 下限 区别 差别 代价 成本 缺点 优点 好处 坏处 原因 理由 风险 数值"
)

# The link of each source line: the articles an answer quoted.
_CITED = re.compile(
    "^(?:" + "|".join(map(re.escape, SOURCE.values())) + r")\[[^\]\n]*\]\(([^)\s]+)\)",
    re.MULTILINE,
)


def changes_topic(question: str) -> bool:
    """Whether the question opens by changing the subject: "Unrelated, but how does RRF work?",
    "换个话题：HNSW 怎么调参？". It leans on nothing before it, whatever pronoun it uses."""
    return bool(_NEW_TOPIC.search(question))


def is_follow_up(turn: _Turn) -> bool:
    """A question that leans on the previous one: a pronoun, or almost no words of its own."""
    if not turn.earlier or not turn.leans_on or changes_topic(turn.question):
        return False  # nothing asked before names a topic ("hi", "what can you do?")
    if _PASTED_CODE.search(turn.typed or turn.question):
        return False  # "why does this fail?" over pasted code: "this" is the code
    subject = defined_subject(turn.question, bare=False)
    # "What are the key numbers?" reads as a subject ("key numbers") but is an ask about the
    # answer (offline_more_ask): searched alone, it quoted the rate-limits article's "429".
    asks = bool(answer_ask(turn.question))
    if (
        subject
        and not _names_nothing(subject)
        and not _FOLLOW_UP.search(turn.question)
        and not asks
    ):
        return False  # "How does HNSW work?" names what it asks about, however short
    if _FOLLOW_UP.search(turn.question):
        return True
    if found_nothing(turn.previous_answer):
        # "HNSW index" after a declined "sourdough recipe?" is a new topic: searched together,
        # the two found nothing again. Only a word that leans back ("那…呢") still leans.
        return False
    return _leans_without_words(turn.question, asks)


def _leans_without_words(question: str, asks: bool) -> bool:
    # "举个代码例子", "这是文章哪一节说的？": an ask about the answer, however many characters.
    return _says_little(question) or asks or _subject_dropped(question)


def leans_after_decline(turn: _Turn) -> bool:
    """A question after a decline that would lean on it, had it been answered: too few words of
    its own, or its subject left out. Searched on its own first (it may be a new topic), and
    with the declined question as the fallback: "清理工作该放在哪里？" after a declined "asyncio
    任务被取消时会发生什么？" found the cancellation article only with the question before it."""
    if not turn.earlier or not turn.leans_on or is_follow_up(turn) or changes_topic(turn.question):
        return False
    if not found_nothing(turn.previous_answer) or _PASTED_CODE.search(turn.typed or turn.question):
        return False
    subject = defined_subject(turn.question, bare=False)
    if subject and not _names_nothing(subject):
        return False  # "How does HNSW work?" names what it asks about, however short
    return _leans_without_words(turn.question, bool(answer_ask(turn.question)))


# Characters of Chinese grammar: question words, particles, auxiliaries, measure words. A
# character pair holding one says how the question is asked, not what it is about.
_GRAMMAR = frozenset(
    "的了吗呢吧啊呀么什怎样会是在有要该能可多少几哪谁为何如还就都也又把被让给和与跟或这那个些种不没里"
)


# One word of its own: a two-character word is one pair, a four-character one three ("清理工作").
DROPPED_SUBJECT_PAIRS = 3


def _subject_dropped(question: str) -> bool:
    """A Chinese question that leaves out what it is about, as Chinese does once the subject
    is known: "用完了会怎样？" after a question on the token budget has one pair of its own
    (用完) among pairs of grammar (了会, 会怎, 怎样); searched alone it was declined. A name
    in letters ("HNSW 怎么调参？") or four pairs of its own ("为什么要用二元切分？") name a
    subject."""
    if language(question) != "zh":
        return False
    own = [term for term in terms(question) if not _GRAMMAR & set(term)]
    return not any(term.isascii() for term in own) and len(own) <= DROPPED_SUBJECT_PAIRS


def _names_nothing(subject: str) -> bool:
    """True when every word of a "what is X?" subject is an aspect of something unnamed."""
    return terms(subject) <= _aspect_terms()


@cache
def _aspect_terms() -> frozenset[str]:
    return frozenset(term for word in _ASPECTS.split() for term in terms(word))


def _says_little(question: str) -> bool:
    """Too few words of its own to be about anything alone: it leans on the question before it,
    or on the page it is asked on."""
    chinese = language(question) == "zh"  # two-character terms: twice as many per idea
    return len(terms(question)) <= (2 * FOLLOW_UP_TERMS if chinese else FOLLOW_UP_TERMS)


def cited_articles(answer: str) -> list[str]:
    """The links of the articles an answer cited (its source lines; a decline's offer is none)."""
    return _CITED.findall(answer)


def cited_before(answer: str, hit: dict) -> bool:
    """Whether the previous answer cited the hit's article (its source lines)."""
    return hit.get("url") in set(cited_articles(answer))


def quoted_before(answer: str, hits: list[dict]) -> dict | None:
    """The best-ranked hit for an article the previous answer cited (its source lines), if
    the search found one; None when the search's first hit is already one of them."""
    cited = set(_CITED.findall(answer))
    quoted = next((hit for hit in hits if hit.get("url") in cited), None)
    return quoted if quoted is not None and quoted is not hits[0] else None


def search_query(turn: _Turn) -> str:
    """The question, preceded by the previous question when this one is a follow-up (an ask
    about the answer: the questions before it alone); for "summarize the article about X", X
    alone."""
    if is_follow_up(turn) and answer_ask(turn.question):
        # "举个代码例子" is about the answer, not a subject: its words pulled the search with
        # the question before it under the bar. The questions asked so far find the article.
        # Earlier asks ("举个代码例子" before "为什么？") name no subject either: left out.
        asked = [q for q in turn.earlier if not answer_ask(q)] or turn.earlier
        return " ".join(asked[-2:])[-500:]
    if is_follow_up(turn):
        return f"{turn.leans_on} {turn.question}"[-500:]
    if _SUMMARY.search(turn.question):
        return summary_topic(turn.question)[:500]
    return turn.question[:500]
