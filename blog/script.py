"""Which script a Chinese text is written in, and the text in the other one.

The blog's Chinese articles are in Simplified characters; readers in Taiwan and Hong Kong write
Traditional ones. A question is matched against the articles in Simplified, and answered in
the script it was asked in. Framework-free: the answered-or-not rule reads declines with it.
The character and phrase tables are OpenCC's, from the `opencc-purepy` package (pure Python).
"""

from __future__ import annotations

import re
from functools import cache

from opencc_purepy import OpenCC

from blog.language import fullwidth_fold

# Kana: a Japanese question shares many Traditional-looking characters (検, 設定) and is no
# Chinese reader's; its script is left as it is.
_KANA = re.compile(r"[\u3040-\u30ff]")


@cache
def _converter(config: str) -> OpenCC:
    # Loaded on first use (about 0.1 s each): most questions are English or Simplified.
    return OpenCC(config)


def _changed(text: str, config: str) -> int:
    converted = _converter(config).convert(text)
    if len(converted) != len(text):
        return 1 + abs(len(converted) - len(text))  # a phrase rewritten: at least one change
    return sum(1 for a, b in zip(text, converted, strict=True) if a != b)


def is_traditional(text: str) -> bool:
    """True when `text` leans Traditional: more of its characters change on the way to
    Simplified than on the way to Traditional.

    A mixed question ("中文全文检索為什麼…") counts as Traditional when most of the characters
    that differ between the scripts are Traditional; a Simplified one with a character both
    scripts share (著名) does not.
    """
    if not text or _KANA.search(text) or text.isascii():
        return False
    return _changed(text, "t2s") > _changed(text, "s2t")


def to_simplified(text: str) -> str:
    """`text` in Simplified characters and mainland wording when it leans Traditional, else
    unchanged.

    Taiwan's words become the mainland's the articles use (資料庫 -> 数据库, 使用者 -> 用户,
    非同步 -> 异步), so a question written in Taipei matches them word for word.
    """
    return _converter("tw2sp").convert(text) if is_traditional(text) else text


def question_fold(text: str) -> str:
    """A question as the search and the offline model match it: fullwidth letters and digits
    as ASCII, Traditional characters as Simplified."""
    return to_simplified(fullwidth_fold(text))


def simplified_chars(text: str) -> str:
    """Every Traditional character of `text` as its Simplified one, words unchanged.

    For text that may mix both scripts (an answer whose frame was put in Traditional around
    quotes left in Simplified): character by character, Simplified text stays as it is.
    """
    return _converter("t2s").convert(text) if text and not text.isascii() else text


def to_traditional(text: str) -> str:
    """`text` in Traditional characters (the words stay: 博客 is not rewritten as 部落格)."""
    return _converter("s2t").convert(text) if text and not text.isascii() else text
