"""Rate limits in front of Django: the public search API, and admin sign-in attempts.

Each `/api/search` embeds the query (about a quarter of a CPU-second on this machine under
load) and anyone may call it without a session: one client looping over it kept the CPU busy
and slowed every chat turn more than tenfold. The chat's own searches are inside its turns and
limited there.
"""

import contextlib
import secrets

from asgiref.sync import sync_to_async
from django.conf import settings
from django.core import signing
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils import translation
from django.utils.cache import patch_vary_headers
from django.utils.translation import gettext, ngettext

from agent.exceptions import SharedStateDown
from agent.ratelimit import (
    Refusal,
    admin_login_allow,
    admin_login_name,
    admin_login_succeeded,
    search_allow,
)
from agent.shared import SHARED_STATE_RETRY_SECONDS
from blog import views as blog_views
from blog.search_page import search_page_query
from blog.site import site_admin_title
from config.middleware import AsyncMiddleware
from config.origins import ADMIN_LOGIN_PATH, SEARCH_PAGE_PATH
from ops.metrics import refusal_count

# Matched against `request.path_info`, the path the URL resolver routes by.
SEARCH_PATH = "/api/search"
# A browser that signed in as a user carries a signed note of it (a "device cookie"): its
# attempts for that user are counted apart from the user name's, which a flood may have used up.
DEVICE_COOKIE = "admin_device"
DEVICE_SALT = "docent.admin-device"
DEVICE_DAYS = 90


class SearchRateLimit(AsyncMiddleware):
    """`/api/search` and the reader's search page (`/search/?q=`) spend one allowance per
    address: the page embeds its query as the API does, and without the count a loop over it
    was the API's denial of service again, through a page."""

    async def __call__(self, request: HttpRequest) -> HttpResponse:
        # GET and HEAD run the search (a HEAD is served as the GET); OPTIONS and the methods
        # the route refuses embed nothing, so they do not spend the address's allowance.
        page = request.path_info == SEARCH_PAGE_PATH
        if request.method not in {"GET", "HEAD"} or not (page or request.path_info == SEARCH_PATH):
            return await self.get_response(request)
        raw = str(request.GET.get("q", ""))
        if page and not search_page_query(raw).searchable:
            # An empty or over-long query searches nothing, so spends nothing.
            return await self.get_response(request)
        try:
            refusal = await search_allow(
                client_ip=request.META.get("REMOTE_ADDR", ""),
                query=raw[:10_000],  # longer is refused (422) later
            )
        except SharedStateDown as exc:  # nothing can be counted: refused, as turns are
            if page:
                return await search_page_unsearched(request, "unavailable")
            return shared_state_down_json(exc)
        if refusal is None:
            return await self.get_response(request)
        refusal_count(reason="search", address=request.META.get("REMOTE_ADDR", ""))
        if page:
            return await search_page_unsearched(request, "rate_limited", refusal)
        return _too_many(refusal)


async def search_page_unsearched(
    request: HttpRequest, problem: str, refusal: Refusal | None = None
) -> HttpResponse:
    """The search page, its query in the box, not searched (`problem` says why)."""
    raw = str(request.GET.get("q", ""))
    return await sync_to_async(_search_page_refused)(request, raw, problem, refusal)


def _search_page_refused(
    request: HttpRequest, raw: str, problem: str, refusal: Refusal | None = None
) -> HttpResponse:
    """The search page saying why it did not search, in the reader's language (this runs
    before the locale middleware), the query kept in its box: a reader who came to read got the
    API's JSON otherwise."""
    with translation.override(translation.get_language_from_request(request)):
        wait = _wait_text(refusal.retry_after) if refusal else ""
        response = blog_views.search_refused(request, raw=raw, problem=problem, wait=wait)
        response["Content-Language"] = translation.get_language()
    patch_vary_headers(response, ("Accept-Language", "Cookie"))
    if problem in {"rate_limited", "unavailable"}:
        retry_after = refusal.retry_after if refusal else SHARED_STATE_RETRY_SECONDS
        response["Retry-After"] = str(retry_after)
    return response


