"""What an attacker tries next: other visitors' conversations, drafts, free model calls."""

import json
import uuid

import httpx
import pytest

from agent.models import ToolCall
from blog.models import Article
from testing_support.model_server import text_response, tool_call_response
from tests.security.clients import sse_post, ws_ask, ws_open
from tests.security.conftest import model_env

pytestmark = pytest.mark.django_db(transaction=True)


async def test_guessed_and_foreign_conversation_ids_look_the_same_as_unknown_ones(serve):
    server = serve("probe-ids")
    owner = await ws_open(server)
    theirs = (await ws_ask(owner, "my secret question"))[0]["conversation_id"]
    await owner.close()

    attacker = await ws_open(server)
    foreign = await ws_ask(attacker, "continue", conversation_id=theirs)
    guessed = await ws_ask(attacker, "continue", conversation_id=str(uuid.uuid4()))
    await attacker.close()
    async with httpx.AsyncClient(base_url=server.url) as client:
        read_foreign = await client.get(f"/api/conversations/{theirs}")
        read_guessed = await client.get(f"/api/conversations/{uuid.uuid4()}")

    assert foreign[0]["code"] == guessed[0]["code"] == "bad_request"
    assert foreign[0]["message"] == guessed[0]["message"]
    assert read_foreign.status_code == read_guessed.status_code == 404
    assert read_foreign.json() == read_guessed.json()
    assert "my secret question" not in read_foreign.text


def test_a_drafts_slug_reveals_nothing_anywhere(serve, make_article):
    make_article(title="Secret draft", slug="secret-draft", status=Article.Status.DRAFT)
    server = serve("probe-draft")

    _, as_page = sse_post(server, {"content": "summarize", "page": "secret-draft"})
    _, as_unknown = sse_post(server, {"content": "summarize", "page": "no-such-post"})
    with httpx.Client(base_url=server.url) as client:
        page = client.get("/articles/secret-draft/")
        api = client.get("/api/articles/secret-draft")
        search = client.get("/api/search", params={"q": "Secret draft"})

    assert as_page[0]["code"] == as_unknown[0]["code"] == "bad_request"
    assert as_page[0]["message"].replace("secret-draft", "X") == as_unknown[0]["message"].replace(
        "no-such-post", "X"
    )
    assert page.status_code == 404 and api.status_code == 404
    assert "secret-draft" not in search.text


def test_huge_tool_limits_from_the_model_are_refused_by_the_tools(serve, scripted):
    calls = [
        ("c1", "search_knowledge_base", json.dumps({"query": "x", "limit": 10**9})),
        ("c2", "list_articles", json.dumps({"limit": 10**9})),
    ]
    scripted.enqueue(tool_call_response(calls), text_response(["done"]))
    server = serve("probe-limits", **model_env(scripted))

    _, events = sse_post(server, {"content": "list everything"})
    server.stop()

    ends = [e for e in events if e["type"] == "tool_end"]
    assert [e["ok"] for e in ends] == [False, False]
    assert all("limit" in call.error for call in ToolCall.objects.all())


def test_header_injection_through_urls_and_hosts_goes_nowhere(serve):
    server = serve("probe-headers")

    with httpx.Client(base_url=server.url, follow_redirects=False) as client:
        crlf = client.get("/articles/x%0d%0aSet-Cookie:%20pwned=1")
        bad_id = client.get("/api/conversations/x%0d%0aSet-Cookie:%20pwned=1")
        host = client.get("/", headers={"Host": "evil.example"})

    for response in (crlf, bad_id):
        assert "pwned" not in response.headers.get("set-cookie", "")
        assert "pwned" not in "".join(response.headers.keys())
    assert host.status_code == 400
