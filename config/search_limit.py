"""Rate limits in front of Django: the public search API, and admin sign-in attempts.

Each `/api/search` embeds the query (about a quarter of a CPU-second on this machine under
load) and anyone may call it without a session: one client looping over it kept the CPU busy
and slowed every chat turn more than tenfold. The chat's own searches are inside its turns and
limited there.
"""

from django.http import HttpRequest, HttpResponse, JsonResponse

from agent.ratelimit import Refusal, admin_login_allow, search_allow
from config.middleware import AsyncMiddleware

SEARCH_PATH = "/api/search"
ADMIN_LOGIN_PATH = "/admin/login/"


class SearchRateLimit(AsyncMiddleware):
    async def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path == SEARCH_PATH:
            refusal = await search_allow(client_ip=request.META.get("REMOTE_ADDR", ""))
            if refusal is not None:
                return _too_many(refusal)
        return await self.get_response(request)


class AdminLoginRateLimit(AsyncMiddleware):
    """Each POST to the admin's sign-in page counts, per address and per user name."""

    async def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method == "POST" and request.path == ADMIN_LOGIN_PATH:
            refusal = await admin_login_allow(
                client_ip=request.META.get("REMOTE_ADDR", ""), username=_username(request)
            )
            if refusal is not None:
                return _too_many(refusal)
        return await self.get_response(request)


def _username(request: HttpRequest) -> str:
    # The body is in memory already (ASGI); a malformed one still counts for its address.
    try:
        return str(request.POST.get("username", ""))
    except Exception:  # noqa: BLE001 - Django answers the malformed body itself, later
        return ""


def _too_many(refusal: Refusal) -> HttpResponse:
    response = JsonResponse({"detail": refusal.message, "code": "rate_limited"}, status=429)
    response["Retry-After"] = str(refusal.retry_after)
    return response