class AdminLoginRateLimit(AsyncMiddleware):
    """Each failed POST to the admin's sign-in page counts, per address and per user name (or
    per known device of that user); a successful sign-in marks the browser as a known device."""

    async def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method != "POST" or request.path_info != ADMIN_LOGIN_PATH:
            return await self.get_response(request)
        if _body_length(request) > settings.ADMIN_LOGIN_MAX_BODY_BYTES:
            # Parsed here, on the event loop and before anything is counted, 2.4 MB of percent
            # escapes took a quarter of a CPU-second: a sign-in form is a few hundred bytes.
            return HttpResponse(
                "A sign-in form is not this large.\n", status=413, content_type="text/plain"
            )
        name = admin_login_name(_username(request))
        attempt = {
            "client_ip": request.META.get("REMOTE_ADDR", ""),
            "username": name,
            "device": _device(request, name),
            "attempt": secrets.token_hex(8),
        }
        try:
            refusal = await admin_login_allow(**attempt)
        except SharedStateDown:
            # Uncounted guesses are what the throttle exists to stop: refused until Redis is
            # back, as a 503 (it was a 500, a traceback at ERROR for every post).
            return _retry_later(
                HttpResponse(
                    "Signing in is unavailable for a moment. Please try again shortly.\n",
                    status=503,
                    content_type="text/plain",
                )
            )
        if refusal is not None:
            refusal_count(reason="admin_login", address=attempt["client_ip"])
            return await sync_to_async(_sign_in_refused)(request, refusal)
        response = await self.get_response(request)
        if name and response.status_code == 302 and (await request.auser()).is_authenticated:
            # The redirect after a right password: a sign-in, not a guess, so it does not count.
            # Redis gone meanwhile: the count stays (said once by agent.shared), the sign-in too.
            with contextlib.suppress(SharedStateDown):
                await admin_login_succeeded(**attempt)
            _remember_device(request, response, name)
        return response


def _device(request: HttpRequest, name: str) -> str:
    """The id of this browser when it signed in as `name` before (a valid signed cookie)."""
    try:
        note = signing.loads(
            request.COOKIES.get(DEVICE_COOKIE, ""),
            salt=DEVICE_SALT,
            max_age=DEVICE_DAYS * 86400,
        )
    except signing.BadSignature:
        return ""
    if not isinstance(note, dict) or note.get("u") != name:
        return ""
    return str(note.get("d", ""))[:32]


def _remember_device(request: HttpRequest, response: HttpResponse, name: str) -> None:
    device = _device(request, name) or secrets.token_hex(8)
    response.set_cookie(
        DEVICE_COOKIE,
        signing.dumps({"u": name, "d": device}, salt=DEVICE_SALT),
        max_age=DEVICE_DAYS * 86400,
        path="/admin/",
        secure=settings.SESSION_COOKIE_SECURE,
        httponly=True,
        samesite="Strict",
    )


def _body_length(request: HttpRequest) -> int:
    # daphne takes no body without its Content-Length (http_guard refuses chunked ones), and
    # Twisted delivers no more than it declares.
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0


def _username(request: HttpRequest) -> str:
    # The body is in memory already (ASGI); a malformed one still counts for its address.
    try:
        return str(request.POST.get("username", ""))
    except Exception:  # noqa: BLE001 - Django answers the malformed body itself, later
        return ""


def _sign_in_refused(request: HttpRequest, refusal: Refusal) -> HttpResponse:
    """The refusal as a page in the visitor's language.

    A person at a browser sent the form: the API's JSON ("{"detail": ...}"), in English on a
    Chinese admin, was all they saw. This runs before the locale middleware, so the language is
    read from the request here.
    """
    with translation.override(translation.get_language_from_request(request)):
        context = {
            "title": gettext("Too many sign-in attempts"),
            "wait": _wait_text(refusal.retry_after),
            "site_header": site_admin_title(),
            "site_title": site_admin_title(),
        }
        response = render(request, "admin/login_refused.html", context, status=429)
    response["Retry-After"] = str(refusal.retry_after)
    return response


def _wait_text(seconds: int) -> str:
    """'40 seconds' or '9 minutes' (rounded up): a fifteen-minute window read as '556 s'."""
    if seconds < 60:
        return ngettext("%(count)s second", "%(count)s seconds", seconds) % {"count": seconds}
    minutes = -(-seconds // 60)
    return ngettext("%(count)s minute", "%(count)s minutes", minutes) % {"count": minutes}


def _too_many(refusal: Refusal) -> HttpResponse:
    response = JsonResponse({"detail": refusal.message, "code": "rate_limited"}, status=429)
    response["Retry-After"] = str(refusal.retry_after)
    return response


def shared_state_down_json(exc: SharedStateDown) -> HttpResponse:
    """Redis (where every allowance is counted) unreachable: a 503 the client may retry.

    Let through, it was a 500 with a traceback at ERROR (about 80 lines) for every request:
    one client decided how fast the error log grew for as long as Redis was away.
    """
    body = {"detail": str(exc), "code": "unavailable"}
    return _retry_later(JsonResponse(body, status=503))


def _retry_later(response: HttpResponse) -> HttpResponse:
    response["Retry-After"] = str(SHARED_STATE_RETRY_SECONDS)
    return response
