"""The Traditional Chinese catalogues, made from the Simplified ones: one set to translate.

A reader in Taiwan (Accept-Language zh-TW) got the panel and the admin in Simplified: Django
picks the nearest language the site has, and it had only zh-hans. The Traditional catalogues are
the Simplified ones put through OpenCC's Taiwan table with its phrases (s2twp: 博客 -> 部落格,
搜索 -> 搜尋), the words a reader there uses, and with the quotation marks read
there (“…” -> 「…」, ‘…’ -> 『…』: OpenCC converts characters, not punctuation).
`manage.py catalogue_traditional` writes them, and a test fails when they fall behind the
Simplified ones.
"""

from pathlib import Path

from opencc_purepy import OpenCC

from blog.script import TAIWAN_QUOTES, taiwan_worded

CATALOGUES = ["django.po", "djangojs.po"]
SOURCE = "zh_Hans"
TARGET = "zh_Hant"
# The .po header's own lines that say which language and who: rewritten, not converted.
_HEADER = {
    f'"Language: {SOURCE}\\n"': f'"Language: {TARGET}\\n"',
    '"Language-Team: Docent (Simplified Chinese)\\n"': (
        '"Language-Team: Docent (Traditional Chinese)\\n"'
    ),
}
_NOTE = "# Generated from ../../zh_Hans by `manage.py catalogue_traditional`: edit that one.\n"


def catalogue_traditional(text: str) -> str:
    """A Simplified .po file's text with its translations (msgstr) in Traditional characters.

    Args:
        text: the zh_Hans catalogue.
    Returns:
        The zh_Hant catalogue: msgids, comments and placeholders as they were.
    """
    converter = OpenCC("s2twp")
    lines, in_msgstr, in_header = [_NOTE], False, True
    for line in text.splitlines(keepends=True):
        in_header = in_header and not line.startswith("msgid")
        if line.startswith("msgstr"):
            in_msgstr = True
        elif not line.startswith('"'):
            in_msgstr = False
        if line.rstrip("\n") in _HEADER:
            line = _HEADER[line.rstrip("\n")] + "\n"
        elif in_header and line.startswith("#"):  # the file's opening comment names its script
            line = line.replace("Simplified Chinese", "Traditional Chinese")
        elif in_msgstr and not line.isascii():
            # The admin's status read 已釋出 before the word fix (blog.script).
            line = taiwan_worded(converter.s2twp(line)).translate(TAIWAN_QUOTES)
        lines.append(line)
    return "".join(lines)


def catalogues_traditional_write(*, locale: Path) -> list[Path]:
    """Write each Traditional catalogue beside its Simplified one; the paths written."""
    written = []
    for name in CATALOGUES:
        source = locale / SOURCE / "LC_MESSAGES" / name
        target = locale / TARGET / "LC_MESSAGES" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(catalogue_traditional(source.read_text(encoding="utf-8")), "utf-8")
        written.append(target)
    return written
