"""The SSE transport and the transcript endpoint: same events, same rules as the WebSocket."""

import json

import pytest
from channels.db import database_sync_to_async
from django.test import AsyncClient

from agent.runner import runner
from testing_support.model_server import error_response, text_response, tool_call_response
from tests.agent.chat_helpers import shape, text_of

pytestmark = pytest.mark.django_db(transaction=True)

SAME_ORIGIN = {"Origin": "http://testserver"}


async def post_chat(client: AsyncClient, headers: dict | None = None, **body) -> list[dict]:
    response = await client.post(
        "/api/chat",
        data=json.dumps(body),
        content_type="application/json",
        headers={**SAME_ORIGIN, **(headers or {})},
    )
    assert response.status_code == 200
    assert response["Content-Type"] == "text/event-stream"
    raw = b"".join([chunk async for chunk in response.streaming_content]).decode()
    frames = [frame for frame in raw.split("\n\n") if frame]
    assert all(frame.startswith("data: ") for frame in frames)
    return [json.loads(frame.removeprefix("data: ")) for frame in frames]


async def test_sse_streams_the_same_events(scripted, make_article):
    article = await database_sync_to_async(make_article)(
        title="Channels", slug="channels", body="Consumers are classes."
    )
    scripted.enqueue(
        tool_call_response([("c1", "get_article_detail", json.dumps({"article_id": article.pk}))]),
        text_response(["Consumers ", "are classes: [Channels](/articles/channels/)."]),
    )

    events = await post_chat(AsyncClient(), content="What is a consumer?")

    assert shape(events) == ["start", "tool_start", "tool_end", "text", "citation", "done"]
    assert text_of(events) == "Consumers are classes: [Channels](/articles/channels/)."
    assert events[-2]["url"] == "/articles/channels/"
    assert await runner.saver.drain(timeout=10)


async def test_sse_bad_request(scripted):
    events = await post_chat(AsyncClient(), content="")

    assert events == [
        {
            "type": "error",
            "code": "bad_request",
            "message": "The message is empty. Type a question first.",
            "articles": [],
        }
    ]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"content": "hi", "conversation_id": "nope"}, "conversation_id is not a valid id."),
        ({"content": "hi", "conversation_id": "１２３"}, "conversation_id is not a valid id."),
        ({"content": ["hi"]}, "The message must be text."),
        ({"content": "hi", "page": 5}, "page must be an article slug."),
        ({"type": "shout", "content": "hi"}, "The request's type is not valid."),
    ],
)
async def test_sse_fields_that_do_not_fit_get_the_websockets_bad_request_event(
    scripted, body, message
):
    # They were ninja's 422 with pydantic's details, where the WebSocket sends the chat's own
    # `bad_request` event for the same frame ("the same JSON events over SSE").
    from agent.models import Turn

    events = await post_chat(AsyncClient(), **body)

    assert [(e["type"], e["code"]) for e in events] == [("error", "bad_request")]
    assert events[0]["message"].startswith(message)
    assert await Turn.objects.acount() == 0


async def test_other_api_routes_keep_their_422_for_fields_that_do_not_fit():
    response = await AsyncClient().get("/api/search", {"q": "x", "limit": "many"})

    assert response.status_code == 422 and response.json()["detail"][0]["loc"][-1] == "limit"


async def test_sse_refuses_an_over_long_message_whole_and_never_cuts_it(scripted):
    from agent.models import Turn

    question = "x" * 4000 + " and the question at the end?"

    events = await post_chat(AsyncClient(), content=question)

    assert [(e["type"], e["code"]) for e in events] == [("error", "bad_request")]
    assert "4,029 characters long; the limit is 4,000" in events[0]["message"]
    assert scripted.requests == []  # nothing cut and sent on to the model
    assert await Turn.objects.acount() == 0


async def test_sse_model_error(scripted, settings):
    settings.AGENT_MODEL_MAX_RETRIES = 0
    scripted.enqueue(error_response(503))

    events = await post_chat(AsyncClient(), content="Hello")

    assert events[-1]["code"] == "model_error"


async def test_sse_max_steps(scripted, settings):
    settings.AGENT_MAX_STEPS = 1
    scripted.enqueue(tool_call_response([("c1", "list_articles", "{}")]))

    events = await post_chat(AsyncClient(), content="List forever")

    assert events[-1]["code"] == "max_steps"
    assert await runner.saver.drain(timeout=10)


