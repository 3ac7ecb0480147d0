"""Names a question asks about, and whether the articles read mention them at all.

A question that names a version, a protocol, a product or a setting's value ("HTTP/2",
"PostgreSQL 16", "Grafana", "k 取 10") asks about that very thing. The search finds articles on
the topic around it, and their sentences share the question's other words; but when none of the
articles read mentions the name, they do not answer what is asked, and quoting them reads like
an answer and is not one.
"""

from __future__ import annotations

import re
from functools import lru_cache

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_./+'-]*[A-Za-z0-9+]|[A-Za-z0-9]")
# Where a sentence (or a quotation) starts: a capital there says nothing about a name.
_STARTS = re.compile(r"(?:^|[.?!。？！:：;；]|[\"“‘(（])\s*$")
# Interjections and chat shorthand rarer in print than in questions (zipf under 5: "hello"
# 4.7, "hmm" 4.1, "btw" 4.1); the commoner ones ("ok", "hey", "thanks") go by frequency.
_INTERJECTIONS = frozenset("hello hmm hm um uh er oh ah emm wow btw fyi imo thx pls plz".split())
# Capitalised everyday words: languages are how a bilingual blog's readers ask across them.
_ORDINARY = frozenset("i english chinese".split())
_DIGIT = re.compile(r"\d")
# "120ms", "4kb", "10k": the number is the name, the unit is spelled either way.
_NUMBER_UNIT = re.compile(r"^(\d[\d,.]*)(?:ms|s|kb|mb|gb|k|m|x)$")
# "2nd", "3rd": a position, which an article writes as a word ("the second search").
_ORDINAL = re.compile(r"^(\d+)(?:st|nd|rd|th)$")
# Small numbers as articles spell them: "three searches", "三次搜索", "the second search".
_NUMBER_WORDS = {
    n: (en, ordinal, zh)
    for n, (en, ordinal, zh) in enumerate(
        [
            ("zero", "zeroth", "零"),
            ("one", "first", "一"),
            ("two", "second", "二两"),
            ("three", "third", "三"),
            ("four", "fourth", "四"),
            ("five", "fifth", "五"),
            ("six", "sixth", "六"),
            ("seven", "seventh", "七"),
            ("eight", "eighth", "八"),
            ("nine", "ninth", "九"),
            ("ten", "tenth", "十"),
            ("eleven", "eleventh", ""),
            ("twelve", "twelfth", ""),
        ]
    )
}


def named_terms(question: str) -> list[str]:
    """The names in a question, spelled as asked, in order (each once, whatever its case).

    In a Chinese question every Latin word or number is a name ("pgvector", "Last-Event-ID",
    "60"). In an English one: numbers and words with digits ("10", "HTTP/2", "p99"),
    identifiers ("channels_redis", "asyncio.shield"), acronyms ("SSE"), camel case
    ("IVFFlat") and capitalised words that do not start a sentence ("Postgres", "Grafana").
    """
    chinese = bool(_CJK.search(question))
    found: list[str] = []
    for match in _TOKEN.finditer(question.replace("\u2019", "'")):
        token = re.sub(r"'s$", "", match.group(0))
        if "'" in token:
            continue  # a contraction ("I'm", "Don't")
        start = bool(_STARTS.search(question[: match.start()]))
        seen = {name.lower() for name in found}
        if _is_name(token, chinese=chinese, start=start) and token.lower() not in seen:
            found.append(token)
    return found


def _is_name(token: str, *, chinese: bool, start: bool) -> bool:
    if _DIGIT.search(token):
        return True
    if _everyday(token, start=start):
        return False  # "ok 那…", "Hi，请问", "is that OK?": how people talk, not a topic
    if chinese:
        return len(token) >= 2
    if re.search(r"\w[_.]\w\w|\w\w[_.]\w|[A-Z]/|/[A-Z]|-[A-Z]|[A-Z]-", token):
        return True  # code ("asyncio.shield") or a header ("Last-Event-ID"), not "e.g.",
        # "and/or" or "long-running"
    if token.isupper() and len(token) >= 2:
        return True
    if re.search(r"[a-z][A-Z]", token):
        return True
    return token[0].isupper() and not start and token.lower() not in _ORDINARY


