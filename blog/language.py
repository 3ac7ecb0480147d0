"""Which language an article is written in, for its page's `lang` and its date."""

import re

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z]")
# Chinese articles quote English terms (pgvector, HNSW); a third of the letters is plenty.
_CJK_SHARE = 0.3


def text_language(text: str) -> str:
    """Django's language code of a text: "zh-hans" when it is mostly Chinese, else "en"."""
    cjk = len(_CJK.findall(text))
    # A Chinese character carries about a word; a Latin word about five letters.
    latin_words = len(_LATIN.findall(text)) / 5
    if cjk and cjk / (cjk + latin_words) >= _CJK_SHARE:
        return "zh-hans"
    return "en"


def html_lang(code: str) -> str:
    """The BCP 47 tag for an HTML `lang` attribute ("zh-hans" -> "zh-Hans")."""
    head, _, script = code.partition("-")
    return f"{head}-{script.title()}" if len(script) == 4 else code
