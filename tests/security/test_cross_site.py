"""Findings 4 and 5a: only the site's exact origin (or a listed embedder) may drive the chat."""

import uuid

import httpx
import pytest
from websockets.exceptions import InvalidStatus

from agent.models import Conversation
from tests.security.clients import rows, sse_post, ws_ask, ws_open

pytestmark = pytest.mark.django_db(transaction=True)


def foreign_origins(server) -> list[str | None]:
    return [
        "http://127.0.0.1:9999",  # the site's host on another port
        f"https://127.0.0.1:{server.port}",  # another scheme
        f"http://localhost:{server.port}",  # an allowed host, but not the one asked for
        "http://evil.example",
        f"http://127.0.0.1:{server.port}.evil.example",
        "null",  # sandboxed iframes and file: pages
        "http://" + "a" * 5000 + ".example",  # oversized
        None,  # no Origin at all
    ]


async def test_the_websocket_refuses_every_origin_but_the_sites_own(serve):
    server = serve("origin-ws")

    for origin in foreign_origins(server):
        with pytest.raises(InvalidStatus) as refused:
            await ws_open(server, origin=origin)
        assert refused.value.response.status_code in {400, 403}, origin  # 400: autobahn's own
    socket = await ws_open(server)  # the control: the site's own origin
    assert (await ws_ask(socket, "hello"))[-1]["type"] == "done"
    await socket.close()


def test_api_chat_refuses_foreign_origins_and_non_json_bodies(serve):
    server = serve("origin-sse")
    body = '{"content": "spend their budget"}'

    for origin in foreign_origins(server):
        response, events = sse_post(server, body, origin=origin)
        assert response.status_code == 403, origin
        assert events == []
    # The attack: a cross-site, cookie-less `text/plain` post (a "simple" request).
    for content_type in ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"]:
        for origin in ["http://evil.example", "same"]:
            response, _ = sse_post(
                server, body, headers={"Content-Type": content_type}, origin=origin
            )
            # Twisted itself answers 400 to a multipart body it cannot parse: refused either way.
            assert response.status_code in {403, 400 if "multipart" in content_type else 403}

    assert Conversation.objects.count() == 0
    response, events = sse_post(server, body)  # the control
    assert response.status_code == 200 and events[-1]["type"] == "done"


async def test_a_listed_embedding_site_may_use_the_chat_over_both_transports(serve):
    server = serve("origin-embed", DJANGO_CHAT_ALLOWED_ORIGINS="https://embed.example")

    socket = await ws_open(server, origin="https://embed.example")
    assert (await ws_ask(socket, "hello"))[-1]["type"] == "done"
    await socket.close()
    response, events = sse_post(server, {"content": "hi"}, origin="https://embed.example")
    assert response.status_code == 200 and events[-1]["type"] == "done"
    with pytest.raises(InvalidStatus):
        await ws_open(server, origin="http://embed.example")  # the listed scheme only
    assert await rows("agent.Conversation") == 2


API_ROUTES = {
    "/api/chat": "POST, OPTIONS",
    f"/api/conversations/{uuid.UUID(int=0)}": "GET, HEAD, DELETE, OPTIONS",
    f"/api/conversations/{uuid.UUID(int=0)}/turns/1/feedback": "POST, OPTIONS",
    "/api/articles": "GET, HEAD, OPTIONS",
    "/api/search": "GET, HEAD, OPTIONS",
    "/api/docs": "GET, HEAD, OPTIONS",
    "/api/openapi.json": "GET, HEAD, OPTIONS",
}


def test_a_cross_site_preflight_gets_one_answer_and_no_permission_on_every_api_route(serve):
    # OPTIONS was ninja's "405 Method not allowed" in HTML on the API's routes, and the whole
    # page (200) on the docs and the schema. No route gives another origin CORS permission.
    server = serve("preflight")
    preflight = {
        "Origin": "https://evil.example",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type",
    }

    with httpx.Client(base_url=server.url) as client:
        answers = {path: client.options(path, headers=preflight) for path in API_ROUTES}
        wrong_method = client.get("/api/chat")

    for path, response in answers.items():
        assert (response.status_code, response.content) == (204, b""), path
        assert response.headers["Allow"] == API_ROUTES[path], path
        assert not [name for name in response.headers if name.lower().startswith("access-control")]
    assert wrong_method.status_code == 405
    assert wrong_method.json()["code"] == "method_not_allowed"
    assert wrong_method.headers["Allow"] == "POST, OPTIONS"


def test_head_is_the_get_without_its_body_on_every_api_read(serve):
    # ninja answered HEAD with 405 on its GET routes (link checkers and uptime monitors send it).
    server = serve("head")
    reads = ["/api/articles", "/api/search?q=docent", "/api/index-status", "/api/docs"]
    reads.append(f"/api/conversations/{uuid.UUID(int=0)}")  # not the visitor's: a 404 either way

    with httpx.Client(base_url=server.url) as client:
        pairs = {path: (client.get(path), client.head(path)) for path in reads}
        head_of_a_write = client.head("/api/chat")

    for path, (get, head) in pairs.items():
        assert head.status_code == get.status_code, path
        assert head.content == b"", path
        assert head.headers["Content-Type"] == get.headers["Content-Type"], path
        assert head.headers["Content-Length"] == str(len(get.content)), path
        assert head.headers["X-Content-Type-Options"] == "nosniff", path
    assert head_of_a_write.status_code == 405
    assert head_of_a_write.headers["Allow"] == "POST, OPTIONS"


def test_only_what_runs_a_search_spends_the_search_allowance(serve):
    # OPTIONS (and a method the route refuses) embeds nothing, yet each counted as a search.
    server = serve("search-methods", SEARCH_REQUESTS_PER_MINUTE_PER_IP="3")

    with httpx.Client(base_url=server.url) as client:
        asked = [client.options("/api/search?q=docent").status_code for _ in range(6)]
        asked += [client.delete("/api/search?q=docent").status_code for _ in range(3)]
        searches = [client.get("/api/search", params={"q": "docent"}).status_code]
        searches += [client.head("/api/search", params={"q": "docent"}).status_code]
        searches += [client.get("/api/search", params={"q": "docent"}).status_code]
        over = client.head("/api/search", params={"q": "docent"})

    assert asked[:6] == [204] * 6
    assert set(asked[6:]) <= {403, 405}  # a write without the site's Origin is refused first
    assert searches == [200, 200, 200]  # a HEAD runs the search, so it counts
    assert over.status_code == 429
