"""One long made-up word costs what its length weighs, not its square.

The typo reader (blog/spelling.py) tries every word one edit away from an unknown word, about
54 per letter, and stems each at its full length. A query of one made-up word of 490 letters
weighs 4 of the address's 60 searches a minute and took 12 CPU-seconds; sent as a chat message
(the offline model searches with it), 10. Fifteen such searches a minute from one address kept
three cores busy. A word longer than MAX_LENGTH is no slip and is left as written.
"""

import random
import string

import httpx
import pytest

from tests.security.clients import ws_answer

pytestmark = pytest.mark.django_db(transaction=True)

CPU_SECONDS = 2.0  # the most either may cost now (0.2 here); 10 to 12 before


def made_up_word(letters: int) -> str:
    pick = random.Random(letters)
    return "".join(pick.choice(string.ascii_lowercase) for _ in range(letters))


def test_a_search_for_one_long_made_up_word_is_cheap(serve):
    server = serve("long-word-search")
    word = made_up_word(490)

    with httpx.Client(base_url=server.url, timeout=120) as client:
        client.get("/api/search", params={"q": "diference"})  # the typo reader's lists, loaded
        before = server.cpu_seconds()
        response = client.get("/api/search", params={"q": word})
        spent = server.cpu_seconds() - before

    assert response.status_code == 200
    assert spent < CPU_SECONDS


async def test_a_chat_message_of_one_long_made_up_word_is_cheap(serve):
    server = serve("long-word-chat")
    await ws_answer(server, "whats the diference between sse and websockets")  # lists loaded

    before = server.cpu_seconds()
    events = await ws_answer(server, made_up_word(490))
    spent = server.cpu_seconds() - before

    assert events[-1]["type"] == "done"
    assert spent < CPU_SECONDS
