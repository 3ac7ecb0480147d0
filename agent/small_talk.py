"""Small talk: a message that only greets, thanks or says goodbye, and asks nothing.

Such a turn is neither answered nor a missed question. Before this rule a visitor's "thanks!"
cited no article, so it joined the editors' "write this next" backlog and the dashboard's
unanswered count, under any model. The rule reads the visitor's whole message, never the
answer: it holds for the offline model and a real one alike.

Framework-free (the offline model imports the patterns to answer thanks with a welcome).
"""

from __future__ import annotations

import re

GREETING = (
    r"(hi|hello|hey|hiya|howdy|yo|greetings|good (morning|afternoon|evening|day))( there)?"
    r"|(你好|您好|嗨|哈喽|哈啰|早上好|下午好|晚上好)(呀|啊)?"
)
_ACKNOWLEDGE = r"(ok|okay|great|cool|nice|perfect|awesome|got it|that helps|helpful)"
_THANKS = (
    r"(thanks|thank you|thank u|thx|ty|cheers|much appreciated|谢谢|多谢|感谢|谢啦|谢了)"
    r"( (so|very) much| a lot| again|你|您|啦)*"
)
_GOODBYE = (
    r"(bye|bye bye|goodbye|good night|see you( later| soon)?|see ya|later|take care"
    r"|have a (nice|good|great) (day|evening|weekend|one)|再见|拜拜|回见|晚安)"
)
# What closes an exchange without thanking: a reader's "ok", "got it", "that helped" or "明白了"
# was searched, and "ok" quoted a Chinese table row whose field is named "ok", "makes sense,
# thanks" an unrelated sentence. Whole messages only: none of this is stripped from the front
# of a question (PLEASANTRY keeps to the short list above).
_CLOSING = (
    r"(k|kk|okie|okey|sure|alright|all right|neat|excellent|fantastic|wonderful|amazing"
    r"|brilliant|lovely|good|very good|wow|oh|ah|i see|understood|noted|gotcha|fair enough"
    r"|(that )?makes sense|good to know|appreciate it|i appreciate it|much appreciated"
    r"|(that|this|it)('s| is| was)?( (very|really|super|so|quite|extremely))?"
    r" (helpful|useful|clear|great|perfect|interesting)"
    r"|(that|this|it|you) (helped|helps|really helped|helped a lot|helps a lot)"
    r"|(great|good|nice|perfect|clear|helpful|useful) (answer|explanation|reply)"
    r"|(that's |that is |this is |it's )?exactly what i (needed|wanted|was looking for)"
    r"|for (the|your|all (the|your))"
    r" (help|answers?|explanations?|repl(y|ies)|info|information|time)"
    r"|好的|好滴|好嘞|嗯+|哦+|噢|明白了?|懂了|知道了|了解了?|收到|行|不错|太好了|很好"
    r"|(很|非常|太)?有(帮助|用)(了)?|(谢谢|感谢)(你的)?(回答|解释|帮助|帮忙))"
)
SMALL_TALK_MAX_CHARS = 80
_PUNCTUATION = r"[\s,，!！.。~～]*"
_EMOJI = r"([:;]-?\)|🙏|👍)?"

# What may open a message before its question ("thanks! and what is HNSW?"; agent.llm).
PLEASANTRY = rf"{GREETING}|{_ACKNOWLEDGE}|{_THANKS}"
# One greeting, acknowledgement, thanks or goodbye. A message of small talk is a run of them,
# read by `_phrases_only` (not one pattern repeating this one: see there).
_PHRASE = re.compile(rf"{PLEASANTRY}|{_GOODBYE}|{_CLOSING}", re.IGNORECASE)
_GAP = re.compile(_PUNCTUATION)
_END = re.compile(rf"{_PUNCTUATION}{_EMOJI}\s*")
_THANKING = re.compile(rf"{_THANKS}|appreciate|感谢|有帮助", re.IGNORECASE)
_SAYS_GOODBYE = re.compile(_GOODBYE, re.IGNORECASE)
_GREETING_ONLY = re.compile(rf"\s*({GREETING}){_PUNCTUATION}{_EMOJI}\s*", re.IGNORECASE)


def is_thanks(question: str) -> bool:
    """True when the whole message is small talk that thanks ("thanks!", "ok thank you",
    "thanks, that helped", "谢谢")."""
    return is_small_talk(question) and _THANKING.search(question) is not None


def closing(question: str) -> str | None:
    """What a whole message of small talk does, besides greeting: "thanks", "goodbye" or
    "acknowledged" ("ok", "got it", "明白了"); None for a question or a greeting alone."""
    if not is_small_talk(question) or _GREETING_ONLY.fullmatch(question):
        return None
    if is_thanks(question):
        return "thanks"
    return "goodbye" if _SAYS_GOODBYE.search(question) else "acknowledged"


def is_small_talk(question: str) -> bool:
    """True when the whole message only greets, thanks or says goodbye ("hi", "谢谢！", "bye")."""
    # Small talk is short; the cap also bounds the work on a 4,000-character message.
    return len(question) <= SMALL_TALK_MAX_CHARS and _phrases_only(question)


def _phrases_only(text: str) -> bool:
    """True when `text` is phrases (`_PHRASE`), each followed by optional punctuation, then
    an optional emoji: at most one match per pair of positions, so at most 80 x 80.

    One pattern repeating `_PHRASE` backtracked through every way of cutting a run into
    phrases ("嗯嗯" is one "嗯+" or two, "kk" one or two "k"), and a run that failed at its last
    character tried them all: 20 "嗯" and a "?" took 5 s, 24 took 62 s, each further one
    doubled it, and the recording of a turn reads every message (the whole process stalled).
    """
    starts = {len(text) - len(text.lstrip())}
    for start in range(len(text)):
        if start not in starts:
            continue
        for end in range(start + 1, len(text) + 1):
            if _PHRASE.fullmatch(text, start, end) is None:
                continue
            if _END.fullmatch(text, end):
                return True
            starts.update(range(end, _GAP.match(text, end).end() + 1))
    return False
