"""glossary.txt read as plain data: no database, no Django.

The search stems the English side with PostgreSQL (blog.glossary); the offline model, which
imports no framework, matches words its own way (agent.llm.offline_bridge). Both read the
lines here.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

GLOSSARY_FILE = Path(__file__).with_name("glossary.txt")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")

Pair = tuple[tuple[str, ...], tuple[str, ...]]  # English words, Chinese terms


@cache
def glossary_pairs() -> tuple[Pair, ...]:
    """The glossary file's lines, parsed once per process."""
    return tuple(parse(GLOSSARY_FILE.read_text(encoding="utf-8")))


def parse(source: str) -> list[Pair]:
    parsed = []
    for line in source.splitlines():
        if not line.strip() or line.lstrip().startswith("#") or "=" not in line:
            continue
        english, chinese = (side.strip() for side in line.split("=", 1))
        # One character ("表", "长") is too common a substring to stand for an idea.
        terms = tuple(t.strip() for t in chinese.split("|") if len(bigrams(t.strip())) >= 1)
        parsed.append((tuple(english.lower().split()), terms))
    return parsed


def bigrams(term: str) -> list[str]:
    """The term's CJK character bigrams, as the index spells Chinese."""
    chars = [ch for ch in term if _CJK.match(ch)]
    if len(chars) < 2:
        return []
    return ["".join(chars[i : i + 2]) for i in range(len(chars) - 1)]
