"""A request body trickled through the cluster's nginx.

A web process gives a request's whole body HTTP_BODY_SECONDS once its head is in (a byte every
few seconds held the connection, and past 100 kB a temp file, for as long as the client liked).
In the cluster nginx collected every body before passing it on, and its only timer,
`client_body_timeout`, restarts on every read: a byte every 59 s held the connection (and past
16 kB a temp file of up to 1 MB) with no end, 100 such per address (its `limit_conn`), so the
web process's deadline never came into play (95 s observed against its 60). Bodies now go on as
they arrive and the web process's deadline bounds them, nginx's connections included; the chat
post, which nginx must collect to retry it on another worker, is capped at the chat's own size.
"""

import shutil
import socket
import uuid

import httpx
import pytest
from django.db import connection

from testing_support.cluster import LocalCluster
from testing_support.live_server import database_url

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        not shutil.which("nginx", path="/usr/sbin:/usr/bin:/sbin"), reason="nginx is not installed"
    ),
]

VISITOR = "127.0.0.2"  # counted by nginx as a visitor (only 127.0.0.1 is this machine)
DECLARED = 120  # bytes of body declared; sent a byte every 0.25 s, it would take 30 s


def _trickled_until_the_server_spoke(port: int) -> bool:
    """POST a body a byte at a time through nginx; True when the server answered or closed
    before the client had sent it all."""
    with socket.create_connection(("127.0.0.1", port), source_address=(VISITOR, 0)) as sock:
        sock.sendall(
            b"POST /api/search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\n"
            b"Content-Length: %d\r\n\r\n" % DECLARED
        )
        sock.settimeout(0.25)
        for _ in range(DECLARED - 1):  # never the last byte: the body is never complete
            try:
                sock.sendall(b"a")
                sock.recv(1)  # anything (a 502, an end) means the server gave up on the body
                return True
            except TimeoutError:
                continue
            except OSError:  # reset
                return True
    return False


def test_a_body_trickled_through_nginx_is_cut_at_the_web_process_deadline(tmp_path):
    database = database_url(connection.settings_dict["NAME"])
    with LocalCluster(database, tmp_path, extra={"HTTP_BODY_SECONDS": "2"}, workers=1) as cluster:
        port = cluster.port
        cut = _trickled_until_the_server_spoke(port)
        # Whole bodies still pass, the chat's (collected by nginx) and any other route's.
        chat = httpx.post(
            cluster.url + "/api/chat",
            json={"content": "What is HNSW?"},
            headers={"Origin": cluster.url},
            timeout=60,
        )
        vote = httpx.post(
            f"{cluster.url}/api/conversations/{uuid.uuid4()}/turns/1/feedback",
            json={"vote": "up"},
            headers={"Origin": cluster.url},
            timeout=30,
        )
        too_big = httpx.post(
            cluster.url + "/api/chat",
            content=b"x" * (3 * 65536),
            headers={"Origin": cluster.url, "Content-Type": "application/json"},
            timeout=30,
        )
        output = cluster.webs[0].output()

    assert cut  # before: the whole 30 s trickle with no answer and the connection held
    assert "did not send a request body in time" in output
    assert '"type": "done"' in chat.text or '"type":"done"' in chat.text
    assert vote.status_code == 404  # passed on whole, answered by the application
    # Past the chat's size nginx holds none of it (it held 1 MB), and answers as the chat does.
    assert too_big.status_code == 400
    assert too_big.json() == {
        "detail": "The request is larger than 65,536 bytes.",
        "code": "bad_request",
    }
