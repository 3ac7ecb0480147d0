"""One Origin policy for the chat, over WebSocket and over `POST /api/chat`.

A browser request may drive the chat only from the site's own origin (exact scheme, host and
port) or from an origin listed in `DJANGO_CHAT_ALLOWED_ORIGINS` (a site embedding the panel).
A request without an Origin is refused: every browser sends one on these requests.

No CORS: the API never answers with Access-Control-Allow-*, so a browser refuses any page of
another origin that tries to read it or to send it JSON (the preflight gets no permission).
The listed origins embed the chat over the WebSocket, which has no preflight.
"""

from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.http.request import split_domain_port, validate_host

from config.api_errors import API_PREFIX, METHOD_NOT_ALLOWED, api_error_json
from config.middleware import AsyncMiddleware

MAX_ORIGIN = 512  # characters; a real origin is far shorter
# Every state-changing API request (the chat, feedback) follows the rule; reads do not.
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
ADMIN_LOGIN_PATH = "/admin/login/"  # matched against `request.path_info`, as the throttle does
SEARCH_PAGE_PATH = "/search/"  # the reader's search page (blog:search), which spends searches
# `Sec-Fetch-Site` for a request sent for another site's page. "same-site" is a sibling
# subdomain's (evil.example.com beside blog.example.com), another site as much as any: taken for
# the visitor's own, its `<img>` tags (no Origin) spent the address's searches and requests.
FOREIGN_FETCH_SITES = frozenset({"cross-site", "same-site"})


def origin_allowed(*, origin: str | None, scheme: str, host: str | None) -> bool:
    """True when `origin` is the site's own (scheme://host as the request came in) or listed."""
    if not origin or len(origin) > MAX_ORIGIN:
        return False
    normal = _normalise(origin)
    if normal is None:
        return False
    if normal in {_normalise(extra) for extra in settings.CHAT_ALLOWED_ORIGINS}:
        return True
    if not host or not _host_allowed(host):
        return False
    return normal == _normalise(f"{scheme}://{host}")


def _normalise(origin: str) -> tuple[str, str, int] | None:
    try:
        parts = urlsplit(origin.strip())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        return None
    if parts.path not in {"", "/"} or parts.query or parts.fragment or parts.username:
        return None
    default = 443 if parts.scheme == "https" else 80
    return parts.scheme, parts.hostname.lower(), port or default


def _host_allowed(host: str) -> bool:
    domain, _port = split_domain_port(host)
    return bool(domain) and validate_host(domain, settings.ALLOWED_HOSTS)


class WebsocketOriginValidator:
    """ASGI middleware for WebSockets: deny the handshake unless the Origin is allowed."""

    def __init__(self, application) -> None:
        self.application = application

    async def __call__(self, scope, receive, send):
        headers = dict(scope.get("headers") or [])
        origin = headers.get(b"origin", b"").decode("latin1") or None
        host = headers.get(b"host", b"").decode("latin1") or None
        scheme = "https" if scope.get("scheme") == "wss" else "http"
        if origin_allowed(origin=origin, scheme=scheme, host=host):
            return await self.application(scope, receive, send)
        return await WebsocketDenier()(scope, receive, send)


class ChatOriginMiddleware(AsyncMiddleware):
    """The same rule for `POST /api/chat` (and every other API write), before any parsing.

    JSON only as well: a cross-site `text/plain` or form post is a "simple" request that a
    browser sends without asking, so it must never reach the chat.
    """

    async def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path_info.startswith(API_PREFIX) and request.method not in SAFE_METHODS:
            refusal = chat_request_refusal(request)
            if refusal:
                return JsonResponse({"detail": refusal}, status=403)
        return await self.get_response(request)


class ApiMethodsMiddleware(AsyncMiddleware):
    """One answer to OPTIONS and HEAD across /api/: OPTIONS is 204 with the route's methods in
    `Allow`, and no CORS permission; HEAD is the GET without its body; a method a route lacks
    is a JSON 405, as the API's other errors are.

    ninja answered OPTIONS with "405 Method not allowed" in HTML on its routes, HEAD with a 405
    on its GET routes (a HEAD is a GET without the body, RFC 9110 9.3.2: link checkers and
    uptime monitors send it), and the docs and schema views rendered their whole page (200)
    for OPTIONS.
    """

    async def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request.path_info.startswith(API_PREFIX) or request.method != "HEAD":
            return await self._answer(request)
        request.method = "GET"  # every route is declared without HEAD: run it as the GET
        try:
            response = await self._answer(request)
        finally:
            request.method = "HEAD"
        return _without_body(response)

    async def _answer(self, request: HttpRequest) -> HttpResponse:
        response = await self.get_response(request)
        if not request.path_info.startswith(API_PREFIX) or response.status_code not in {200, 405}:
            return response
        # A ninja route answers a method it lacks with 405 and its methods, without running;
        # the docs and schema views answer any method, as GET.
        allow = _with_head(response["Allow"]) if response.status_code == 405 else "GET, HEAD"
        if request.method == "OPTIONS":
            answer = HttpResponse(status=204)
            del answer["Content-Type"]  # no body
            answer["Allow"] = f"{allow}, OPTIONS"
            return answer
        if response.status_code == 405:
            answer = api_error_json(
                status=405, detail=METHOD_NOT_ALLOWED, code="method_not_allowed"
            )
            answer["Allow"] = f"{allow}, OPTIONS"
            return answer
        return response


# ninja's 405 lists a route's methods from a set, in an order that changes with each process's
# string hashing: `Allow` said "GET, DELETE" from one worker and "DELETE, GET" from the next.
_METHOD_ORDER = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")


