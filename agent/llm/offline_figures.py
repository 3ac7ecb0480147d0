"""Questions that ask for a figure, and facts that give one.

"How many steps does the loop allow?" is answered by a fact with a number in it, and "how long
does the first token take?" by a duration. An article that discusses the topic without the
figure does not answer the question; quoting it anyway reads like an answer and is not one.
"""

from __future__ import annotations

import re

from agent.llm.offline_text import language, terms

_ASKS = re.compile(
    # "Is counting how many messages each visitor sends enough?", "no matter how long it
    # takes": a clause inside a yes/no question, not a figure asked for.
    r"(?<!\bcounting )(?<!\blimiting )(?<!\bcapping )(?<!\bmatter )(?<!\bregardless of )"
    r"\bhow (many|much|long|big|large|small|fast|quick(ly)?|slow|often|far|high|low)\b|"
    r"\bwhat (number|value|size|percentage|share|fraction|ratio)\b|"
    r"\b(default|maximum|minimum|max|min) (value|number|size|setting)\b|"
    r"\b(?:largest|biggest|smallest|highest|lowest|greatest)\s+(?:number|count|size|value|amount)\b|"
    r"\bwhat(?:'s| is| are)? (?:the |its |their )?(default|timeout|limit|threshold)\b|"
    # "What's the step limit?" asks for its value; "what is a step limit?" what one is (the
    # definite article, a noun or two, then a word for an amount).
    r"\bwhat(?:'s| is| are| was) (?:the|its|their|your|docent's) (?:[\w-]+ ){1,2}"
    r"(?:limits?|caps?|budgets?|timeouts?|thresholds?|size|maximum|minimum|allowance|quota|"
    r"dimensions?|default)\s*[?？.!]*\s*$|"
    r"\b(?:set|default(?:s|ed)?) to what\b|\bwhat (?:is|are) (?:it|they) set to\b|"
    # "What's ef_search set to by default?", "what is m by default?": a setting's name (an
    # identifier or one letter), not "what is logged by default?".
    r"\bwhat(?:['’]s| is| are| was)(?: the)? `?(?:[a-z]|[a-z]\w*[_.][\w.]+)`? "
    r"(?:set to|by default)\b|"
    # ("好几个 worker", "十几次", "这几个参数", "哪几个", "没几个人": a few, or which ones, not a
    # number asked for.)
    r"多少|(?<![好十这那哪没])几(?:个|次|秒|毫秒|分钟|倍|条|篇|步)|多久|多长|多大|多快|多高|多低|多频繁|"
    r"默认值|数值|百分之几|几成|默认(是|为|设|设置)(多少|几)",
    re.IGNORECASE,
)
# A duration is asked for by how long or how fast something is, or by a time unit ("a second
# question" is an ordinal).
_ASKS_TIME = re.compile(
    r"\bhow (long|fast|quick(ly)?|slow)\b|"
    r"\b(latency|seconds|(?<!\ba )(?<!\bthe )second|milliseconds?|minutes?|hours?)\b|"
    r"多久|多长时间|多快|耗时|延迟|几秒|几毫秒|几分钟",
    re.IGNORECASE,
)
# "How much slower?", "慢多少？" ask how two things compare: a ratio, a share or a duration
# answers, not a count of something else ("切成…三个片段" is no speed).
_ASKS_RATIO = re.compile(
    r"\bhow much (slower|faster|quicker|longer|shorter|bigger|smaller|larger|better|worse)\b|"
    r"[慢快]多少|[慢快]了?几倍|[慢快]多少倍",
    re.IGNORECASE,
)
# "How many questions per minute?", "how many tokens in a day?" ask for a count: the time unit
# there is the rate's period, not a duration asked for.
# ("a second", "one second" are left out: far more often "a second question" than a period.)
_PERIOD = re.compile(
    r"\b(?:per|a|an|each|every|one|single|within an?|in an?|within one|in one)\s+(?:single\s+)?"
    r"(minute|hour|day|week)\b|\b(?:per|each|every)\s+(second)\b|每(秒|分钟|小时|天|周)",
    re.IGNORECASE,
)
# A count per period is given only by a fact that names the period: "two or three questions"
# does not answer "how many questions per minute?".
_PERIOD_WORDS = {
    "second": r"second|/\s*s\b|秒",
    "minute": r"minute|/\s*min\b|分钟",
    "hour": r"hour|/\s*h\b|小时",
    "day": r"\bday|daily|每天|一天|每日",
    "week": r"week|每周|一周",
}
_ZH_UNIT = {"秒": "second", "分钟": "minute", "小时": "hour", "天": "day", "周": "week"}
# A price is asked for by an amount of money ("how many dollars", "in dollars, roughly?",
# "多少钱"), or as what an amount of tokens costs ("what does a million tokens cost?"): a token
# budget ("40,000 tokens per session") is no price. A question that names money without asking
# an amount ("is the cap there to save money?") asks no figure; "what does a runaway cost?" is
# answered in model calls, and "8k tokens cost in latency" in time.
_PRICE_WORD = re.compile(
    # (Not 花费 or 费用: "一个问题花费多少 token？" asks for tokens.)
    r"\b(dollars?|usd|euros?|cents|money|prices?|pricing|api fees)\b|\$|钱|美元|人民币|价格",
    re.IGNORECASE,
)
_AMOUNT = re.compile(
    r"\bhow (much|many)\b|\bwhat (does|did|do|would|will)\b.{0,60}\bcost|\broughly\b|"
    r"\bwork(s)? out to\b|多少|几",
    re.IGNORECASE,
)
_TOKENS_COST = re.compile(
    r"\b(million|thousand|[\d,.]+\s*[km]?)\s+tokens?\b[^?.!？。]{0,40}\bcost"
    r"(?![^?.!？。]*\bin (latency|time|seconds|ms|calls|steps)\b)",
    re.IGNORECASE,
)
_MONEY = re.compile(
    r"\b(dollars?|usd|euros?|cents|money|prices?|pricing|invoice|api fees)\b|\$|"
    r"\b(million|thousand|[\d,.]+\s*[km]?)\s+tokens?\b[^?.!？。]{0,40}\bcost|"
    r"多少钱|美元|人民币|块钱|价格|费用是多少|花多少钱",
    re.IGNORECASE,
)
_MONEY = re.compile(
    r"[$€£¥]\s?\d|\d\s*(dollars?|usd|euros?|cents)\b|\d\s*(美元|元|块钱)", re.IGNORECASE
)
_ASKS_SHARE = re.compile(r"\b(percent(age)?|share|fraction)\b|%|百分", re.IGNORECASE)

