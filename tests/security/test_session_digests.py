"""What the chat keeps of a visitor's session is a keyed digest, never the cookie itself.

The session key is the cookie, and a signed-in editor's is their admin session. A
conversation's row, the rate limits' and turn locks' Redis keys (`rl:s:<key>`,
`turns:s:<key>`) and a spooled turn held it as it was, so whoever read the database, Redis's
files or the spool signed in as that editor. They hold `config.sessions.session_digest(key)`
now, HMAC-SHA256 under a key derived from SECRET_KEY; the owner still reads their transcript
and votes, and nobody else does. Every attack here runs against a live server.
"""

import asyncio
import json
import uuid

import httpx
import pytest
import redis
from channels.db import database_sync_to_async

from agent.models import Conversation
from agent.services import SPOOL_NAME, spool_replay
from config.sessions import session_digest
from testing_support.model_server import text_response
from tests.agent.test_persistence import database_outage  # noqa: F401 - a fixture
from tests.security.clients import ws_ask, ws_open
from tests.security.conftest import model_env
from tests.security.test_spool_file_mode import ask_through_an_outage, spooled

pytestmark = pytest.mark.django_db(transaction=True)


def new_key() -> str:
    return uuid.uuid4().hex  # 32 of [a-z0-9], as the site's own session keys


async def ask(server, key: str, question: str, **extra) -> list[dict]:
    socket = await ws_open(server, cookie=key)
    try:
        return await ws_ask(socket, question, **extra)
    finally:
        await socket.close()


@database_sync_to_async
def stored_keys() -> list[str]:
    return list(Conversation.objects.values_list("session_key", flat=True))


async def test_the_row_holds_a_digest_and_only_its_owner_reads_or_votes(serve):
    server = serve("digest-rows")
    owner, other = new_key(), new_key()
    events = await ask(server, owner, "What is this blog about?")
    assert events[-1]["type"] == "done", events[-1]
    conversation = events[0]["conversation_id"]

    assert await stored_keys() == [session_digest(owner)]  # before: [owner], the cookie
    assert owner not in json.dumps(await stored_keys())

    path = f"/api/conversations/{conversation}"
    async with httpx.AsyncClient(base_url=server.url, cookies={"sessionid": owner}) as client:
        mine = await client.get(path)
        vote = await client.post(
            f"{path}/turns/1/feedback",
            json={"vote": "up"},
            headers={"Origin": server.url},
        )
    async with httpx.AsyncClient(base_url=server.url, cookies={"sessionid": other}) as client:
        theirs = await client.get(path)
        their_vote = await client.post(
            f"{path}/turns/1/feedback", json={"vote": "down"}, headers={"Origin": server.url}
        )
    # The digest itself, sent as a cookie, is no key: it is not shaped like one.
    stolen = session_digest(owner)
    async with httpx.AsyncClient(base_url=server.url, cookies={"sessionid": stolen}) as client:
        with_digest = await client.get(path)
    assert mine.status_code == 200 and mine.json()["turns"], mine.text
    assert vote.status_code == 200, vote.text
    assert theirs.status_code == 404 and their_vote.status_code == 404
    assert with_digest.status_code == 404

    # The same visitor's next message continues their conversation.
    again = await ask(server, owner, "And what else?", conversation_id=conversation)
    assert again[-1]["type"] == "done" and again[0]["conversation_id"] == conversation


async def test_redis_names_the_digest_not_the_cookie(serve, redis_url):
    server = serve("digest-redis", REDIS_URL=redis_url)
    key = new_key()
    events = await ask(server, key, "What is this blog about?")
    assert events[-1]["type"] == "done", events[-1]

    store = redis.Redis.from_url(redis_url)
    names = [name.decode() for name in store.keys("*")]
    store.close()
    assert f"rl:s:{session_digest(key)}" in names, names  # the session's message limit
    assert not [name for name in names if key in name], names  # before: rl:s:<the cookie>


def test_a_spooled_turn_holds_the_digest_and_an_old_line_replays(
    serve,
    scripted,
    database_outage,  # noqa: F811
    tmp_path,
    settings,
):
    scripted.enqueue(text_response(["Kept in the spool."], first_delay=2))
    server = serve("digest-spool", AGENT_SAVE_RETRIES="1", **model_env(scripted))
    key = new_key()
    spool = tmp_path / "spool-digest-spool" / SPOOL_NAME
    try:
        events = asyncio.run(ask_through_an_outage(server, database_outage, key))
        assert events[-1]["type"] == "done", events[-1]
        text = spooled(spool, session_digest(key))
    finally:
        database_outage.end()
    assert key not in text  # before: the spooled line held the cookie

    # A line an older version spooled holds the cookie's key: its replay keeps the digest.
    server.stop()
    Conversation.objects.all().delete()
    record = json.loads(text.splitlines()[0])
    record["session_key"] = key
    spool.write_text(json.dumps(record) + "\n")
    settings.AGENT_SPOOL_DIR = str(spool.parent)
    assert spool_replay()[0] == 1
    assert list(Conversation.objects.values_list("session_key", flat=True)) == [session_digest(key)]
