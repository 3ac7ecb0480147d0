"""A long message's ask: from its first sentence that asks on, apart from the scene before it.

Readers write the way they talk: "Hi! I'm building a small Django site and I want to add a
chatbot. I keep reading that the bot can loop forever calling tools. How do I stop that from
happening?" The reader's project ("a Django site") is not what they ask about: checked whole,
the blog's lack of "Django" declined a question its step-limits article answers; searched
whole, the scene's words kept "…Yesterday it got stuck calling the same tool twenty times.
What's a sensible cap on model calls per turn?" under the relevance bar. A librarian answers
the sentences that ask, read with the one they point back to ("stop that", "这种情况"), or
with the whole scene when they have too few words of their own ("What's the trick?").
Sentences are told apart by grammar (a question mark, a question word, "tell me", "我想知道"),
not by the topics they name. The message is still searched whole first (a scene may name the
topic: "Behind nginx the reply lands at the end. Is there a header that fixes it?"), and the
ask alone after it (ask_searched).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from agent.llm.offline_hits import _failed, _hit_list, _relevant
from agent.llm.offline_names import mentions
from agent.llm.offline_symptom import clauses, is_symptom, symptom_start, without_set_up
from agent.llm.offline_text import terms

# Sentence ends: English ones before a space (so "asyncio.gather" and "0.5" stay whole),
# Chinese ones anywhere.
_SPLIT = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])")
_OPENER = (
    r"(?:(?:so|and|but|anyway|well|ok|okay|also|now|then|basically|honestly|seriously)\b[\s,，]*)*"
)
# A sentence that asks in English without a question mark: a question word or auxiliary
# first ("how do I cap the steps."), or a request ("tell me…", "explain…", "I want to know…").
_ASKS_EN = re.compile(
    rf"^{_OPENER}(?:(?:how|what|what's|why|which|when|where|who|whom|whose|is|are|was|were|"
    r"does|do|did|can|could|should|would|will|shall|may|must|has|have)\b"
    r"|(?:please\s+)?(?:tell|explain|show|describe|walk|help|teach|give|recommend|suggest|"
    r"point|compare|list)\s+(?:me|us|how|what|why|which|the|a|an)\b"
    r"|i(?:'d| would)? (?:want|like|need) to (?:know|understand|learn|find out)\b"
    r"|i(?:'m| am) (?:wondering|curious|trying to understand)\b|i wonder\b"
    r"|(?:any|some) (?:ideas|tips|advice|pointers|suggestions)\b)",
    re.IGNORECASE,
)
# The same in Chinese: a request first ("我想知道", "请问", "告诉我"), or a question's own words
# anywhere ("怎么", "为什么", "是不是", a closing "吗").
_ASKS_ZH = re.compile(
    r"(?:我想知道|想知道|我想了解|想了解|我想问|想问|请问|请教|请(?:说明|解释|介绍|讲讲)|告诉我|帮我|求助"
    r"|怎么|怎样|如何|为什么|为何|什么|哪些|哪个|哪种|哪里|多少|多久|几个|是否|是不是|能不能|会不会|"
    r"有没有|可不可以|要不要|够不够|对不对|好不好)"
    r"|[吗呢][。.]?$"
)
# The ask points back to the sentence before it with a pronoun ("stop that from happening?",
# "Will that swallow the cancellation?", "how does it work?", "ship those logs") or 这/它 in
# Chinese ("这种情况怎么防止？"). Not a dummy "it" ("is it true that…", "is it better to…"),
# nor "that" joining a clause ("true that", "a header that my app returns"), nor "this" of
# the page ("this blog").
_POINTS_BACK_EN = re.compile(
    r"\b(?:these|those|them|they|such)\b"
    r"|\bthis\b(?!\s+(?:blog|article|post|page|site)\b)"
    r"|\bit\b(?!\s*(?:'s|is|was)?\s*(?:true|possible|better|worse|worth|ok|okay|safe|wise|"
    r"normal|necessary|enough|fine|right|correct|wrong|bad|good|a good idea|common)\b)"
    r"|(?:^|\b(?:about|around|with|for|to|of|on|from|do|does|did|stop|fix|prevent|avoid|"
    r"handle|is|was|cause|causes|mean|means)\s+)that\b(?!\s+(?:the|a|an)\b)"
    r"|\bthat\s*(?=[?？.!,]|$)",
    re.IGNORECASE,
)
_POINTS_BACK_ZH = re.compile(r"这|它|那种|那样|那个|那些|此")
# An ask with this many content words or fewer says nothing on its own ("What's the trick?",
# "What should we have done?", "what am i missing"): it is read with its whole scene.
_FEW_TERMS = 4
# A scene lends at most this many names: a reader's scene is a sentence or two.
_SCENE_NAMES = 40
# A scene sentence about the reader's own work ("I'm building…", "our bill", "我们团队…"): its
# names are theirs, not the topic. A pasted error ("redis.exceptions.ConnectionError: …")
# speaks of no one, and its names stay the question's.
_READER = re.compile(r"\b(?:i|i'm|i've|i'd|me|my|we|we're|we've|us|our)\b|我|咱", re.IGNORECASE)
# A word of the scene, as names are written ("Django", "gpt-4o", "asgi.py", "通义千问").
_NAME = re.compile(r"[\w][\w.+#/'-]*[\w+#]|\w")  # "I'm" whole, not "m"


@dataclass(frozen=True)
class Ask:
    """A message split into what it asks and the scene it sets."""

    question: str  # from the first sentence that asks on; after the one it points back to
    scene: str  # words of the reader's own scene the ask does not use ("Django", "OpenAI")


def the_ask(message: str) -> Ask:
    """The message's ask and its scene: the scene is what it says before its first sentence
    that asks; what follows that sentence adds to the ask ("…? I want the partial text kept.")."""
    parts = [part.strip() for part in _SPLIT.split(message) if part.strip()]
    first = next((n for n, part in enumerate(parts) if _asks(part)), 0)
    if first == 0:
        return Ask(message, "")
    asked = " ".join(parts[first:])
    read = asked  # the words the scene's names are checked against
    if _POINTS_BACK_EN.search(asked) or _POINTS_BACK_ZH.search(asked) or not terms(asked):
        # "How do I stop that from happening?" and a bare "why??" read the sentence before
        # them; a pasted passage that speaks of no one ("redis.exceptions.ConnectionError: …
        # Connection refused. -- when this happens…") is read whole: "this" is all of it.
        # The story's sentence that says what goes wrong, when the nearest one only adds to
        # it ("…never answers. The bill was huge. How can I stop it?", offline_symptom).
        start = symptom_start(parts, first - 1)
        while start > 0 and not _READER.search(parts[start - 1]):
            start -= 1
        question = read = " ".join(parts[start:])
    elif len(terms(asked)) <= _FEW_TERMS:
        # "What's the trick?" says nothing without the scene; what goes wrong in it, without
        # the reader's set-up ("We run a small Flask site, and our bot keeps calling…"), is
        # what it asks about, and is searched when the whole message misses (offline_symptom).
        story = without_set_up(parts[:first], _READER)
        question = f"{story} {asked}" if story else message
    else:
        question = asked
    lowered = read.lower()
    # The reader's set-up ("We run Django behind a proxy"), not what they say goes wrong:
    # the names of a symptom ("…our DiskANN index keeps returning nothing") are the
    # question's, and an article that does not name them does not answer it (offline_symptom).
    own = " ".join(c for c in clauses(parts[:first]) if _READER.search(c) and not is_symptom(c))
    # Each distinct word once, the question's own words skipped, and at most _SCENE_NAMES:
    # `mentions` builds a pattern per word, and 4,000 characters of distinct words cost 70 ms.
    words = set(_NAME.findall(lowered))
    names = [w for w in dict.fromkeys(_NAME.findall(own)) if w.lower() not in words]
    scene = [w for w in names[:_SCENE_NAMES] if not mentions(lowered, w)]
    return Ask(question, " ".join(scene))


def _asks(sentence: str) -> bool:
    """True for a sentence that asks: a question mark, or the grammar of a question or a
    request in either language."""
    text = sentence.strip()
    if text.endswith(("?", "？")):
        return True
    return bool(_ASKS_EN.search(text) or _ASKS_ZH.search(text))


def ask_searched(message: str, ask: str, searched: list[Any], alone: bool) -> list[Any]:
    """The search results to answer from: the whole message's, and its parts', as searched;
    the ask's alone when the whole message found nothing that cleared the bar.

    `searched` ends with the ask's search when the message sets a scene first (and is not
    a follow-up or a summary request, `alone`): the scene's words ("Yesterday it got stuck
    calling the same tool twenty times") outweigh the ask's, so the whole message may miss
    while the ask finds its article; a scene that names the topic (behind nginx, "Is there a
    header my app can return?") is why the whole message is tried first.
    """
    if alone or not ask or ask == message or len(searched) < 2:
        return searched
    *asked, own = searched
    whole = _hit_list(asked[0])
    if _failed(asked[0]) or _relevant(message, whole) or not _relevant(ask, _hit_list(own)):
        return asked
    return [own]  # the ask's search alone: the whole message's parts go with it
