"""For a question asking for a figure: whether the facts picked give it, and which fact does.

"How many…?", "what is k set to?" wants a number, and the settings a question names ("k",
"ef_search", "the lists value") want their own number, not another setting's. A fact giving
it replaces the picked ones only when it is nearly as much about the question; otherwise the
articles discuss the topic without the figure, and the answer says so (offline_declines).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from agent.llm.offline_facts import _shared, _with_context
from agent.llm.offline_figures import (
    _NOT_COUNTED,
    _NUMBER_WORDS,
    counted_per_period,
    counted_thing,
    gives_figure,
)
from agent.llm.offline_names import named_terms
from agent.llm.offline_text import Fact, terms

# A fact that gives the asked-for figure replaces the picked ones only when it is nearly as
# much about the question; a figure from a weaker fact is some other figure.
FIGURE_FLOOR = 0.7
COUNTED_FIGURE_FLOOR = 0.4
PER_PERIOD_FIGURE_FLOOR = 0.2  # tuning halves: the same at 0.2 and 0.3
# A fact that writes the number right before what "how many X" counts ("5 model calls" for
# "how many model calls…") states the very figure asked, however few of the question's other
# words it shares: those are often its frame ("allow", "per", "make"), rare on the blog and so
# weighed above the counted thing, which the blog writes everywhere.
DIRECT_COUNT_FLOOR = 0.1


def _has_figure(picked: list[tuple[int, Fact]], question: str) -> bool:
    return any(gives_figure(fact.text, question) for _, fact in picked)


def _figure_instead(
    pool: list[tuple[int, Fact]],
    picked: list[tuple[int, Fact]],
    wanted: dict[str, float],
    question: str,
    *,
    assigned_only: bool = False,
) -> list[tuple[int, Fact]]:
    """The strongest fact giving the figure, of the quoted articles or else of the others read,
    if it is strong enough.

    Returns [] when no fact about the question gives it: the articles discuss the topic but
    do not answer the question. `assigned_only`: only a fact giving a setting the question
    names its value ("k = 60").
    """
    shared = [_shared(fact, wanted) for _, fact in pool]
    strength = [sum(wanted[t] for t in terms_i) for terms_i in shared]
    quoted = {n for n, _ in picked}
    best = max(sum(wanted[t] for t in _shared(fact, wanted)) for _, fact in picked)
    # A fact must name what "how many X" counts to give its figure (gives_figure): that says
    # it is about the question, so a weaker one may answer.
    counted = counted_thing(question)
    floor = COUNTED_FIGURE_FLOOR if counted else FIGURE_FLOOR
    if counted and counted_per_period(question):
        # "How many questions per minute?": "6 questions per minute" names both, a figure of
        # the very kind asked, however few of the question's other words it shares.
        floor = PER_PERIOD_FIGURE_FLOOR
    # "公式里的 k 一般取多少？" asks for k's value, and "The constant k = 60 …" gives it however few
    # of the question's other words ("merge", "result", through the glossary) it shares.
    names = _parameters(question)
    direct = _states_count(question, wanted)
    direct_floor = DIRECT_COUNT_FLOOR * best
    candidates = [
        i
        for i, (n, fact) in enumerate(pool)
        if (
            _assigns(fact.text, names)
            or (strength[i] >= floor * best and not assigned_only)
            or (direct(fact) and strength[i] >= direct_floor and not assigned_only)
        )
        and gives_figure(fact.text, question)
    ]
    # The quoted article's own figure first. Failing that, another article read may state it:
    # "How long does Docent wait on a model stream that stops sending data?" led with the
    # loop article, which names no timeout, while the cancellation article read beside it
    # gives "60 秒收不到新数据" in a row sharing more of the question than any fact quoted.
    candidates = [i for i in candidates if pool[i][0] in quoted] or candidates
    if not candidates:
        return []
    top = max(candidates, key=lambda i: (_assigns(pool[i][1].text, names), strength[i]))
    return _with_context(pool, [top], shared, compares=False)


# The words after "how many" up to the first verb or function word: "how many model calls can
# one turn make?" counts "model calls".
_COUNTED_PHRASE = re.compile(r"\bhow (?:many|much) ((?:[A-Za-z][\w.-]*\s*){1,3})", re.IGNORECASE)
_ENDS_PHRASE = frozenset(
    "can may might must per in on at for to from with by into each every one it they we you i "
    "go get make run".split()
)


def _counted_phrase(question: str) -> list[str]:
    """The words of what "how many …" counts (["model", "calls"]), or []."""
    found = _COUNTED_PHRASE.search(question)
    words: list[str] = []
    for word in found.group(1).split() if found else []:
        if word.lower() in _NOT_COUNTED or word.lower() in _ENDS_PHRASE:
            break
        words.append(word)
    return words


def _states_count(question: str, wanted: dict[str, float]) -> Callable[[Fact], bool]:
    """Whether a fact writes a number right before the whole of what the question counts ("5
    model calls" for "how many model calls…", a plural or singular alike) and shares another
    of the question's words with it ("turn" in "Docent caps each user turn at 5 model calls"):
    the count of the very thing asked, about the question's subject. "(5 calls)" counts calls
    of any kind, and "eight thousand characters" in an answer's size is no chunk's size."""
    words = _counted_phrase(question) if counted_thing(question) else []
    if not words:
        return lambda fact: False
    # The number itself is gives_figure's to judge; here only where it stands.
    *before, head = (re.escape(word.lower()) for word in words)
    phrase = r"\s+".join([*before, rf"{head.removesuffix('s')}s?"])
    pattern = re.compile(
        rf"(?:\d[\d,.]*|\b(?:{_NUMBER_WORDS})\b)[*`]*\s+[*`]*{phrase}\b", re.IGNORECASE
    )
    counted = terms(" ".join(words))

    def states(fact: Fact) -> bool:
        return bool(pattern.search(fact.text)) and bool(_shared(fact, wanted) - counted)

    return states


_PARAMETER = re.compile(r"[A-Za-z][A-Za-z0-9_.]*")
_NOT_PARAMETERS = frozenset("a i".split())  # "what is a good k?", "should i…"
MAX_PARAMETERS = 4
# A plain word named as a setting: "a lists value", "the probes setting", "lists 参数".
_CALLED_SETTING = re.compile(
    r"\b([A-Za-z][A-Za-z0-9_.]*)\s+(?:value|setting|parameter|option)s?\b|"
    r"(?<![A-Za-z0-9_.])([A-Za-z][A-Za-z0-9_.]*)\s*(?:参数|的值)",
    re.IGNORECASE,
)
# Words that stand before "value" without naming a setting ("the default value", "a good one").
_NOT_SETTINGS = frozenset(
    "a an the this that its their what which default good best right recommended typical "
    "reasonable sensible same new old initial starting final max maximum min minimum exact "
    "actual return config configuration some any different higher lower larger smaller "
    "bigger return_value".split()
)
_ASKS_DEFAULT = re.compile(r"\bdefaults?\b|默认", re.IGNORECASE)


def _parameters(question: str) -> list[str]:
    """The settings a figure question names, lower case ("k", "m", "ef_search",
    "hnsw.ef_search"): identifiers and single letters standing alone, at most four."""
    found = named_terms(question) + re.findall(
        r"(?<![A-Za-z0-9_.'’-])[A-Za-z](?![A-Za-z0-9_.'’-])", question
    )
    names = [
        name.lower()
        for name in found
        if _PARAMETER.fullmatch(name) and (len(name) == 1 or "_" in name or "." in name)
    ]
    called = (a or b for a, b in _CALLED_SETTING.findall(question))
    names += [name.lower() for name in called if name.lower() not in _NOT_SETTINGS]
    return [n for n in dict.fromkeys(names) if n not in _NOT_PARAMETERS][:MAX_PARAMETERS]


def _assigns(text: str, names: list[str]) -> bool:
    """Does `text` give one of `names` a number ("k = 60", "hnsw.ef_search (default 40)",
    "ef_search of 40", "常数k=60", "m 设为 16")?"""
    if not names:
        return False
    alternatives = "|".join(re.escape(name) for name in names)
    name = rf"(?<![A-Za-z0-9_-])(?:{alternatives})(?![A-Za-z0-9_])[`*]*"
    verb = r"(?:=|:|is|of|to|defaults to|\(default:?|默认(?:值)?(?:是|为)?|设为|设成|取|为)"
    given = rf"{name}\s*{verb}\s*\d"
    # "the nearest ivfflat.probes buckets (default 1)": a default may follow one more word.
    after_a_word = rf"{name}\s+[A-Za-z]+\s*\(default:?\s*\d"
    return bool(re.search(f"{given}|{after_a_word}", text, re.IGNORECASE))


def _assigned(picked: list[tuple[int, Fact]], question: str) -> bool:
    """Do the picked facts give the value of the setting the question names (if it names one)?"""
    names = _parameters(question)
    return not names or any(_assigns(fact.text, names) for _, fact in picked)
