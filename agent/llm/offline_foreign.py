"""A question in a language the blog is not written in: its decline says why it may have missed.

The blog is written in English and Chinese, and its search matches words: "¿Qué es un índice
HNSW?" or "ما هو فهرس HNSW؟" finds nothing although the blog has an article on HNSW indexes, and
the plain decline ("I couldn't find anything about that in this blog's articles") told that
reader the blog has nothing on it. The decline for such a question says what the blog is
written in and asks again in one of those languages, in the language the reader reads the
site in. A question taken for foreign wrongly gets one more true sentence, nothing worse.
"""

from __future__ import annotations

import re
import unicodedata

FOREIGN_DECLINE = {
    "en": "I couldn’t find an answer to that in this blog’s articles. They are written in "
    "English and Chinese, and a question in another language often misses what they say: "
    "please try asking in English or Chinese.",
    "zh": "我在这个博客的文章里没有找到答案。博客的文章用中文和英文写成，用其他语言提问常常"
    "找不到相关内容，请试着用中文或英文提问。",
}

_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
# Hiragana and katakana letters: Chinese never writes them, Japanese always does.
_KANA = re.compile(r"[\u3041-\u3096\u30a1-\u30fa]")
_LETTERS = re.compile(r"[^\W\d_]+")
# Function words of the languages most often typed in Latin letters besides English (Spanish,
# French, German, Portuguese, Italian, Dutch), leaving out those that are English words too
# ("die", "was", "as", "come", "man", "den", "son", "sin", "also").
_FOREIGN_WORDS = frozenset(
    # Spanish
    "de qué que cuál cuáles cómo cuándo dónde quién por porque para el la los las un una unos "
    "es del al y en se lo con sobre hay está están puedo puede este esta esto eso más "
    "pero muy también mi tu su "
    # French
    "quoi quel quelle quels quelles comment pourquoi qu est les le des du une et avec dans "
    "sur pour ce cette ces je vous nous il elle ils peut faut où quand qui mais très aussi ça "
    "à au aux "
    # German
    "wie warum wieso weshalb ist sind der das ein eine einen einem und mit ohne für auf ich "
    "wir kann können wann wo wer nicht auch dem des zu von "
    # Portuguese and Italian
    "qual quais um uma é são não com em isso da dos das che cosa perché il gli sono per di della "
    # Dutch
    "wat hoe waarom een het zijn van niet voor ik".split()
)
_ENGLISH_WORDS = frozenset(
    "a an the is are was were be been what which who whom whose why how when where does do "
    "did can could should would will it its this that these those of in on for with about "
    "from to and or not i you we they my your our there".split()
)


def foreign_language(text: str) -> bool:
    """Whether `text` is written in a language other than English and Chinese.

    Kana make it Japanese; letters of another script (Arabic, Cyrillic, Hangul, …) outnumbering
    the Latin letters and Chinese characters make it that script's; among Latin letters, more
    function words of Spanish, French, German, Portuguese, Italian or Dutch than of English.
    """
    if _KANA.search(text):
        return True
    han = len(_HAN.findall(text))
    latin = other = 0
    for char in text:
        if not char.isalpha() or _HAN.match(char):
            continue
        if unicodedata.name(char, "").startswith("LATIN"):
            latin += 1
        else:
            other += 1
    if other > latin + han:
        return True
    if han:
        return False
    words = _LETTERS.findall(text.lower())
    foreign = sum(word in _FOREIGN_WORDS for word in words) + 2 * bool(re.search("[¿¡]", text))
    english = sum(word in _ENGLISH_WORDS for word in words)
    return foreign >= 2 and foreign > english


def foreign_decline(question: str, reader: str) -> str | None:
    """The decline for a question in a language the blog is not written in, else None; in the
    language the reader reads the site in (`reader`: "zh-hans", "en" or "")."""
    if not foreign_language(question):
        return None
    return FOREIGN_DECLINE["zh" if reader.startswith("zh") else "en"]
