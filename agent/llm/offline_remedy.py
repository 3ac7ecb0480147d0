"""The fix, not only the problem: a reader asking what to do is answered with what to do.

"How do I stop nginx from holding back my stream?", "what should I use instead?", "怎么避免？",
"怎么解决？" and bare keywords ("X-Accel-Buffering header") ask for the remedy. The facts picked
by the question's words (offline_pick) are mostly the sentence naming the problem, as it holds
the question's words ("nginx buffers proxied responses by default."), while the article says
what to do in the sentence next to it ("You can switch it off per location with
proxy_buffering off;…"), which shares none. For such an ask:

- the sentence saying what to do next to a picked one, in its section (the one before or the
  two after), comes along;
- a picked fact is swapped for one saying what to do when that shares as much of the
  question's weight;
- a quoted sentence of a paragraph that opens with a short label ("Sliding window counter.")
  brings the label: it names the thing to use.

Whether a sentence says what to do is read from grammar: it opens with a verb in the
imperative ("Use…", "Keep…", "Wrap…"), or a clause after a colon or semicolon does ("A cheap
approximation: keep…"), or it says what one can or should do ("You can…", "…should…"); in
Chinese, it opens with a verb of doing (用, 把, 加, 设…), or says what must, should or can be
done (应当, 必须, 建议, 办法是, …即可).
"""

from __future__ import annotations

import re

from agent.llm.offline_facts import _shared
from agent.llm.offline_text import Fact

NEAR_BEFORE = 1  # the sentence saying what to do may come just before the problem…
NEAR_AFTER = 2  # …or in the two after it ("nginx buffers…. You can switch it off…")
STRONG = 0.5  # a pick whose fix comes along shares this share of the best pick's weight
MAX_ADDED = 2  # fixes brought along: the answer stays a few facts long
# A paragraph's label: "Sliding window counter."; "Filtering deserves a warning." is a sentence.
LABEL_WORDS = 3
KEYWORDS = 5  # a query of at most this many words and no grammar asks how to do it

