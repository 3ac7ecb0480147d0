"""A per-address rate limit on the public search API.

Each `/api/search` embeds the query (about a quarter of a CPU-second on this machine under
load) and anyone may call it without a session: one client looping over it kept the CPU busy
and slowed every chat turn more than tenfold. The chat's own searches are inside its turns and
limited there.
"""

import time

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

from agent.ratelimit import WINDOW, address_bucket
from agent.shared import state

SEARCH_PATH = "/api/search"


class SearchRateLimit:
    async_capable = True
    sync_capable = False

    def __init__(self, get_response) -> None:
        self.get_response = get_response
        if iscoroutinefunction(get_response):
            markcoroutinefunction(self)

    async def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path == SEARCH_PATH:
            now = time.time()
            address = address_bucket(request.META.get("REMOTE_ADDR", ""))
            key = f"rl:search:{address}:{int(now // WINDOW)}"
            limit = settings.SEARCH_REQUESTS_PER_MINUTE_PER_IP
            if await state().hit([(key, limit, WINDOW * 2)]):
                retry_after = max(1, int(WINDOW - now % WINDOW))
                response = JsonResponse(
                    {
                        "detail": f"Too many searches. Please wait {retry_after} s.",
                        "code": "rate_limited",
                    },
                    status=429,
                )
                response["Retry-After"] = str(retry_after)
                return response
        return await self.get_response(request)
