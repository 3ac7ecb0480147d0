"""The offline model's declines, and the lead-ins of passages that may not answer.

A question whose figure or name the articles read do not give is declined, naming the
nearest article; one part of a two-part question is declined naming the part instead,
since the answer cites only the articles it quotes. A passage quoted without a word in
common with the question is introduced as the nearest found, in the reader's language.
"""

from __future__ import annotations

import re

from agent.llm.offline_render import LANGUAGE_NAMES, _title, article_link
from agent.llm.offline_text import inert

NO_FIGURE = {
    "en": "This blog’s articles don’t give that figure. The nearest is {link}, which "
    "discusses the topic without stating it.",
    "zh": "这个博客的文章没有给出这个数字。最接近的是《{link}》，但文中没有写明。",
}
# The nearest article is a link (the reader can go and read it), yet the turn stays a decline:
# a link inside a decline is no citation (agent.loop._finish), so it is not answered.
# Only the articles read were checked: another article might name it in passing, so the
# decline speaks of the articles found, not of the whole blog.
NOT_MENTIONED = {
    "en": "The articles I found don’t mention “{name}”, so they don’t answer this. The nearest "
    "is {link}, which discusses the topic without it.",
    "zh": "我找到的文章都没有提到“{name}”，所以回答不了这个问题。最接近的是《{link}》，"
    "但文中没有涉及它。",
}
# The same two, for one part of a question asked in two whose other part is answered: the
# nearest article is not named, since the answer cites only the articles it quotes.
NO_FIGURE_FOR_PART = {
    "en": "On “{part}”, this blog’s articles don’t give that figure.",
    "zh": "关于“{part}”，这个博客的文章没有给出这个数字。",
}
NOT_MENTIONED_FOR_PART = {
    "en": "On “{part}”, the articles I found don’t mention “{name}”, so they don’t answer it.",
    "zh": "关于“{part}”，我找到的文章都没有提到“{name}”，所以回答不了这一问。",
}
# A part whose article has nothing to quote for it: said, not dropped, so the reader does not
# take the other part's answer for an answer to both.
NOTHING_FOR_PART = {
    "en": "On “{part}”, I found nothing in this blog’s articles.",
    "zh": "关于“{part}”，我在这个博客的文章里没有找到相关内容。",
}
# Quoted in the other language without a word in common with the question.
NEAREST = {
    "en": "The nearest passage I found is from the {written} article “{title}”; it may not "
    "answer this exactly:",
    "zh": "我找到的最接近的内容来自{written}文章《{title}》，未必正好回答这个问题：",
}
# Quoted, matched through the glossary, from articles all in the other language: the reader is
# told before the text, not only by the source line after it.
QUOTED_FROM = {
    "en": "From the {written} article “{title}”, in its own words:",
    "zh": "以下摘自{written}文章《{title}》（原文）：",
}
# The same, for one part of a question asked in two: "this" would read as the whole question.
NEAREST_FOR_PART = {
    "en": "On “{part}”, the nearest passage I found is from the {written} article “{title}”; "
    "it may not answer that part exactly:",
    "zh": "关于“{part}”，我找到的最接近的内容来自{written}文章《{title}》，未必正好回答这一问：",
}
# The word that joined a part to the one before it, left off when the part is quoted back.
_JOINING = re.compile(
    r"^(?:(?:and|but|plus|also)\s+|(?:还有|另外|以及|而且)[，,、\s]*)", re.IGNORECASE
)
PART_LABEL_CHARS = 80  # a part is quoted back whole up to this, else cut at a word


def _no_figure(lang: str, source: dict, part: str) -> str:
    """The figure asked for is not given: the nearest article, or for a part, the part."""
    if part:
        return NO_FIGURE_FOR_PART[lang].format(part=_part_label(part))
    return NO_FIGURE[lang].format(link=article_link(source))


def _not_mentioned(lang: str, name: str, source: dict, part: str) -> str:
    """A name the articles read never mention: the nearest article, or for a part, the part."""
    if part:
        return NOT_MENTIONED_FOR_PART[lang].format(name=inert(name), part=_part_label(part))
    return NOT_MENTIONED[lang].format(name=inert(name), link=article_link(source))


def _part_label(part: str) -> str:
    """A part of the question quoted back: whole up to PART_LABEL_CHARS, else cut at a word,
    without the word that joined it to the other part ("还有，", "and")."""
    part = _JOINING.sub("", part.strip()).rstrip("?？,，。.;；")
    if len(part) > PART_LABEL_CHARS:
        cut = part[:PART_LABEL_CHARS].rsplit(" ", 1)[0] if " " in part else part[:PART_LABEL_CHARS]
        part = cut.rstrip(" ,，") + "…"
    return inert(part)


def _nearest_label(source: dict, lang: str, part: str = "") -> str:
    """The lead-in of a passage quoted blind; for `part`, of one part of a two-part question."""
    written = LANGUAGE_NAMES[lang].get(str(source.get("language") or ""), "")
    fields = {"title": _title(source), "written": written}
    if not part:
        return NEAREST[lang].format(**fields).replace("  ", " ")
    return NEAREST_FOR_PART[lang].format(part=_part_label(part), **fields).replace("  ", " ")


def _quoted_from_label(source: dict, lang: str) -> str:
    """The lead-in of an answer quoted whole from an article in the other language."""
    written = LANGUAGE_NAMES[lang].get(str(source.get("language") or ""), "")
    return QUOTED_FROM[lang].format(title=_title(source), written=written).replace("  ", " ")
