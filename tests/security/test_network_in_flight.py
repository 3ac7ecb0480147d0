"""The /64s of one IPv6 /48 share its requests in flight, as they share its other limits.

A process runs HTTP_REQUESTS_IN_FLIGHT requests at once and one address only
HTTP_REQUESTS_IN_FLIGHT_PER_IP of them, so a burst from one client leaves room for everyone
else. Counted by the /64 alone, each /64 of a /48 had that share: four /64s ran four slow
searches at once with a share of one each, and enough /64s held every slot of the process. The
/48 now has HTTP_REQUESTS_IN_FLIGHT_PER_NETWORK (four addresses' worth).
"""

import asyncio
import threading
import time

import httpx
import pytest

from tests.blog.embeddings_server import EmbeddingsServer

pytestmark = pytest.mark.django_db(transaction=True)

WALKED = [f"2001:db8:7:{i:x}::1" for i in range(1, 5)]  # four /64s of one /48


class SlowEmbeddings(EmbeddingsServer):
    """Embeddings that take `delay` seconds each; `peak` is the most asked at once."""

    def __init__(self, delay: float) -> None:
        self.delay, self.now, self.peak = delay, 0, 0
        self.lock = threading.Lock()
        super().__init__(dimensions=384)

    def _handler(self):
        server, base = self, super()._handler()

        class Slow(base):
            def do_POST(self) -> None:
                with server.lock:
                    server.now += 1
                    server.peak = max(server.peak, server.now)
                try:
                    time.sleep(server.delay)
                    super().do_POST()
                finally:
                    with server.lock:
                        server.now -= 1

        return Slow


async def test_the_64s_of_one_48_share_its_requests_in_flight(serve):
    with SlowEmbeddings(delay=1.0) as upstream:
        server = serve(
            "network-in-flight",
            DJANGO_TRUSTED_PROXIES="1",
            EMBEDDING_BACKEND="openai",
            EMBEDDING_BASE_URL=upstream.base_url,
            EMBEDDING_API_KEY="sk-test",
            HTTP_REQUESTS_IN_FLIGHT_PER_IP="1",
            HTTP_REQUESTS_IN_FLIGHT_PER_NETWORK="2",
        )
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as client:
            searches = [
                client.get(
                    "/api/search", params={"q": f"pgvector {i}"}, headers={"X-Forwarded-For": a}
                )
                for i, a in enumerate(WALKED)
            ]
            answers = await asyncio.gather(*searches)

    assert [answer.status_code for answer in answers] == [200] * len(WALKED)  # all served
    assert upstream.peak == 2  # before: 4, one at a time for each /64
