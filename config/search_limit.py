"""A per-address rate limit on the public search API.

Each `/api/search` embeds the query (about a quarter of a CPU-second on this machine under
load) and anyone may call it without a session: one client looping over it kept the CPU busy
and slowed every chat turn more than tenfold. The chat's own searches are inside its turns and
limited there.
"""

from django.http import HttpRequest, HttpResponse, JsonResponse

from agent.ratelimit import search_allow
from config.middleware import AsyncMiddleware

SEARCH_PATH = "/api/search"


class SearchRateLimit(AsyncMiddleware):
    async def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path == SEARCH_PATH:
            refusal = await search_allow(client_ip=request.META.get("REMOTE_ADDR", ""))
            if refusal is not None:
                response = JsonResponse(
                    {"detail": refusal.message, "code": "rate_limited"}, status=429
                )
                response["Retry-After"] = str(refusal.retry_after)
                return response
        return await self.get_response(request)
