"""The /64s of one IPv6 /48 share its allowance of transcript reads, votes, chat sockets and
chat frames, as they share its messages, new sessions and searches.

Those four counted the /64 alone, so each of a /48's 65,536 /64s had every allowance afresh: a
transcript read costs about 60 ms of CPU (one session's cookie reads from any address), a vote
is a write, a socket a session lookup, and 60 sockets' frames within their allowance cost 50
CPU-seconds. Seven /64s of one /48, one event each: all seven passed. Now the /48 counts too.
"""

import uuid

import httpx
import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus

from tests.security.clients import ws_first, ws_open

pytestmark = pytest.mark.django_db(transaction=True)

POLICY_VIOLATION = 4008
WALKED = [f"2001:db8:c:{i:x}::1" for i in range(1, 8)]  # seven /64s of 2001:db8:c::/48
ALLOWED = 5  # every *_PER_NETWORK below


def network_server(serve):
    return serve(
        "network-limits",
        DJANGO_TRUSTED_PROXIES="1",
        AGENT_TRANSCRIPTS_PER_MINUTE_PER_IP="3",
        AGENT_TRANSCRIPTS_PER_MINUTE_PER_NETWORK=str(ALLOWED),
        AGENT_FEEDBACK_PER_MINUTE_PER_IP="3",
        AGENT_FEEDBACK_PER_MINUTE_PER_NETWORK=str(ALLOWED),
        AGENT_SOCKETS_PER_MINUTE_PER_IP="3",
        AGENT_SOCKETS_PER_MINUTE_PER_NETWORK=str(ALLOWED),
        AGENT_FRAMES_PER_MINUTE="10",
        AGENT_FRAMES_PER_MINUTE_PER_IP="3",
        AGENT_FRAMES_PER_MINUTE_PER_NETWORK=str(ALLOWED),
    )


def test_the_64s_of_one_48_share_transcript_reads_and_votes(serve):
    server = network_server(serve)
    path = f"/api/conversations/{uuid.uuid4()}"
    cookies = {"sessionid": "a" * 32}  # one session, from every /64

    with httpx.Client(base_url=server.url, timeout=30, cookies=cookies) as client:
        reads = [client.get(path, headers={"X-Forwarded-For": a}).status_code for a in WALKED]
        votes = [
            client.post(
                f"{path}/turns/1/feedback",
                json={"vote": "up"},
                headers={"X-Forwarded-For": address, "Origin": server.url},
            ).status_code
            for address in WALKED
        ]
        ipv4 = client.get(path, headers={"X-Forwarded-For": "192.0.2.7"}).status_code

    assert reads == [404] * ALLOWED + [429] * 2  # before: 404 for all seven
    assert votes == [404] * ALLOWED + [429] * 2  # before: 404 (counted, looked up) for all
    assert ipv4 == 404  # IPv4 has no network count of its own


async def test_the_64s_of_one_48_share_socket_opens_and_frames(serve):
    server = network_server(serve)

    sockets, refused = [], 0
    for address in WALKED:
        try:
            sockets.append(await ws_open(server, headers={"X-Forwarded-For": address}))
        except InvalidStatus as exc:
            assert exc.response.status_code == 403
            refused += 1
    answered, closed = 0, []
    for socket in sockets:  # two frames each, within each socket's and each /64's allowance
        try:
            for _ in range(2):
                await socket.send("{}")
                assert (await ws_first(socket))["code"] == "bad_request"
                answered += 1
        except ConnectionClosed as exc:
            closed.append(exc.rcvd.code if exc.rcvd else None)
    for socket in sockets:
        await socket.close()

    assert (len(sockets), refused) == (ALLOWED, 2)  # before: (7, 0)
    assert answered == ALLOWED  # before: 10, two on each socket
    assert closed == [POLICY_VIOLATION] * 3  # each socket whose frame was one too many
    assert f"its network is over {ALLOWED} frames a minute" in server.output()
    assert "Traceback" not in server.output()
