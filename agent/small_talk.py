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
_GOODBYE = r"(bye|goodbye|see you|see ya|再见|拜拜)"
SMALL_TALK_MAX_CHARS = 80
_PUNCTUATION = r"[\s,，!！.。~～]*"
_EMOJI = r"([:;]-?\)|🙏|👍)?"

THANKS = re.compile(
    rf"\s*({_ACKNOWLEDGE}[\s,，!！.。]*)*{_THANKS}[\s,，!！.。~]*{_EMOJI}\s*", re.IGNORECASE
)
# What may open a message before its question ("thanks! and what is HNSW?"; agent.llm).
PLEASANTRY = rf"{GREETING}|{_ACKNOWLEDGE}|{_THANKS}"
# Any run of greetings, acknowledgements, thanks and goodbyes, and nothing else.
_PHRASE = rf"({PLEASANTRY}|{_GOODBYE})"
_SMALL_TALK = re.compile(
    rf"\s*{_PHRASE}({_PUNCTUATION}{_PHRASE})*{_PUNCTUATION}{_EMOJI}\s*", re.IGNORECASE
)


def is_thanks(question: str) -> bool:
    """True when the whole message thanks the assistant ("thanks!", "ok thank you", "谢谢")."""
    return THANKS.fullmatch(question) is not None


def is_small_talk(question: str) -> bool:
    """True when the whole message only greets, thanks or says goodbye ("hi", "谢谢！", "bye")."""
    # Small talk is short; the cap also bounds the pattern's work on a 4,000-character message.
    return len(question) <= SMALL_TALK_MAX_CHARS and _SMALL_TALK.fullmatch(question) is not None
