"""The Atom feed of published articles, for feed readers (announced in every page's head)."""

import copy
import re

from django.conf import settings
from django.contrib.syndication.views import Feed
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils.cache import patch_cache_control
from django.utils.feedgenerator import Atom1Feed
from django.utils.html import escape

from blog import selectors
from blog.language import html_lang, text_language
from blog.models import Article
from blog.site import site_description

# A feed reader asks every few minutes to hours; five minutes in a shared cache is soon enough
# for a new article, and a 304 (the ETag) saves the rendering in between.
FEED_MAX_AGE = 300
# What XML 1.0 cannot hold (C0 controls but tab, newline, return; U+FFFE, U+FFFF). A title may
# carry one (a vertical tab pasted from a word processor, kept by the admin's form) and Django's
# XML writer raises on it: one title made the whole feed a 500 for every reader.
_NOT_XML = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def xml_text(text: str) -> str:
    """`text` as XML can carry it: each character XML cannot hold becomes a space."""
    return _NOT_XML.sub(" ", text)


class _LanguagePerEntry(Atom1Feed):
    """Atom with an `xml:lang` on each entry: the blog is written in English and in Chinese, and
    a reader (or a screen reader) should not read one in the other's voice."""

    def item_attributes(self, item: dict) -> dict:
        return {**super().item_attributes(item), "xml:lang": item["language"]}


def site_host(request: HttpRequest) -> str:
    """The request's Host (an allowed one), its port kept only when it is the port the visitor
    reached: the port the socket listens on, or the one the trusted proxy reports."""
    host = request.get_host()
    name, colon, port = host.rpartition(":")
    if not colon or name.endswith(":") or "]" in port:  # no port (an IPv6 address's colons)
        return host
    return host if port == str(request.get_port()) else name


class ArticleFeed(Feed):
    feed_type = _LanguagePerEntry

    def __call__(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        response = super().__call__(request, *args, **kwargs)
        patch_cache_control(response, public=True, max_age=FEED_MAX_AGE)
        return response

    def get_feed(self, obj, request: HttpRequest):
        # Every link and entry id is absolute, made from the Host; a Host's port is the client's
        # to write (`Host: blog.example:6666`), and the feed is cached as public for everyone.
        sited = copy.copy(request)
        sited.META = {**request.META, "HTTP_HOST": site_host(request)}
        return super().get_feed(obj, sited)

    def title(self) -> str:
        return settings.SITE_NAME

    def subtitle(self) -> str:
        return site_description()

    def link(self) -> str:
        return reverse("blog:home")

    def feed_url(self) -> str:
        return reverse("blog:feed")

    def items(self) -> list[Article]:
        return selectors.article_list_feed()

    def item_title(self, item: Article) -> str:
        return xml_text(item.title)

    def item_description(self, item: Article) -> str:
        # Atom's summary is written `type="html"`: a summary is plain text, so "<div>" in it is
        # escaped to show as typed, not read by the feed reader as markup.
        return escape(xml_text(item.summary))

    def item_pubdate(self, item: Article):
        return item.published_at

    def item_updateddate(self, item: Article):
        # An article published ahead of its last edit (a scheduled post) was updated at its
        # publication, not before it.
        return max(item.updated_at, item.published_at)

    def item_author_name(self, item: Article) -> str:
        return settings.SITE_NAME  # the blog has no authors' names; the site signs its articles

    def item_extra_kwargs(self, item: Article) -> dict:
        return {"language": html_lang(text_language(f"{item.title}\n{item.summary}"))}
