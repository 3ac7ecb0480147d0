"""A failing embeddings endpoint is the operator's business: its details stay in the log.

`GET /api/search` is public and answered a failed query embedding with the error's text: the
endpoint's internal address, the upstream status, and up to 300 characters of its answer
(OpenAI's 401 names the start and end of the key it refused). Anyone could read them by
searching while the endpoint was down or misconfigured.
"""

import httpx
import pytest

from testing_support.live_server import free_port
from tests.blog.embeddings_server import EmbeddingsServer

pytestmark = pytest.mark.django_db(transaction=True)


def search_with(serve, name: str, base_url: str) -> httpx.Response:
    server = serve(
        name,
        EMBEDDING_BACKEND="openai",
        EMBEDDING_BASE_URL=base_url,
        EMBEDDING_API_KEY="sk-test-0123456789abcdef",
        EMBEDDING_MAX_RETRIES="0",
    )
    return httpx.get(server.url + "/api/search", params={"q": "pgvector"}, timeout=60)


def test_a_refused_embedding_call_tells_the_visitor_nothing_about_the_endpoint(serve):
    with EmbeddingsServer(dimensions=384) as upstream:
        upstream.fail(401)
        answer = search_with(serve, "upstream-401", upstream.base_url)
        port = upstream.base_url.rsplit(":", 1)[1].split("/")[0]

    assert answer.status_code == 503
    assert answer.json()["detail"].startswith("Search is unavailable")
    for secret in (port, "127.0.0.1", "401", "scripted failure", "sk-test", "embeddings"):
        assert secret not in answer.text, secret


def test_an_unreachable_endpoint_is_not_named_to_the_visitor(serve):
    port = str(free_port())  # nothing listens there
    answer = search_with(serve, "upstream-down", f"http://127.0.0.1:{port}/v1")

    assert answer.status_code == 503
    for secret in (port, "127.0.0.1", "refused", "Errno", "embeddings"):
        assert secret not in answer.text, secret