# How readers ask for the fix: "how do I fix/stop/avoid…", "how can I keep … from…", "what
# should I change/do/use", "how to disable…"; in Chinese 怎么办, 怎么解决/避免/处理/改/关….
_FIX_VERB = (
    r"(?:fix|stop|avoid|prevent|turn\s+off|switch\s+off|disable|enable|turn\s+on|keep|"
    r"get\s+rid\s+of|get\s+around|work\s+around|solve|handle|deal\s+with|protect|guard|"
    r"make\s+sure|ensure|configure|set\s+up|change|reduce|speed\s+up|limit|detect|recover)"
)
_ASKS_FIX = re.compile(
    rf"\bhow\s+(?:do|can|could|should|would|shall)\s+(?:i|we|you|one)\s+(?:\w+\s+)?{_FIX_VERB}\b"
    rf"|\bhow\s+to\s+(?:\w+\s+)?{_FIX_VERB}\b"
    r"|\bwhat\s+(?:should|can|do|must|would)\s+(?:i|we|you)\s+(?:do|change|use|set|add|try)\b"
    r"|\bwhat(?:'s|\s+is)\s+the\s+(?:fix|remedy|solution|workaround|cure)\b"
    r"|\bhow\s+(?:do|can)\s+(?:i|we)\s+fix\b|\bfix\s+(?:it|that|this)\b"
    r"|怎么办|咋办|怎么(?:解决|避免|处理|改|修|关|防止|绕过|保证|应对|设置|配置|加|做才)"
    r"|如何(?:解决|避免|处理|修改|防止|关闭|保证|应对)|怎样(?:解决|避免|处理|防止|保证|才能)"
    r"|(?:该|应该|应当|要)怎么|有什么(?:办法|解决办法|对策)",
    re.IGNORECASE,
)
_QUESTION = re.compile(
    r"[?？]|\b(?:how|what|why|which|when|where|who|whose|is|are|does|do|did|can|could|should|"
    r"would|will|was|were|has|have|tell|explain|show|give|list)\b"
    r"|什么|怎么|为什么|为啥|哪|吗|呢|如何|怎样|多少|几|是否|有没有|能不能|可不可以",
    re.IGNORECASE,
)
# A verb a sentence opens with when it tells the reader what to do: general verbs of doing.
_IMPERATIVE = (
    "use", "set", "add", "put", "keep", "send", "wrap", "make", "give", "raise", "lower",
    "disable", "enable", "turn", "switch", "check", "measure", "limit", "store", "reserve",
    "count", "enforce", "record", "close", "call", "run", "avoid", "return", "cap", "take",
    "treat", "validate", "prefer", "never", "always", "don't", "do", "try", "split", "include",
    "configure", "install", "create", "pass", "start", "stop", "cancel", "append", "forward",
    "render", "retry", "replace", "remove", "drop", "move", "increase", "decrease", "choose",
    "pick", "write", "read", "graph", "watch", "test", "say", "tell", "ask", "build",
    "let", "re-embed", "rebuild", "reindex", "schedule", "batch", "bound",
)  # fmt: skip
_OPENS_WITH_VERB = re.compile(
    rf"(?:^|[:;]\s+)(?:{'|'.join(sorted(set(_IMPERATIVE), key=len, reverse=True))})\b",
    re.IGNORECASE,
)
_ADVISES = re.compile(
    r"\byou\s+(?:can|could|should|must|need\s+to|have\s+to|may\s+want\s+to)\b"
    # ("must" alone is more often a rule than advice: "it must read every article".)
    r"|\bshould\s+(?!not\s+be\b)\w+|\bthe\s+(?:fix|remedy|solution|cure)\s+is\b"
    r"|\bis\s+to\s+(?:make|use|set|add|keep|send|wrap|switch|disable)\b",
    re.IGNORECASE,
)
# Chinese: a sentence opening with a verb of doing, or saying what must, should or can be done.
# (用 only before a term in Latin letters or quotes: 用户 is "user".)
_ZH_OPENS = re.compile(r"^(?:用(?=\s*[A-Za-z`“「])|把|将|先|别|不要|务必|记得|调用|开启|关闭)")
_ZH_ADVISES = re.compile(
    r"应当|应该|必须|建议|办法是|做法是|解决办法|即可|就行|就可以|一定要|要用|可以用|可以把|改用|改成|设为|"
    r"设置为|加上|放在|放进"
)
_LABEL = re.compile(r"^[A-Z][\w-]*(?:\s+[\w-]+){0,3}\.$")


def asks_fix(question: str) -> bool:
    """Does the question ask what to do: the fix, the way to stop or avoid something?

    A query of a few words with no grammar at all ("nginx sse buffering") asks the same: a
    reader typing keywords wants to know how to do the thing, not that it exists.
    """
    text = question.strip()
    if _ASKS_FIX.search(text):
        return True
    words = text.split()
    return (
        0 < len(words) <= KEYWORDS
        and not re.search(r"[\u3400-\u9fff]", text)
        and not (_QUESTION.search(text))
    )


def tells_what_to_do(fact: Fact) -> bool:
    """Does the fact say what to do (an imperative, advice), not only what is so?"""
    if fact.kind == "row":
        return False  # a table row states; its column names ("Limit:") are no verbs
    text = fact.text.strip()
    sentences = re.split(r"(?<=[.!?。！？])\s*", text)
    if any(_opens_or_follows_colon(s) for s in sentences if s):
        return True
    if _ADVISES.search(text) or _ZH_ADVISES.search(text):
        return True
    return any(_ZH_OPENS.match(s) for s in sentences if s)


def _opens_or_follows_colon(sentence: str) -> bool:
    """The verb opens the sentence, or the clause after its colon or semicolon (lower-cased
    there: "A cheap approximation: keep…"); a capital verb after a colon starts a name."""
    for match in _OPENS_WITH_VERB.finditer(sentence):
        verb = match.group(0).lstrip(":; \t")
        if match.start() == 0 or verb[:1].islower():
            return True
    return False


