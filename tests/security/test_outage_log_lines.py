"""A database outage's log line quotes the path escaped: the client cannot begin a line.

The pages and the API answer an outage with a 503 and one WARNING line naming the path
(config/outage.py, config/api.py). The path is the client's, percent-decoded: a "%0a" in it
wrote the rest of the URL as a line of its own, a forged ERROR, say, for as long as the outage
lasted, as often as the client liked.
"""

from urllib.parse import quote

import httpx
import pytest

from tests.agent.test_persistence import database_outage  # noqa: F401 - a fixture

pytestmark = pytest.mark.django_db(transaction=True)

FORGED = "2026-12-05 00:00:00,000 ERROR django.request: forged"


def test_an_outage_line_cannot_begin_a_line_of_the_clients(serve, database_outage):  # noqa: F811
    server = serve("outage-log-line")
    # The admin's catch-all takes any character but a line feed (its `.*`): a carriage return
    # and the separators splitlines breaks at; the API's slug takes a line feed too.
    pages = [f"x\r{FORGED} by a return", f"x\u2028{FORGED} by U+2028", f"x\x85{FORGED} by NEL"]
    slugs = [f"x\n{FORGED} by a slug", f"x\r\n{FORGED} by a return", f"x\u2029{FORGED} by U+2029"]
    database_outage.begin()
    with httpx.Client(base_url=server.url, cookies={"sessionid": "x" * 32}) as client:
        # The admin reads the session (a page's 503); an article's slug reaches the API's query.
        answers = [client.get("/admin/" + quote(tail, safe="")) for tail in pages]
        answers += [client.get("/api/articles/" + quote(tail, safe="")) for tail in slugs]
    database_outage.end()
    server.stop()

    lines = server.output().splitlines()  # splits at U+2028 too, as log viewers do
    said = [line for line in lines if "database unavailable for" in line]
    assert [response.status_code for response in answers] == [503] * 6
    # Before: six lines began with the forged text, one per request.
    forged = [line for line in lines if line.startswith(FORGED[:23])]
    assert len(forged) == 0
    assert len(said) == 6 and all(FORGED in line for line in said)  # said, escaped
