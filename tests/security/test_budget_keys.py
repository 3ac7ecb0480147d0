"""Budget keys a refused message left in Redis for a week.

A turn holds tokens on its budgets before its conversation is read, and a message naming a
conversation that is not the sender's (any made-up id) is refused only then. The hold was given
back, but the key stayed: `tok:c:<id>` at 0, kept seven days, one per message (30 a minute
per address, 120 per IPv6 /48), so one address kept about 300,000 keys alive in the Redis that
every limit of the site shares, and stopping did not free them. A budget back at 0 has no key
now, on Redis and in one process alike.
"""

import uuid

import pytest
import redis
from django.db import connection

from testing_support.live_server import LiveServer, database_url
from tests.security.clients import sse_post
from tests.security.conftest import redis_url  # noqa: F401  (a real redis-server)

pytestmark = pytest.mark.django_db(transaction=True)

MESSAGES = 6


def test_messages_for_made_up_conversations_leave_no_budget_keys(redis_url, tmp_path):  # noqa: F811
    database = database_url(connection.settings_dict["NAME"])
    with LiveServer(
        "budget-keys", database, {"REDIS_URL": redis_url}, tmp_path / "server"
    ) as server:
        answers = [
            sse_post(server, {"content": "What is HNSW?", "conversation_id": str(uuid.uuid4())})
            for _ in range(MESSAGES)
        ]
        # And a turn that ran: the offline model spends nothing, so nothing is left either.
        _, answered = sse_post(server, {"content": "What is HNSW?"})
    store = redis.Redis.from_url(redis_url)
    left = sorted(key.decode() for key in store.scan_iter("tok:*"))

    for _, events in answers:
        [refused] = events
        assert refused["code"] == "bad_request"
    assert answered[-1]["type"] in {"done", "error"} and answered[0]["type"] == "start"
    assert left == []  # before: a `tok:c:` per message, kept a week, and the day's two