def remedied(
    *,
    question: str,
    pool: list[tuple[int, Fact]],
    picked: list[tuple[int, Fact]],
    wanted: dict[str, float],
) -> list[tuple[int, Fact]]:
    """`picked` with what the lead article says to do, when the question asks for the fix."""
    if not picked or not asks_fix(question):
        return picked
    lead = picked[0][0]
    facts = [fact for n, fact in pool if n == lead]
    chosen = {fact.order: (n, fact) for n, fact in picked}
    # The strongest picks first: a fix next to a pick that shares little of the question
    # fixes something else ("Wrap sends in a timeout" beside a backpressure aside).
    mine = [fact for n, fact in picked if n == lead and fact.kind != "row"]
    top = max((_weight(fact, wanted) for fact in mine), default=0.0)
    added = 0
    for fact in sorted(mine, key=lambda fact: -_weight(fact, wanted)):
        if added >= MAX_ADDED or _weight(fact, wanted) < STRONG * top:
            break
        near = None if tells_what_to_do(fact) else _fix_nearby(fact, facts)
        if near is not None and near.order not in chosen:
            chosen[near.order] = (lead, near)
            added += 1
    if not any(tells_what_to_do(fact) for n, fact in chosen.values() if n == lead):
        # Nothing said what to do next to the picks: the strongest pick gives way to a fix
        # sharing as much of the question.
        better = _as_good_a_fix(picked[0][1], facts, wanted)
        if better is not None:
            del chosen[picked[0][1].order]
            chosen[better.order] = (lead, better)
    for n, fact in list(chosen.values()):
        label = _label(fact, facts) if n == lead else None
        if label is not None:
            chosen.setdefault(label.order, (lead, label))
    return [chosen[order] for order in sorted(chosen, key=lambda o: _position(chosen[o], picked))]


def _position(item: tuple[int, Fact], picked: list[tuple[int, Fact]]) -> tuple[int, int]:
    """Article first (as picked), then the article's own order."""
    articles = list(dict.fromkeys(n for n, _ in picked))
    n, fact = item
    return (articles.index(n) if n in articles else len(articles), fact.order)


def _weight(fact: Fact, wanted: dict[str, float]) -> float:
    return sum(wanted[term] for term in _shared(fact, wanted))


def _as_good_a_fix(fact: Fact, facts: list[Fact], wanted: dict[str, float]) -> Fact | None:
    """A fact of the article saying what to do that shares as much of the question's weight
    as `fact` does (and shares some)."""
    floor = _weight(fact, wanted)
    best, best_weight = None, 0.0
    for other in facts:
        if other.order == fact.order or not tells_what_to_do(other):
            continue
        weight = _weight(other, wanted)
        if weight > 0 and weight >= floor and weight > best_weight:
            best, best_weight = other, weight
    return best


def _fix_nearby(fact: Fact, facts: list[Fact]) -> Fact | None:
    """The sentence saying what to do right next to `fact` in its section (the one before or
    the two after): in its own paragraph first, then the nearest, after before before (a fix
    follows the problem it fixes)."""
    by_order = {other.order: other for other in facts if other.section == fact.section}
    steps = sorted(
        (*range(1, NEAR_AFTER + 1), *range(-1, -NEAR_BEFORE - 1, -1)),
        key=lambda step: (abs(step), step < 0),
    )
    near = [by_order[fact.order + step] for step in steps if fact.order + step in by_order]
    fixes = [other for other in near if tells_what_to_do(other)]
    return min(fixes, key=lambda other: other.group != fact.group, default=None)


def _label(fact: Fact, facts: list[Fact]) -> Fact | None:
    """The short label opening the paragraph of `fact` ("Sliding window counter."), if any."""
    if fact.kind != "sentence":
        return None
    same = [other for other in facts if other.group == fact.group and other.kind == "sentence"]
    first = min(same, key=lambda other: other.order, default=None)
    if first is None or first.order == fact.order:
        return None
    words = first.text.split()
    if len(words) <= LABEL_WORDS and _LABEL.match(first.text.strip()):
        return first
    return None
