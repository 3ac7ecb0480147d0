"""An evaluative ask's topic: searched without the words that ask for a downside.

"What are the downsides of limiting by IP address?" fell under the relevance bar (0.12)
while "limiting by IP address" alone clears it (0.96): the relevance is the whole question's,
and the words saying what KIND of answer the reader wants ("downsides", "wrong choice", 短板)
are words the blog never writes. Dropping them from the relevance evidence was measured to
answer an out-of-scope near miss ("downsides of a token bucket": the article names the token
bucket and nothing against it; docs/answer-quality.md, "Fifty-second pass").

So the topic is searched alone, and a rescue is answered only when the topic's top article
has a sentence that names the topic and weighs it (offline_weigh: a contrast, a fault or a
cost). "A token bucket is another good option…" does not weigh, and the question is declined.
"""

from __future__ import annotations

import re
from typing import Any

from agent.llm.offline_bridge import question_terms, translations
from agent.llm.offline_hits import _failed, _hit_list, _relevant
from agent.llm.offline_text import terms

# The frame: what the reader wants said of the topic, with the question words around it.
# Read by grammar ("the X of", "X with", "when is … the wrong choice"), not by topics.
_FRAME_EN = re.compile(
    r"^\s*(?:so\s+|and\s+)?(?:what|where)(?:'s| is| are| were| was)?\s+(?:the\s+|some\s+|any\s+)?"
    r"(?:main\s+|biggest\s+|real\s+|known\s+)?"
    r"(?:downsides?|drawbacks?|disadvantages?|weakness(?:es)?|shortcomings?|pitfalls?|gotchas?|"
    r"caveats?|catch|costs?|flaws?|limitations?|limits|risks?|problems?|cons|trade-?offs?)\s+"
    r"(?:of|with|to|in|for|when)\s+"
    r"|^\s*(?:what's|what is)\s+wrong\s+with\s+"
    r"|^\s*when\s+(?:is|are|would|should)\s+(?:i\s+|we\s+|you\s+)?(?:not\s+use\s+)?"
    # (?<!\s): a run of spaces is tried from its start only (from each of 3,998, 1 s a call).
    r"|(?<!\s)\s+(?:(?:be|is|are)\s+)?(?:the|a)\s+(?:wrong|bad|poor)\s+(?:choice|fit|idea|pick)\b"
    r"|^\s*where\s+(?:does|do)\s+|(?<!\s)\s+fall\s+short\b",
    re.IGNORECASE,
)
_FRAME_ZH = re.compile(
    r"(?:各自|各)?(?:会)?(?:有|有哪些|有什么|是什么|的|踩)?(?:什么|哪些)?"
    r"(?:缺点|短板|代价|局限(?:性)?|坑|弊端|弱点|不足)(?:是什么|有哪些|在哪(?:里)?)?"
    r"|(?:的)?问题在哪(?:里)?|什么时候不该用|什么时候不适合"
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|(?<=[。！？；])|\n+")
# Against a thing: a contrast, a fault or a cost (a subset of offline_weigh's words).
_AGAINST_EN = re.compile(
    r"\b(but|however|although|though|whereas|instead|weakness|drawback|downside|flaw|"
    r"trade-?off|at the cost of|costs?|expensive|slower|worse|degrades?|fails?|breaks?|"
    r"struggles?|punish\w*|lose[sd]?|loses|cannot|can't|penalty|risk)\b",
    re.IGNORECASE,
)
_AGAINST_ZH = re.compile(
    r"但|而(?!且)|却|不过|缺点|代价|短板|坑|不如|慢|无法|失效|退化|局限|不足|不宜"  # 而且 adds
)
_ASK_MARK = re.compile(r"(?<![?？。!！])[?？。!！]+\s*$")  # a run tried once, from its start


def frame_topic(question: str) -> str:
    """The question without its evaluative frame, or "" when it has none."""
    text = question.strip()
    topic = _FRAME_ZH.sub(" ", _FRAME_EN.sub(" ", text))
    topic = _ASK_MARK.sub("", topic).strip(" ，,：:")
    if topic == _ASK_MARK.sub("", text).strip() or not terms(topic):
        return ""
    return topic


def frame_searched(question: str, topic: str, searched: list[Any]) -> list[Any]:
    """The searches to answer from: as searched, or the topic's alone when the whole
    question missed the bar and the topic's search cleared it (the last search is the
    topic's when `topic` is set)."""
    if not topic or len(searched) < 2:
        return searched
    *asked, own = searched
    if _failed(asked[0]) or _relevant(question, _hit_list(asked[0])):
        return asked
    if not _relevant(topic, _hit_list(own)):
        return asked
    return [own]


def rescued(question: str, topic: str, searched: list[Any]) -> bool:
    """Whether the topic's search stands in for the whole question's (frame_searched)."""
    return (
        bool(topic)
        and len(searched) >= 2
        and frame_searched(question, topic, searched) == [searched[-1]]
    )


def unweighed(topic: str, hits: list[dict], articles: list[dict]) -> bool:
    """A rescued topic whose top article, read, says nothing against it: declined."""
    return not weighing_sentence(topic, _top_text(hits, articles))


def weighing_first(answer: str, topic: str, hits: list[dict], articles: list[dict]) -> str:
    """`answer` with the quote holding the weighing sentence first: its item first in its
    list, its paragraph first unless it is a list (whose lead-in must stay before it)."""
    sentence = weighing_sentence(topic, _top_text(hits, articles))
    key = sentence.lstrip("-*> ").strip()[:60]
    blocks = answer.split("\n\n")
    at = next((n for n, block in enumerate(blocks) if key and key in block), None)
    if at is None:
        return answer  # quoted as rendered otherwise, or not quoted: the pick stands
    lines = blocks[at].split("\n")
    if all(line.startswith("- ") for line in lines):
        lines.insert(0, lines.pop(next(n for n, line in enumerate(lines) if key in line)))
        blocks[at] = "\n".join(lines)
    elif len(lines) == 1 and not blocks[at].rstrip().endswith((":", "：")):
        # A lead-in ("Three parameters control the trade-off:") stays before its list.
        blocks.insert(0, blocks.pop(at))
    return "\n\n".join(blocks)


def _top_text(hits: list[dict], articles: list[dict]) -> str:
    """The top hit's article as read; without it (no detail tool, a failed read), the
    excerpt that is quoted instead."""
    top = hits[0].get("article_id") if hits else None
    read = next((a for a in articles if a.get("article_id") == top), None)
    return str(read.get("body", "") if read else (hits[0].get("excerpt", "") if hits else ""))


def weighing_sentence(topic: str, body: str) -> str:
    """The article's first sentence that weighs against the topic and, read with the sentence
    before it in its paragraph ("Per IP address. … It catches scripts but can punish…"),
    names the topic's words (or their glossary translations); or ""."""
    named = _named(topic, body)
    if not named:
        return ""
    for paragraph in re.split(r"\n\s*\n", body):
        sentences = [s.strip() for s in _SENTENCE.split(paragraph) if s.strip()]
        for before, sentence in zip(["", *sentences], sentences, strict=False):
            seen = question_terms(f"{before} {sentence}")
            if _against(sentence) and all(seen & forms for forms in named):
                return sentence
    return ""


def _named(topic: str, body: str) -> list[set[str]]:
    """Each topic word the article names, as its forms in either language; [] when the
    article lacks a Latin-script word of it (a name: "Redis Streams", "token bucket").

    A Chinese bigram the article never writes is left out: `terms` cuts "按会话限流" into
    "按会", "会话"… and the bigrams that straddle two words ("按会") name nothing.
    """
    known = question_terms(body)
    back = translations(topic)
    named = []
    for term in terms(topic):
        forms = {term} | {t for t, words in back.items() if term in words}
        if known & forms:
            named.append(forms)
        elif term.isascii():
            return []
    return named


def _against(sentence: str) -> bool:
    # offline_weigh's comparatives ("better", "more than") also weigh for a thing; a rescue
    # needs a sentence that says something against it.
    return bool(_AGAINST_EN.search(sentence) or _AGAINST_ZH.search(sentence))
