"""Which language an article is written in, for its page's `lang` and its date."""

import re

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z]")
# Chinese articles quote English terms (pgvector, HNSW); a third of the letters is plenty.
_CJK_SHARE = 0.3
# Fullwidth Latin letters and digits (U+FF10-FF19, U+FF21-FF3A, U+FF41-FF5A), as a Chinese or
# Japanese keyboard in fullwidth mode types them. Fullwidth punctuation ("？", "，") is left:
# Chinese is written with it, and the question splitters read it as it is.
_FULLWIDTH = {
    code: code - 0xFEE0
    for start, end in [(0xFF10, 0xFF19), (0xFF21, 0xFF3A), (0xFF41, 0xFF5A)]
    for code in range(start, end + 1)
}


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


def fullwidth_fold(text: str) -> str:
    """`text` with fullwidth letters and digits as ASCII: "ｐｇｖｅｃｔｏｒ" is pgvector.

    No index holds the fullwidth forms: "ｐｇｖｅｃｔｏｒ 是什么？" found nothing, and was declined.
    """
    return text.translate(_FULLWIDTH)


def chinese_variant(*, current: str, accept: str) -> str:
    """The Chinese the language switch offers: the one shown now, else the browser's first
    Chinese (zh-TW gives "zh-hant"), else "zh-hans".

    The switch said 中文 and always meant Simplified: an English page read by a browser set to
    Taiwan's Chinese switched to a script its reader does not write.
    """
    # Imported here: blog.script folds questions with this module's helpers inside the
    # framework-free agent loop, which must not import Django (tests/agent/test_import_purity.py).
    from django.utils.translation import get_supported_language_variant
    from django.utils.translation.trans_real import parse_accept_lang_header

    if current.startswith("zh"):
        return current
    for code, _quality in parse_accept_lang_header(accept):
        if code.startswith("zh"):
            try:
                return get_supported_language_variant(code)
            except LookupError:
                break
    return "zh-hans"
