"""A turn cut mid-answer says which budget cut it: the conversation's, the address's or the site's.

Every cut said "This answer reached its token budget" with no wait, and the panel offered a
new chat: the address's or the site's day budget then refused the new chat too.
"""

import time

import pytest

from testing_support.model_server import text_response
from tests.security.clients import ws_ask, ws_open
from tests.security.conftest import model_env

pytestmark = pytest.mark.django_db(transaction=True)

LEFT = "3000"  # the tokens the budget under test has left: less than the answer needs
DAY = 24 * 3600


@pytest.mark.parametrize(
    ("budget", "words", "reason"),
    [
        ("AGENT_TOKENS_PER_DAY", "The assistant has used today’s budget.", "daily_budget"),
        ("AGENT_TOKENS_PER_IP_PER_DAY", "You have used today’s budget.", "ip_budget"),
        ("AGENT_TOKENS_PER_CONVERSATION", "This answer reached its token budget", ""),
    ],
)
async def test_an_answer_cut_mid_way_says_which_budget_cut_it(
    serve, scripted, budget, words, reason
):
    book = text_response(["word "] * 2000)  # about 3,400 tokens of answer
    scripted.enqueue(book, book)
    server = serve(
        budget.lower().replace("_", "-"),
        **{budget: LEFT},
        AGENT_TOKENS_RESERVE="1000",  # the turn starts, and asks for more as the answer grows
        AGENT_TOKENS_PER_ANSWER="200",
        **model_env(scripted),
    )
    socket = await ws_open(server)

    events = await ws_ask(socket, "write me a book")
    new_chat = await ws_ask(socket, "and in a new chat?")
    await socket.close()

    end = events[-1]
    assert [e["type"] for e in events[:2]] == ["start", "text"]  # cut mid-answer, not refused
    assert (end["type"], end["code"]) == ("error", "rate_limited")
    assert end["message"].startswith(words)
    if reason:  # a day's budget: a new chat is refused as long, until the day's end (UTC)
        assert 0 < end["retry_after"] <= DAY and end["reason"] == reason
        assert (time.time() + end["retry_after"]) % DAY < 60  # at 00:00 UTC, not before it
        assert "new chat" not in end["message"]
        assert (new_chat[-1]["code"], new_chat[-1]["reason"]) == ("rate_limited", reason)
    else:
        assert "retry_after" not in end and "reason" not in end  # the panel offers a new chat
        assert new_chat[0]["type"] == "start"  # which has a budget of its own