# "one" is left out: far more often "one visitor" than a count.
_NUMBER_WORDS = (
    r"two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|"
    r"forty|fifty|sixty|hundred|thousand|million|billion|half|twice|double|triple|dozen"
)
# Chinese numerals count before a measure word; "一个", "一种" are "a", not a figure.
_ZH_NUMBER = (
    r"(?!一[个种些下样起般直定])[一二两三四五六七八九十百千万亿半]+"
    r"(?=[个次秒步条倍篇种层位分小天周轮毫微千万])"
)
_NUMBER = rf"(?:(?<![A-Za-z_\-])\d[\d,.]*|\b(?:{_NUMBER_WORDS})\b|{_ZH_NUMBER})"
_ANY = re.compile(_NUMBER, re.IGNORECASE)
_TIME = re.compile(
    rf"{_NUMBER}\s*(?:-\s*)?(?:ms\b|s\b|µs\b|us\b|sec(ond)?s?\b|min(ute)?s?\b|hours?\b|days?\b|"
    r"weeks?\b|毫秒|微秒|秒|分钟|小时|天|周)",
    re.IGNORECASE,
)
_SHARE = re.compile(
    rf"{_NUMBER}\s*(?:%|percent\b|per cent\b)|百分之|[一二三四五六七八九]成", re.IGNORECASE
)
_RATIO = re.compile(
    rf"{_NUMBER}\s*(?:x\b|×|times\b|倍)|\b(?:twice|half|double|triple)\b|一半", re.IGNORECASE
)


# A name and its version ("since Channels 4", "PostgreSQL 18", "pgvector 0.8") or a year names
# a thing, it does not answer "how many". A capitalised word counts as a name only mid-sentence:
# "Use 2 workers" opens with a verb. A number with a unit or a counted noun after it
# ("Retry-After 30 seconds") is a figure whatever comes before it.
_NOT_A_FIGURE = re.compile(
    r"(?:(?<=[\w,;:)] )[A-Z][\w+-]*|\b[A-Za-z]*[a-z][A-Z]\w*|\b(?:pgvector|python|django|"
    r"channels|version|v))\s+v?\d+(?:\.\d+)*\b"
    r"(?!\s*(?:%|ms\b|µs\b|s\b|sec|second|minute|hour|day|token|request|message|call|step|"
    r"worker|row|chunk|item|time|char|word|byte|[kmg]b\b))"
    r"|\b(?:19|20)\d\d\b"
    # Items already named, counted again: "the other two", "these three", "both".
    r"|\b(?:the other|the|these|those|all)\s+(?:two|three|four)\b"
)


# "Which Redis version does channels_redis need?" is answered by a version of Redis, and only by
# one: "Channels 4" in the quoted passage does not answer it, nor does any other number.
_ASKS_VERSION = re.compile(
    r"\b(?:which|what)\s+(?:[\w.-]+\s+){0,2}versions?\b|哪个版本|什么版本|版本号|哪一版",
    re.IGNORECASE,
)
# The thing whose version is asked: "which Redis version", "what version of Redis", or in
# Chinese the Latin name before 版本 ("pgvector 从哪个版本…").
_VERSION_OF = (
    re.compile(r"\bversions?\s+of\s+([A-Za-z][\w.+-]*)", re.IGNORECASE),
    re.compile(r"\b([A-Za-z][\w.+-]*)\s+versions?\b", re.IGNORECASE),
    re.compile(r"([A-Za-z][\w.+-]*)[^A-Za-z]{0,6}?版本"),
)
_NOT_A_SUBJECT = frozenset("which what the a an this that".split())
_VERSION_NUMBER = r"\s*v?\d+(?:\.\d+)*\b"
_ANY_VERSION = re.compile(
    r"(?<![\w.])\d+(?:\.\d+)+(?![\w.])|\b(?:version|v)\s?\d+|\d+\.x\b", re.IGNORECASE
)


