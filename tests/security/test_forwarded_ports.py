"""Behind N counted proxies, the client's entry in X-Forwarded-For is read as an address.

Some load balancers append the address they saw with its port (`203.0.113.7:51234`, Azure's
Application Gateway does), or an IPv6 one in brackets. The entry was taken as written, so every
new connection of one visitor, from a new source port, was counted as a new address: the
per-address limits never filled, and a bracketed IPv6 address escaped its /64.
"""

import pytest

from tests.security.test_client_addresses import starts

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_port_or_brackets_in_the_forwarded_client_do_not_make_a_new_address(serve):
    # Two counted proxies: the load balancer (which writes the port) and the one in front of
    # the worker, which appends its own peer (here 127.0.0.1).
    server = serve("xff-ports", DJANGO_TRUSTED_PROXIES="2", AGENT_MESSAGES_PER_MINUTE_PER_IP="3")

    ported = await starts(server, [f"203.0.113.7:{50000 + i}, 127.0.0.1" for i in range(5)])
    walked = await starts(
        server, [f"[2001:db8:5:6::{i:x}]:{40000 + i}, 127.0.0.1" for i in range(1, 6)]
    )
    bare = await starts(server, [f"[2001:db8:7:8::{i:x}], 127.0.0.1" for i in range(1, 6)])
    control = await starts(server, ["198.51.100.4:443, 127.0.0.1"])

    assert ported == ["start"] * 3 + ["rate_limited"] * 2
    assert walked == ["start"] * 3 + ["rate_limited"] * 2
    assert bare == ["start"] * 3 + ["rate_limited"] * 2
    assert control == ["start"]  # another visitor is still another address