# A dotted path of lower-case modules ending in a class name, as pasted from a traceback: an
# article names the class alone. ("asyncio.shield" ends in a function, and stays whole.)
_QUALIFIED = re.compile(
    r"^(?:[a-z_][a-z0-9_]*\.)+([A-Z][a-z0-9]+[A-Z]\w*|[A-Z]\w*(?:Error|Exception))$"
)


def mentions(text: str, name: str, plural_strips: int = 2) -> bool:
    """True when `text` (lower-cased) mentions `name` as a word or the start of one.

    "postgres" is found in "PostgreSQL" and "websockets" in "WebSocket"; a number only as a
    whole number ("10" is not in "100" or "0.10"), and "384-dim" by its number. A plural's
    "s" is dropped at most `plural_strips` times ("classes" → "class"): dropped once per call
    without a limit, "Redis" followed by 990 letters s exhausted the stack and ended the turn.
    """
    qualified = _QUALIFIED.match(name)
    if qualified and mentions(text, qualified.group(1)):
        return True  # "django.core.exceptions.SynchronousOnlyOperation" by its class name
    name = name.lower()
    ordinal = _ORDINAL.match(name)
    if ordinal:  # "3rd": "3rd", "third", 第三, or a rank written as the number ("rank: 3");
        # not a version ("HTTP/2")
        number = ordinal.group(1)
        bare = rf"(?<![\w./]){number}(?:st|nd|rd|th)?(?!\d|[.,]\d|/)"
        return bool(re.search(bare, text)) or _spelled(text, number, ordinal=True)
    number = _NUMBER_UNIT.match(name)
    if number:
        name = number.group(1)
    name = name.replace(",", "")
    if re.fullmatch(r"[\d.]+", name):
        return bool(re.search(rf"(?<![\w.]){re.escape(name)}(?!\d|[.,]\d)", text)) or (
            _spelled(text, name)
        )
    if re.search(rf"(?<![a-z0-9]){re.escape(name)}", text):
        return True
    if plural_strips and name.endswith("s") and len(name) > 3:
        if mentions(text, name[:-1], plural_strips - 1):
            return True
    # "tsvector/GIN", "SSE/WebSocket": two names asked together, each mentioned on its own
    # ("HTTP/2" is one name: a side with a digit keeps it whole).
    sides = name.split("/")
    if len(sides) > 1 and all(len(side) >= 2 and not _DIGIT.search(side) for side in sides):
        return all(mentions(text, side) for side in sides)
    parts = [part for part in name.split("-") if _DIGIT.search(part)]
    return "-" in name and bool(parts) and all(mentions(text, part) for part in parts)


_MEASURE = "[个次步条种篇轮秒天倍层块项点位]|分钟|小时"
_NUMERAL = "零一二两三四五六七八九十百千万"


def _spelled(text: str, number: str, *, ordinal: bool = False) -> bool:
    """Does `text` write a small whole number out ("three", "third", "三次", "第三")?

    Not 1: "one", "first" and 一个 (the indefinite article) are everywhere. A Chinese numeral
    counts before a measure word or after 第, and not inside a larger number ("十三次", "二十个")
    or a word ("一样", "十分重要", "三分之一").
    """
    words = _NUMBER_WORDS.get(int(number)) if len(number) <= 2 and number.isdigit() else None
    if not words or int(number) < 2:
        return False
    english, ordinal_word, chinese = words
    spelled = ordinal_word if ordinal else f"{english}|{ordinal_word}"
    if re.search(rf"\b(?:{spelled})\b", text):
        return True
    after = "" if ordinal else rf"|(?<![{_NUMERAL}第]){{ch}}(?:{_MEASURE})"
    return any(re.search(rf"第{ch}(?![{_NUMERAL}])" + after.format(ch=ch), text) for ch in chinese)


def missing_names(question: str, texts: list[str]) -> list[str]:
    """The question's names that none of `texts` (the articles read) mentions, as asked.

    An acronym the articles spell out ("TTFT": "time to first token") is mentioned; a name
    the question sets beside its subject (asides) is not what it asks about.
    """
    read = re.sub(r"(?<=\d),(?=\d)", "", " ".join(texts).lower().replace("\u2019", "'"))
    names = named_terms(question)
    said = [name for name in names if mentions(read, name) or spelled_out(read, name)]
    unsaid = [name for name in names if name not in said]
    return [name for name in unsaid if not aside(question, name, said)]