# "How often should I feed the starter?": "often" says what kind of figure is asked, not what
# it is about. As a wanted word it picked "feed it more often" over "feed it every 12 hours",
# which then looked too weak beside it to give the figure: the author's own article declined.
_FRAME = re.compile(
    r"\bhow (often|long|fast|quick(?:ly)?|slow|big|large|small|far|high|low)\b", re.IGNORECASE
)


def frame_terms(question: str) -> set[str]:
    """The words of "how often", "how long"… in a question that asks for a figure."""
    if not asks_for_figure(question):
        return set()
    return terms(" ".join(found.group(1) for found in _FRAME.finditer(question)))


def asks_for_figure(question: str) -> bool:
    """True for "how many…", "what is the default…", "which version…", "多少…", "多久…", and
    for a price."""
    return bool(_ASKS.search(question) or _ASKS_VERSION.search(question) or asks_price(question))


def asks_price(question: str) -> bool:
    """True for "how many dollars…", "what does a million tokens cost?", "多少钱"."""
    if _TOKENS_COST.search(question):
        return True
    return bool(_PRICE_WORD.search(question) and _AMOUNT.search(question))


def gives_figure(text: str, question: str) -> bool:
    """True when `text` holds the kind of figure `question` asks for.

    A price for a price, a duration for "how long", a share for "what percentage", otherwise
    any number (digits or a number word, in either language). Versions and years are not
    figures, except for "which version…", which only a version of the thing named answers. A
    count asked per period ("how many per minute") needs a fact that names the period.
    """
    if _ASKS_VERSION.search(question):
        return _gives_version(text, question)
    if asks_price(question):
        return bool(_MONEY.search(text))
    counted = counted_thing(question)
    # (A fact in another language writes the counted thing in its own words.)
    if counted and language(text) == language(question) and not terms(counted) <= terms(text):
        # "How much maintenance_work_mem…?" was answered by "m (default 16)…", "how many tokens
        # per day?" by "60 questions per day": figures of something else.
        return False
    text = _NOT_A_FIGURE.sub(" ", text)
    period = _period(question)
    if period and not re.search(_PERIOD_WORDS[period], text, re.IGNORECASE):
        return False
    if _ASKS_RATIO.search(question):
        return bool(_RATIO.search(text) or _SHARE.search(text) or _TIME.search(text))
    if _ASKS_TIME.search(_PERIOD.sub(" ", question)):
        return bool(_TIME.search(text))
    if _ASKS_SHARE.search(question):
        return bool(_SHARE.search(text))
    return bool(_ANY.search(text))


def states_figure(text: str) -> bool:
    """True when `text` gives a figure in digits, not a version or a year: "three tuning
    knobs" and "two or three questions" count things, they are no figures a reader asks for."""
    return bool(_DIGITS.search(_NOT_A_FIGURE.sub(" ", text)))


_DIGITS = re.compile(r"(?<![A-Za-z_\-])\d")


# "how many questions", "how much memory": what the figure counts. Not "how much does it
# cost" or "how many of them": a verb or a function word after it names nothing.
_COUNTED = re.compile(r"\bhow (?:many|much) ([A-Za-z][\w.-]*)", re.IGNORECASE)
_NOT_COUNTED = frozenset(
    "do does did is are was were can could should would will has have had of the a an more "
    "less time times".split()
)


def counted_thing(question: str) -> str:
    """What "how many X" / "how much X" counts ("questions", "maintenance_work_mem"), or ""."""
    found = _COUNTED.search(question)
    word = found.group(1).lower() if found else ""
    # "how much slower", "how much faster": a comparison, not a thing counted.
    if not word or word in _NOT_COUNTED or (word.endswith("er") and len(word) > 4):
        return ""
    return found.group(1)


def counted_per_period(question: str) -> bool:
    """ "How many questions per minute?": a figure that names both is the answer's own kind."""
    return _period(question) is not None


def _period(question: str) -> str | None:
    """The period of a count asked per period ("per minute" -> "minute"), if any."""
    found = _PERIOD.search(question)
    if not found:
        return None
    unit = next(group for group in found.groups() if group).lower()
    return _ZH_UNIT.get(unit, unit)


def _gives_version(text: str, question: str) -> bool:
    """A version of the thing asked about ("pgvector 0.8"), or any version when none is named."""
    found = (pattern.search(question) for pattern in _VERSION_OF)
    name = next((match.group(1) for match in found if match), "")
    if not name or name.lower() in _NOT_A_SUBJECT:
        return bool(_ANY_VERSION.search(text))
    return bool(re.search(rf"\b{re.escape(name)}{_VERSION_NUMBER}", text, re.IGNORECASE))
