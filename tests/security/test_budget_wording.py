"""A turn cut mid-answer says which budget cut it: the conversation's, the address's or the site's.

Every cut said "This answer reached its token budget" with no wait, and the panel offered a
new chat: the address's or the site's day budget then refused the new chat too.
"""

import pytest

from testing_support.model_server import text_response
from tests.security.clients import ws_ask, ws_open
from tests.security.conftest import model_env

pytestmark = pytest.mark.django_db(transaction=True)

LEFT = "3000"  # the tokens the budget under test has left: less than the answer needs
DAY = 24 * 3600


@pytest.mark.parametrize(
    ("budget", "words", "waits"),
    [
        ("AGENT_TOKENS_PER_DAY", "The assistant has used today’s budget.", True),
        ("AGENT_TOKENS_PER_IP_PER_DAY", "You have used today’s budget.", True),
        ("AGENT_TOKENS_PER_CONVERSATION", "This answer reached its token budget", False),
    ],
)
async def test_an_answer_cut_mid_way_says_which_budget_cut_it(
    serve, scripted, budget, words, waits
):
    scripted.enqueue(text_response(["word "] * 2000))  # about 3,400 tokens of answer
    server = serve(
        budget.lower().replace("_", "-"),
        **{budget: LEFT},
        AGENT_TOKENS_RESERVE="1000",  # the turn starts, and asks for more as the answer grows
        AGENT_TOKENS_PER_ANSWER="200",
        **model_env(scripted),
    )
    socket = await ws_open(server)

    events = await ws_ask(socket, "write me a book")
    await socket.close()

    end = events[-1]
    assert [e["type"] for e in events[:2]] == ["start", "text"]  # cut mid-answer, not refused
    assert (end["type"], end["code"]) == ("error", "rate_limited")
    assert end["message"].startswith(words)
    if waits:  # until the day's end (UTC): a new chat is refused as long
        assert 0 < end["retry_after"] <= DAY
        assert "new chat" not in end["message"]
    else:
        assert "retry_after" not in end  # the panel offers a new chat