def _everyday(token: str, *, start: bool) -> bool:
    """A plain word of everyday English typed in lower case or all capitals ("ok", "OK",
    "hey"), or capitalised where a sentence starts ("Hi，请问…"). Capitalised mid-sentence
    ("Windows", "Apple"), it may name a product, so it stays a name."""
    if not token.isalpha():
        return False
    if not (token.islower() or token.isupper() or (start and token[1:].islower())):
        return False
    from blog.commonness import COMMON, zipf  # the search's own measure of an everyday word

    return token.lower() in _INTERJECTIONS or zipf(token.lower()) >= COMMON


def spelled_out(text: str, name: str) -> bool:
    """Does `text` (lower-cased) write the acronym `name` out, word by word ("TTFT": "time
    to first token", "SSE": "server-sent events")? Only an acronym of 2 to 6 capitals, or of
    3 to 6 lower-case letters that spell no English word ("ttft" in "ttft 指什么？")."""
    if not (name.isalpha() and 2 <= len(name) <= 6):
        return False
    if not name.isupper() and not (name.islower() and len(name) >= 3 and not _a_word(name)):
        return False
    words = r"[\s-]+".join(rf"{letter}[a-z]*" for letter in name.lower())
    return bool(re.search(rf"\b{words}\b", text))


def _a_word(name: str) -> bool:
    """Is `name` an English word at all (wordfreq's small list: "bug", "sum" are; "ttft" not)?"""
    from blog.commonness import RARE, zipf

    return zipf(name) >= RARE


# A name set beside the subject, to compare with: "does it stream like ChatGPT does?",
# "跟 Pinecone 比", "像 Elasticsearch 那样". The question is about the rest.
_COMPARED = re.compile(
    r"\b(?:like|unlike|similar to|compared (?:to|with)|as in|the way|instead of|rather than)"
    r"\s+(?:the\s+|a\s+|an\s+)?$|(?:像|类似于?|不像|相比|比起|而不是|不用|对比)\s*$",
    re.IGNORECASE,
)
# What follows a name compared with in Chinese: "跟 Pinecone 比", "和 Pinecone 相比".
_COMPARED_AFTER = re.compile(r"^\s*(?:那样|那种|一样|这样|似的|相比|比起来|比的话|比)")
_COMPARED_BEFORE = re.compile(r"(?:跟|和|与|同)\s*$")
# Names offered as options: "5 or 10?", "5 次还是 10 次", "Redis or Memcached".
_OR = re.compile(
    r"^\W*(?:\w+\s+)?(?:or|还是|或者|或是|或)\s*$|^\s*[个次步秒倍条]?\s*(?:还是|或者|或)\s*$"
)


def aside(question: str, name: str, said: list[str]) -> bool:
    """Is `name` only set beside what the question asks about?

    Either compared with ("like X", "跟 X 比"), or offered as an option beside another name
    in `said` (those the articles mention: "is the cap 5 or 10?", and they say 5). A name
    the question asks about alone is never an aside: "Does Docent use Pinecone?".
    """
    at = _find(question, name)
    if at < 0:
        return False
    # The words just before and after are enough ("compared with the " is 18 characters):
    # a question of many names asks this of every name, so each look stays short.
    before, after = question[max(0, at - _NEAR) : at], question[at + len(name) :][:_NEAR]
    if _COMPARED.search(before):
        return True
    if _COMPARED_BEFORE.search(before) and _COMPARED_AFTER.match(after):
        return True
    return any(_OR.match(_between(question, name, at, other)) for other in said)


def _between(question: str, name: str, at: int, other: str) -> str:
    """The text between `name` (found at `at`) and `other`, whichever comes first; "" when
    `other` is not in the question as a word (no text between them says "or")."""
    where = _find(question, other)
    if where < 0:
        return ""
    between = question[where + len(other) : at] if where < at else question[at + len(name) : where]
    return between if len(between) <= _NEAR else ""  # options sit close: "5 seconds or 10"


# How far around a name its comparison or its "or" is looked for.
_NEAR = 40


@lru_cache(maxsize=1024)
def _find(question: str, name: str) -> int:
    # Cached: `aside` looks up every name the articles said for each name they did not, so a
    # question pasting hundreds of names cost seconds (cubic) before; a str caches its hash.
    """Where `name` first stands as a whole word in the question, or -1."""
    found = re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", question, re.IGNORECASE)
    return found.start() if found else -1
