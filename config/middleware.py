"""HTTP middleware: debug pages for loopback clients only; NUL-free URLs; session cookies minted
lazily; the language cookie in Vary; the admin in its viewer's time zone."""

import functools
import logging
import re
import zoneinfo

from asgiref.sync import iscoroutinefunction, markcoroutinefunction, sync_to_async
from django.conf import settings
from django.core.exceptions import SuspiciousOperation, TooManyFieldsSent
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseNotAllowed,
)
from django.middleware.locale import LocaleMiddleware
from django.urls import Resolver404, get_resolver, resolve, reverse
from django.utils import timezone, translation
from django.utils.cache import patch_cache_control, patch_vary_headers

from agent.text import INVALID
from blog import views as blog_views
from config.api_errors import (
    METHOD_NOT_ALLOWED,
    SERVER_ERROR,
    api_error_json,
    is_api_request,
)
from config.proxy import PROXY_HEADERS, UNTRUSTED_FORWARD, client_is_loopback
from config.sessions import session_key_mint

logger = logging.getLogger(__name__)

# Django's debug pages (the technical 404 and 500, the CSRF failure's help) carry this
# sentence; nothing else the site renders does. Matched loosely: the 500 also comes as plain
# text, to a client that prefers `Accept: text/plain`, without the <code> (an error raised in a
# middleware, such as a form post past DATA_UPLOAD_MAX_NUMBER_FIELDS read by the CSRF check,
# reached such a client through a tunnel with its traceback and settings), and the CSRF page
# breaks the line inside it.
DEBUG_MARK = re.compile(rb"because you have (?:<code>)?DEBUG\s+=\s+True")


class AsyncMiddleware:
    """Base of the project's async-only middleware: Django awaits them with no thread hop."""

    async_capable = True
    sync_capable = False

    def __init__(self, get_response) -> None:
        self.get_response = get_response
        if iscoroutinefunction(get_response):
            markcoroutinefunction(self)


class DebugPageGuard(AsyncMiddleware):
    """With DEBUG on, a client that is not on loopback gets the production error pages.

    It sits first, so it sees the request before anything can fail: a foreign Host, an unknown
    URL and a failing view each get the page DEBUG off would give, and any response that still
    carries the debug page's text is replaced.
    """

    async def __call__(self, request: HttpRequest) -> HttpResponse:
        if not settings.DEBUG or local_viewer(request):
            return await self.get_response(request)
        early = await _early_failure(request)
        if early is not None:
            return early
        response = await self.get_response(request)
        if (
            response.status_code >= 400
            and not response.streaming
            and DEBUG_MARK.search(response.content)
        ):
            logger.warning("replaced a debug page for %s", request.META.get("REMOTE_ADDR"))
            return await _error_page(request, response.status_code)
        return response

    def process_exception(self, request: HttpRequest, exception: Exception):
        if not settings.DEBUG or local_viewer(request):
            return None
        if isinstance(exception, Http404):
            return _not_found(request)
        logger.error("unhandled error for a non-loopback client", exc_info=exception)
        if is_api_request(request):
            return api_error_json(status=500, detail=SERVER_ERROR, code="internal")
        return HttpResponse("Server error.", status=500, content_type="text/plain")


def local_viewer(request: HttpRequest) -> bool:
    """Whoever runs this `make run`: a loopback client that came through no proxy.

    A reverse proxy or tunnel on the same machine (nginx, cloudflared, ngrok) talks from
    loopback for every visitor: judged by address alone, each got the debug pages (a foreign
    Host's DisallowedHost page was 78 KB of settings and paths). A proxy says so by its headers
    or by the public Host it passes on, which a bare local `make run` never sees.
    """
    if not client_is_loopback(request.META.get("REMOTE_ADDR", "")):
        return False
    if (getattr(request, "scope", None) or {}).get(UNTRUSTED_FORWARD):
        return False
    if any(request.META.get(name) for name in PROXY_HEADERS):
        return False
    try:
        request.get_host()
    except SuspiciousOperation:
        return False
    return True


async def _early_failure(request: HttpRequest) -> HttpResponse | None:
    try:
        request.get_host()
    except SuspiciousOperation as refused:
        # The page DEBUG off gives (JSON under /api/): the site's 400 page in the reader's
        # language, where this was the bare words "Bad request." in English.
        view = get_resolver().resolve_error_handler(400)
        return await sync_to_async(view)(request, refused)
    try:
        resolve(request.path_info)
    except Resolver404:
        if settings.APPEND_SLASH and not request.path_info.endswith("/"):
            return None  # CommonMiddleware may redirect to the slashed URL
        return await sync_to_async(_not_found)(request)
    return None


def _not_found(request: HttpRequest) -> HttpResponse:
    view = get_resolver().resolve_error_handler(404)
    response = view(request, Http404("Not found"))
    return response.render() if hasattr(response, "render") else response


async def _error_page(request: HttpRequest, status: int) -> HttpResponse:
    if status == 404:
        return await sync_to_async(_not_found)(request)
    return HttpResponse(f"Error {status}.", status=status, content_type="text/plain")


# Methods nothing here answers. TRACE got the page a GET gets (Django's CSRF check counts it
# safe, and function views take any method): a method meant to echo the request, answered so.
REFUSED_METHODS = frozenset({"TRACE", "TRACK", "CONNECT"})
ANSWERED_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]


class MethodGuard(AsyncMiddleware):
    """405 for TRACE, TRACK and CONNECT, before any view."""

    async def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method in REFUSED_METHODS and is_api_request(request):
            code = "method_not_allowed"
            answer = api_error_json(status=405, detail=METHOD_NOT_ALLOWED, code=code)
            answer["Allow"] = ", ".join(ANSWERED_METHODS)
            return answer
        if request.method in REFUSED_METHODS:
            return HttpResponseNotAllowed(ANSWERED_METHODS, content_type="text/plain")
        return await self.get_response(request)


