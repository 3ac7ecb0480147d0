"""The question as the search read it, and a line saying so.

The search corrects a reader's typo in what it looks for ("pgvecter" is searched as
"pgvector") and lists each correction on its hits (`read_as`). The offline model's own checks
ask whether the question's words appear in the articles it read: the names an answer must
mention, the rare words no article uses, the words a quote should share. Read as typed,
"pgvecter" is a name no article mentions, and "why do agents need a step limt?" was declined
although the search put the right article first. So the question those checks read is the
one the search ran, and an answer that quotes says which word it read, so a reader who meant
something else can see it.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from agent.llm.offline_names import named_terms
from agent.llm.offline_tools import SEARCH
from agent.llm.offline_turn import _Turn
from blog.respelling import respelled

# The line an answer ends with when it read a typo as the blog's word.
READ_AS = {"en": "(I read “{typed}” as “{meant}”.)", "zh": "（“{typed}”按“{meant}”理解。）"}


def search_read_as(results: list[tuple[str, Any]]) -> dict[str, str]:
    """The typos this turn's searches corrected, each with the word searched for."""
    found: dict[str, str] = {}
    for name, output in results:
        hits = output if name == SEARCH and isinstance(output, list) else []
        for hit in hits[:1]:  # every hit of a search carries the same corrections
            read_as = hit.get("read_as") if isinstance(hit, dict) else None
            if isinstance(read_as, dict):
                found |= {k: v for k, v in read_as.items() if isinstance(v, str) and v}
    return found


def as_searched(turn: _Turn, read_as: dict[str, str] | None = None) -> _Turn:
    """`turn` with its question read as the search read it (`read_as`: `trusted_reading`'s,
    when the caller has it already)."""
    read_as = trusted_reading(turn) if read_as is None else read_as
    if not read_as:
        return turn
    # The ask of a message that sets a scene first (offline_ask) is what gets answered: read
    # it the same way, or its typo would decline what the search found.
    return replace(
        turn,
        question=respelled(turn.question, read_as),
        ask=respelled(turn.ask, read_as) if turn.ask else "",
    )


def trusted_reading(turn: _Turn) -> dict[str, str]:
    """The search's corrections of the question, but a name's ("Faiss", "Citus", "Djnago")
    only where the articles read write the word meant as a name too ("Django"): the search
    read "Faiss" as "fails", and a name no article mentions must still decline the question.
    """
    read_as = search_read_as(turn.results)
    if not read_as:
        return {}
    names = {name.lower() for name in named_terms(turn.question)}
    texts = _texts(turn.results)
    return {
        typo: word
        for typo, word in read_as.items()
        if not _a_name_of(typo, names) or _written_as_name(word, texts)
    }


def _a_name_of(typo: str, names: set[str]) -> bool:
    """Is `typo` a name of the question, or a word of one ("database_sync_to_asnyc")?"""
    return any(typo == part for name in names for part in re.split(r"[^a-z]+", name))


def _written_as_name(word: str, texts: str) -> bool:
    """Do `texts` write `word` as a name: capitalised after a lower-case word ("… Django
    Channels"), in capitals, or as a word of a snake_case name ("database_sync_to_async")?"""
    pattern = rf"(?<![A-Za-z0-9-]){re.escape(word)}(?![A-Za-z0-9-])"
    for match in re.finditer(pattern, texts, re.IGNORECASE):
        found, before = match.group(), texts[max(0, match.start() - 2) : match.start()]
        if found != found.lower() and re.fullmatch(r"[a-z,;:] ", before) or "_" in before:
            return True
    return False


def _texts(results: list[tuple[str, Any]]) -> str:
    """The excerpts and bodies this turn's tools returned, as one text."""
    parts = []
    for _, output in results:
        items = output if isinstance(output, list) else [output]
        for item in items:
            if isinstance(item, dict):
                parts += [str(item.get(key) or "") for key in ("title", "excerpt", "body")]
    return "\n".join(parts)


def with_reading(answer: str, turn: _Turn, read_as: dict[str, str] | None = None) -> str:
    """`answer` with a last line naming each typo of the question it read as another word."""
    read_as = trusted_reading(turn) if read_as is None else read_as
    asked = turn.question
    typed = [(t, m) for t, m in read_as.items() if respelled(asked, {t: m}) != asked]
    if not typed:
        return answer
    line = READ_AS.get(turn.lang, READ_AS["en"])
    notes = " ".join(line.format(typed=t, meant=m) for t, m in typed)
    return f"{answer}\n\n{notes}"