async def test_a_step_limit_ending_keeps_its_articles_for_the_transcript(
    scripted, settings, make_article
):
    # The panel lists the articles gathered before the limit; they were not saved (only an
    # answer's citations were), and a reload said "Try a narrower question" with none.
    settings.AGENT_MAX_STEPS = 2
    article = await database_sync_to_async(make_article)(
        title="Channels", slug="channels", body="Consumers are classes."
    )
    read = json.dumps({"article_id": article.pk})
    scripted.enqueue(
        tool_call_response([("c1", "get_article_detail", read)]),
        tool_call_response([("c2", "list_articles", "{}")]),
    )
    client = AsyncClient()

    events = await post_chat(client, content="Read everything")
    assert await runner.saver.drain(timeout=10)
    transcript = await client.get(f"/api/conversations/{events[0]['conversation_id']}")

    listed = {"article_id": article.pk, "title": "Channels", "url": "/articles/channels/"}
    assert events[-1]["code"] == "max_steps" and events[-1]["articles"] == [listed]
    [turn] = transcript.json()["turns"]
    assert (turn["status"], turn["citations"], turn["answered"]) == ("max_steps", [], False)
    assert turn["articles"] == [{**listed, "excerpt": "", "section_url": "", "available": True}]


async def test_sse_follow_up_and_transcript_belong_to_the_session(scripted):
    scripted.enqueue(text_response(["One."]), text_response(["Two."]))
    owner = AsyncClient()
    first = await post_chat(owner, content="First")
    conversation_id = first[0]["conversation_id"]
    second = await post_chat(owner, content="Second", conversation_id=conversation_id)
    assert second[0]["turn"] == 2
    assert await runner.saver.drain(timeout=10)

    mine = await owner.get(f"/api/conversations/{conversation_id}")
    theirs = await AsyncClient().get(f"/api/conversations/{conversation_id}")
    stranger_chat = await post_chat(
        AsyncClient(), content="Let me in", conversation_id=conversation_id
    )

    assert mine.status_code == 200
    transcript = mine.json()
    assert [
        (t["turn"], t["user_message"], t["answer"], t["status"]) for t in transcript["turns"]
    ] == [(1, "First", "One.", "done"), (2, "Second", "Two.", "done")]
    assert theirs.status_code == 404
    assert stranger_chat[-1]["code"] == "bad_request"


async def test_chat_endpoints_are_documented():
    schema = (await AsyncClient().get("/api/openapi.json")).json()

    assert "/api/chat" in schema["paths"]
    assert "/api/conversations/{conversation_id}" in schema["paths"]


async def test_sse_session_failure_is_an_error_event_not_a_bare_500(scripted):
    """The session table is made to fail for real (renamed away), as during a PostgreSQL
    restart: the visitor still gets the protocol's ending."""
    await database_sync_to_async(_sql)("ALTER TABLE django_session RENAME TO session_away")
    try:
        events = await post_chat(AsyncClient(), content="Anyone there?")
    finally:
        await database_sync_to_async(_sql)("ALTER TABLE session_away RENAME TO django_session")

    # `unavailable`, not `internal`: the panel offers to ask again, not "something went wrong".
    assert [(e["type"], e["code"]) for e in events] == [("error", "unavailable")]


def _sql(statement: str) -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(statement)


async def test_sse_tells_the_model_the_language_the_pages_are_shown_in(scripted):
    scripted.enqueue(text_response(["你好。"]))
    chinese = {"accept-language": "zh-CN,zh;q=0.9"}

    await post_chat(AsyncClient(), headers=chinese, content="HNSW index")

    system = [m["content"] for m in scripted.requests[0]["messages"] if m["role"] == "system"]
    assert any(
        line.startswith("The visitor reads this site in Chinese (zh-hans).") for line in system
    )
    assert await runner.saver.drain(timeout=10)


async def test_a_request_connection_that_fails_to_close_does_not_end_the_stream(
    scripted, monkeypatch
):
    # The stream closes its request thread's connection as it begins; a connection that broke
    # meanwhile (the database restarted) raises on close. The turn must still run. A fake: the
    # break cannot be timed for real between the session's save and the first byte.
    from django.db import DatabaseError

    from config import concurrency

    class Broken:
        in_atomic_block = False

        def close(self):
            raise DatabaseError("server closed the connection unexpectedly")

    class Connections:
        def all(self, initialized_only: bool = False):
            return [Broken()]

    monkeypatch.setattr(concurrency, "connections", Connections())
    scripted.enqueue(text_response(["Still ", "here."]))

    events = await post_chat(AsyncClient(), type="message", content="hello")

    assert events[0]["type"] == "start" and events[-1]["type"] == "done"
    assert text_of(events) == "Still here."