class UrlTextGuard(AsyncMiddleware):
    """400 for a path or query parameter holding NUL (or a lone surrogate), or too many of them.

    PostgreSQL cannot take NUL in a string, so a `%00` in a slug or a filter reached the
    database and came back as a 500 (and, with DEBUG on, a traceback). Refused before any view.
    A query past DATA_UPLOAD_MAX_NUMBER_FIELDS is refused here too: with DEBUG on, the page
    explaining that refusal read the query again, failed, and daphne answered 500.
    """

    async def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            pairs = request.GET.lists()
        except TooManyFieldsSent:
            return await _bad_url(request, "The URL has too many query parameters.")
        values = [request.path, *(text for pair in pairs for text in _flat(pair))]
        if any(INVALID.search(value) for value in values):
            return await _bad_url(request, "The URL contains a NUL or an invalid character.")
        return await self.get_response(request)


async def _bad_url(request: HttpRequest, message: str) -> HttpResponse:
    if is_api_request(request):
        return api_error_json(status=400, detail=message, code="bad_request")
    return await sync_to_async(_bad_url_page)(request)


def _bad_url_page(request: HttpRequest) -> HttpResponse:
    """The site's 400 page in the reader's language: this guard runs before the language is
    chosen, and a reader whose link held `%00` got English plain text ("The URL contains a NUL
    or an invalid character.") with no way back to the site. On the search page, the search
    page: its box keeps what was typed, less the characters it cannot search for."""
    language = translation.get_language_from_request(request)
    with translation.override(language):
        if request.path_info == reverse("blog:search") and not INVALID.search(request.path):
            raw = INVALID.sub("", _first_q(request))
            response = blog_views.search_refused(request, raw=raw, problem="invalid_character")
        else:
            response = blog_views.bad_request(request)
        response["Content-Language"] = translation.get_language()
    patch_vary_headers(response, ("Accept-Language", "Cookie"))
    return response


def _first_q(request: HttpRequest) -> str:
    try:
        return str(request.GET.get("q", ""))
    except TooManyFieldsSent:
        return ""


def _flat(pair: tuple[str, list[str]]) -> list[str]:
    key, texts = pair
    return [key, *texts]


class SessionCookieMiddleware(AsyncMiddleware):
    """Give a cookie-less visitor a session key without creating a session.

    The chat's WebSocket can't set cookies, so the key comes with the page; the session row is
    written only when the visitor sends a first chat message (agent/visitor_session.py).
    """

    async def __call__(self, request: HttpRequest) -> HttpResponse:
        response = await self.get_response(request)
        name = settings.SESSION_COOKIE_NAME
        if (
            request.method == "GET"
            and name not in request.COOKIES
            and name not in response.cookies
            and response.get("Content-Type", "").startswith("text/html")
            and response.status_code == 200
        ):
            response.set_cookie(
                name,
                session_key_mint(),
                max_age=settings.SESSION_COOKIE_AGE,
                domain=settings.SESSION_COOKIE_DOMAIN,
                path=settings.SESSION_COOKIE_PATH,
                secure=settings.SESSION_COOKIE_SECURE or None,
                httponly=settings.SESSION_COOKIE_HTTPONLY or None,
                samesite=settings.SESSION_COOKIE_SAMESITE,
            )
            # The page now carries this visitor's key: a shared cache (a CDN, a proxy) that
            # stored it would hand one session to everyone who came after.
            patch_cache_control(response, private=True)
            patch_vary_headers(response, ("Cookie",))
        return response


class LanguageMiddleware(LocaleMiddleware):
    """Django's LocaleMiddleware; a page whose request carried the language cookie varies on it.

    Django marks pages `Vary: Accept-Language` only, yet the cookie outranks that header: one
    request with `django_language=zh-hans` made a Chinese page that a shared cache stored for
    every English reader (the header's language switch sets that cookie).
    """

    def process_response(self, request: HttpRequest, response: HttpResponse) -> HttpResponse:
        response = super().process_response(request, response)
        if settings.LANGUAGE_COOKIE_NAME in request.COOKIES:
            patch_vary_headers(response, ("Cookie",))
        return response


class AdminTimeZoneMiddleware(AsyncMiddleware):
    """The admin's pages in the viewer's time zone, which the browser names in a cookie
    (static/admin/docent-time-zone.js).

    The server knows only UTC: a reviewer in Shanghai read "04:45" for a question asked at
    12:45, with nothing to say the time was UTC's. Activated for the whole request, the zone
    serves every time on the page, the date filters' "Today" and the dashboard's days alike.
    The blog's own pages stay in UTC (dates.js writes a reader's day in the browser).
    """

    async def __call__(self, request: HttpRequest) -> HttpResponse:
        zone = admin_time_zone(request)
        if zone is None:
            return await self.get_response(request)
        with timezone.override(zone):
            return await self.get_response(request)


def admin_time_zone(request: HttpRequest) -> zoneinfo.ZoneInfo | None:
    """The zone the admin page `request` asks for, or None (not the admin, no or unknown zone)."""
    name = request.COOKIES.get(settings.ADMIN_TIME_ZONE_COOKIE_NAME)
    if not name or not request.path.startswith(reverse("admin:index")):
        return None
    if name not in _zone_names():
        return None
    return zoneinfo.ZoneInfo(name)


@functools.cache
def _zone_names() -> frozenset[str]:
    # Only names of the tz database: a cookie is whatever the client sends.
    return frozenset(zoneinfo.available_timezones())
