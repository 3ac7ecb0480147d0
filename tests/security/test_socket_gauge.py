"""The open-sockets gauge must drop whatever way a chat socket dies.

Channels closes old database connections in the database thread before every handler,
`disconnect` included. With that thread stuck (a turn waiting on a table lock), the
disconnect handler never ran: daphne killed the application after its 10 s close timeout,
and `docent_open_sockets` kept counting the socket for the life of the process.
"""

import json

import pytest
from django.db import connection, transaction
from websockets.sync.client import connect

from agent.models import Turn
from testing_support.waits import blocked_on_a_lock, open_sockets, wait_until

pytestmark = pytest.mark.django_db(transaction=True)

LOCK = "LOCK TABLE agent_conversation IN SHARE ROW EXCLUSIVE MODE"
KILLED = "took too long to shut down and was killed"


def test_a_socket_whose_disconnect_is_killed_leaves_the_gauge(serve):
    server = serve("gauge")
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(LOCK)  # the turn's conversation INSERT holds the database thread
        with connect(server.ws_url, additional_headers={"Origin": server.url}) as socket:
            socket.send(json.dumps({"type": "message", "content": "What is pgvector?"}))
            wait_until(blocked_on_a_lock, "the turn waits to write its conversation")
        # The disconnect handler waits behind the stuck thread until daphne kills it.
        wait_until(lambda: KILLED in server.output(), "daphne killed the consumer")

    wait_until(lambda: not Turn.objects.filter(status="running").exists(), "the turn ended")
    assert open_sockets(server) == 0