def _with_head(allow: str) -> str:
    """A route's methods in one fixed order, with HEAD beside GET (the middleware serves it)."""
    methods = {method.strip() for method in allow.split(",") if method.strip()}
    if "GET" in methods:
        methods.add("HEAD")
    known = [method for method in _METHOD_ORDER if method in methods]
    return ", ".join(known + sorted(methods - set(_METHOD_ORDER)))


def _without_body(response: HttpResponse) -> HttpResponse:
    """The response with its headers (Content-Length the GET's) and no body."""
    if response.streaming:  # no API GET streams; never start one for a HEAD
        response.close()
        return HttpResponse(status=response.status_code, headers=dict(response.items()))
    length = len(response.content)
    response.content = b""
    response["Content-Length"] = str(length)
    return response


class CrossSiteGuard(AsyncMiddleware):
    """Refuse what another site's page makes a visitor's browser send to the routes that spend
    the visitor's allowances, before anything is counted: the API's reads (searches, transcript
    reads) and the admin's sign-in posts.

    Each allowance is counted per address, so a page anywhere could spend a visitor's (and every
    colleague's behind the same address) without ever reaching the site itself: `<img>` tags
    pointing at `/api/search` used up the address's searches, and the chat's own searches with
    them; a form posted to `/admin/login/` (refused by the CSRF check, but only after it was
    counted) cut the address off from signing in, an editor's right password and known browser
    included. No other site may read the API (no CORS) or sign in, so nothing is lost; a link
    followed to an API page still opens.
    """

    async def __call__(self, request: HttpRequest) -> HttpResponse:
        path, method = request.path_info, request.method
        if path.startswith(API_PREFIX) and method in {"GET", "HEAD"} and cross_site(request):
            body = {"detail": "Requests from other sites' pages are refused.", "code": "cross_site"}
            return JsonResponse(body, status=403)
        # The search page spends a search as the API does: an `<img>` or `<iframe>` elsewhere
        # may not spend it. A search engine's result the reader clicked is a followed link.
        if path == SEARCH_PAGE_PATH and method in {"GET", "HEAD"} and cross_site(request):
            if top_level(request):
                # Another site moved the reader's window here without their click (a link
                # shortener's script, a meta refresh): a 403 in plain English left them stranded.
                # The page holds the query and searches it when they press Search.
                from config.search_limit import search_page_unsearched

                return await search_page_unsearched(request, "confirm")
            refusal = "Searches from other sites' pages are refused: open the link instead.\n"
            return HttpResponse(refusal, status=403, content_type="text/plain")
        if path == ADMIN_LOGIN_PATH and method == "POST" and cross_site(request):
            refusal = "Cross-site sign-in refused.\n"
            return HttpResponse(refusal, status=403, content_type="text/plain")
        return await self.get_response(request)


def cross_site(request: HttpRequest) -> bool:
    """True when a browser sent `request` for a page of another site: its fetch metadata says
    `cross-site` or `same-site` (a link the visitor followed excepted), or it carries an Origin
    that is neither the site's own nor trusted (`null` included: a sandboxed or redirected
    page)."""
    fetched = request.headers.get("Sec-Fetch-Site", "").lower()
    if fetched in FOREIGN_FETCH_SITES and not link_followed(request):
        return True
    origin = request.headers.get("Origin")
    if origin is None or origin in settings.CSRF_TRUSTED_ORIGINS:
        return False
    try:
        host = request.get_host()
    except DisallowedHost:
        host = None
    return not origin_allowed(origin=origin, scheme=request.scheme, host=host)


def top_level(request: HttpRequest) -> bool:
    """True for a page loaded into a browser's window, not into a frame or as an image."""
    return (
        request.headers.get("Sec-Fetch-Mode", "").lower() == "navigate"
        and request.headers.get("Sec-Fetch-Dest", "").lower() == "document"
    )


def link_followed(request: HttpRequest) -> bool:
    """True for a top-level page the visitor opened by their own click (or key) on a link.

    Navigation alone was too wide: an `<iframe>` is a navigation too (`Sec-Fetch-Dest: iframe`)
    and loads with no click, so a foreign page of twenty iframes spent twenty searches; and a
    page may navigate a window it opened as often as it likes, without a click each time. A
    browser says `Sec-Fetch-User: ?1` only for a navigation the user started.
    """
    return (
        request.method in {"GET", "HEAD"}
        and request.headers.get("Sec-Fetch-Mode", "").lower() == "navigate"
        and request.headers.get("Sec-Fetch-Dest", "").lower() == "document"
        and request.headers.get("Sec-Fetch-User", "") == "?1"
    )


def chat_request_refusal(request: HttpRequest) -> str:
    """Why this request may not write to the API (the chat, feedback), or "" when it may.

    Said of the API, not the chat: a form post to /api/feedback or to an unknown path was told
    "The chat accepts application/json only"."""
    if (request.content_type or "").lower() != "application/json":
        return "The API accepts application/json only."
    # JSON on the network is UTF-8 (RFC 8259, 8.1), and the body is read as UTF-8 whatever it
    # says: a `charset=iso-8859-1` body was refused as "not valid UTF-8", or, when its bytes
    # happened to be UTF-8 too, read as other words than the client meant ("Ã©" as "é").
    charset = request.content_params.get("charset", "utf-8").lower()  # trimmed, unquoted
    if charset not in {"utf-8", "utf8"}:
        return "The API accepts JSON in UTF-8 only; leave out the charset or say utf-8."
    try:
        host = request.get_host()
    except DisallowedHost:
        host = None
    if not origin_allowed(origin=request.headers.get("Origin"), scheme=request.scheme, host=host):
        return "This origin may not use the API."
    return ""
