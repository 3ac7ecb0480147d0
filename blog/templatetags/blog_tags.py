"""Template helpers: an article's own language, and its date in the reader's."""

import re

from django import template
from django.utils import translation
from django.utils.formats import date_format
from django.utils.translation import ngettext

from blog.bidi import BIDI_EXPLICIT
from blog.language import html_lang, text_language
from blog.models import Article

register = template.Library()

# Per language: how a publication date reads in running text.
_DATE = {"en": "j F Y", "zh-hans": "Y年n月j日", "zh-hant": "Y年n月j日"}


def _code(article: Article) -> str:
    return text_language(f"{article.title}\n{article.summary}")


@register.filter
def article_lang(article: Article) -> str:
    """The article's `lang` attribute value, e.g. "zh-Hans"."""
    return html_lang(_code(article))


@register.filter
def article_language_name(article: Article) -> str:
    """The article's language named in itself ("English", "中文"), as a language switch does."""
    return "中文" if _code(article).startswith("zh") else "English"


@register.filter(name="html_lang")
def html_lang_filter(code: str) -> str:
    """A Django language code as an HTML `lang` value ("zh-hans" -> "zh-Hans")."""
    return html_lang(code)


@register.filter
def article_date(article: Article) -> str:
    """The publication date, in the language the reader chose (not the article's)."""
    if not article.published_at:
        return ""
    return date_format(article.published_at, _DATE.get(translation.get_language(), "j F Y"))


@register.filter
def reading_time(article: Article) -> str:
    """ "4 min read" in the reader's language, from the minutes counted at the article's save."""
    minutes = article.reading_minutes
    return ngettext("%(count)s min read", "%(count)s min read", minutes) % {"count": minutes}


_BIDI_EXPLICIT = re.compile(f"[{BIDI_EXPLICIT}]")


@register.filter
def isolated(text: str) -> str:
    """`text` without its bidi controls, between FIRST STRONG ISOLATE and POP DIRECTIONAL
    ISOLATE: a reader's words quoted in the site's sentence keep their own direction, and
    nothing in them reorders the sentence around them.

    The search page quotes its query ("Nothing in the blog matches “…”."), and a link from
    any site chooses that query: a RIGHT-TO-LEFT OVERRIDE in it read the rest of the site's
    sentence backwards (a PDI of its own would close the isolate, so those go too).
    """
    return f"\u2068{_BIDI_EXPLICIT.sub('', str(text))}\u2069"
