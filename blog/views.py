"""Blog pages. Thin: each view asks a selector and renders a template."""

import logging
from collections.abc import Iterable

from django.conf import settings
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.utils.cache import patch_cache_control
from django.utils.translation import get_language
from django.views.decorators.http import condition

from blog import selectors
from blog.embeddings import EmbeddingError
from blog.feeds import ArticleFeed
from blog.models import Article, Tag
from blog.rendering import markdown_to_html
from blog.search_page import (
    QUERY_MAX_LENGTH,
    SearchPageQuery,
    search_page_query,
    search_page_results,
)

logger = logging.getLogger(__name__)


def article_list(request: HttpRequest) -> HttpResponse:
    page = Paginator(selectors.article_list_published(), settings.BLOG_PAGE_SIZE).get_page(
        request.GET.get("page")
    )
    return render(
        request,
        "blog/article_list.html",
        {"page_obj": page, "tags": selectors.tag_list_in_use()[:12]},
    )


def article_detail(request: HttpRequest, slug: str) -> HttpResponse:
    try:
        article = selectors.article_get_visible(slug=slug, user=request.user)
    except Http404:
        # An address the article had before its slug was edited: a link elsewhere, a chat's
        # citation. The browser keeps the #section on the redirect.
        if moved := selectors.article_get_by_former_slug(slug=slug, user=request.user):
            return _moved(moved)
        # A reader's citation to an article since withdrawn lands here, from a chat answered
        # before: the site's page, with the panel and its conversation, even under `make run`'s
        # DEBUG, whose yellow page of URL patterns is for a path no route matches.
        nearest = selectors.article_nearest_to_slug(slug=slug)
        context = {"article_missing": True, "nearest": nearest}
        return render(request, "404.html", context, status=404)
    response = article_page_render(request, article=article, tags=article.tags.all())
    if not article.is_public:
        # A staff preview of a draft: the same URL is a 404 for everyone else, so no shared
        # cache (a CDN, a proxy) may keep this answer and hand the draft to the next visitor.
        patch_cache_control(response, private=True, no_store=True)
    return response


def _moved(article: Article) -> HttpResponse:
    """A 301 to the article's address, kept by a browser for an hour only: a browser keeps a
    bare 301 for good, and a new article given the old address later would never be reached."""
    response = redirect(article, permanent=True)
    if article.is_public:
        patch_cache_control(response, max_age=3600)
    else:
        patch_cache_control(response, private=True, no_store=True)
    return response


def article_page_render(
    request: HttpRequest,
    *,
    article: Article,
    tags: Iterable[Tag],
    preview: bool = False,
    problems: Iterable[str] = (),
) -> HttpResponse:
    """An article's page; the admin's preview renders an unsaved one with the same template.

    A saved article's body comes from the rendered-body cache; a preview's is rendered as typed,
    and kept out of the cache (a draft typed over and over need not fill it). `problems`: what
    the form would refuse in the body, said above the preview.
    """
    body_html = (
        markdown_to_html(article.body) if preview else selectors.article_body_html(article=article)
    )
    older, newer = (None, None) if preview else selectors.article_neighbours(article=article)
    context = {
        "article": article,
        "tags": tags,
        "body_html": body_html,
        "preview": preview,
        "problems": problems,
        "older": older,
        "newer": newer,
        "translations": [] if preview else selectors.article_translations(article=article),
    }
    return render(request, "blog/article_detail.html", context)


def tag_detail(request: HttpRequest, slug: str) -> HttpResponse:
    tag = selectors.tag_get_with_articles(slug=slug)
    page = Paginator(selectors.article_list_published(tag=tag), settings.BLOG_PAGE_SIZE).get_page(
        request.GET.get("page")
    )
    return render(request, "blog/tag_detail.html", {"tag": tag, "page_obj": page})


def search(request: HttpRequest) -> HttpResponse:
    """`/search/?q=`: matching articles as cards; its searches were counted on the way in
    (config.search_limit), as `/api/search`'s are."""
    query = search_page_query(str(request.GET.get("q", "")))
    context, status = {"query": query, "max_length": QUERY_MAX_LENGTH}, 200
    if query.problem == "too_long":
        status = 400
    elif query.searchable:
        try:
            context["results"] = search_page_results(query=query.text)
        except EmbeddingError as exc:  # the embedding endpoint or model is down
            logger.warning("search is unavailable: %s", exc)
            context["unavailable"], status = True, 503
    return search_page_render(request, context, status=status)


def search_page_render(request: HttpRequest, context: dict, *, status: int) -> HttpResponse:
    """The search page; config.search_limit renders its refusals with it too."""
    response = render(request, "blog/search.html", context, status=status)
    if status != 200:
        response["Cache-Control"] = "no-store"  # a refusal or an outage is not the page to keep
    return response


def search_refused(request: HttpRequest, *, raw: str, problem: str, wait: str = "") -> HttpResponse:
    """A refusal before the view ran (a NUL in the query, too many searches): the page with its
    box holding what was typed and a sentence saying why."""
    query = SearchPageQuery(text=raw, problem=problem)
    status = {"invalid_character": 400, "rate_limited": 429, "confirm": 200}.get(problem, 503)
    context = {"query": query, "max_length": QUERY_MAX_LENGTH, "wait": wait}
    return search_page_render(request, context, status=status)


# A feed reader that has the newest version is answered 304 without a rendering. Its subtitle
# is in the reader's language, so the language is part of the version.
article_feed = condition(
    etag_func=lambda request: f"{selectors.article_feed_version()}-{get_language()}"
)(ArticleFeed())


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    return render(request, "404.html", status=404)


def server_error(request: HttpRequest) -> HttpResponse:
    """The page for an error no view handled, with DEBUG off: Django's own is the bare words
    "Server Error (500)", with no way back to the site and in English only."""
    return _error_page(
        request, 500, "Something went wrong on our side. Please try again.", "500.html"
    )


def bad_request(request: HttpRequest) -> HttpResponse:
    """The page for a request Django refuses as suspicious, a Host it does not serve among them:
    Django's own is the bare words "Bad Request (400)", in English only."""
    return _error_page(request, 400, "The request could not be read.", "400.html")


def _error_page(request: HttpRequest, status: int, words: str, template: str) -> HttpResponse:
    """Rendered with the request (the reader's language, the site's name); if that fails in
    turn (a Host Django refused raises again wherever it is read), the plain words are the
    answer: an error page must not raise."""
    try:
        body = render_to_string(template, request=request)
        content_type = "text/html; charset=utf-8"
    except Exception:  # noqa: BLE001 - the error page must not fail in turn
        logger.exception("the %s page failed to render", status)
        body, content_type = words, "text/plain"
    response = HttpResponse(body, status=status, content_type=content_type)
    response["Cache-Control"] = "no-store"
    return response
