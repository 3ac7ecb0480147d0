"""A declined turn's offer of articles spends the visitor's search allowance.

Every declined turn runs one more vector search (agent.suggestions) to offer three articles,
embedding the visitor's whole question. The model's own searches count on the address's
search allowance, weighted by the query's length, but the offer's did not: a model that
declines without searching (any real model may) let an address embed a full-length question
on every message it may send, uncounted (red team 37). The offer now counts as the same search
would; past the allowance the decline stands without it.
"""

import re

import pytest

from agent.llm.offline_replies import OFFER_LEAD as LEAD
from testing_support.model_server import text_response
from tests.security.clients import published_indexed, same_minute, ws_answer
from tests.security.conftest import model_env

pytestmark = pytest.mark.django_db(transaction=True)

DECLINE = "I couldn't find that in this blog."
OFFER = LEAD["en"].split("{", 1)[0]  # "Articles you could ask about instead: "


def _answer(events: list[dict]) -> str:
    return "".join(event.get("content", "") for event in events if event["type"] == "text")


async def test_the_offer_counts_on_the_search_allowance(serve, scripted):
    from channels.db import database_sync_to_async

    await database_sync_to_async(published_indexed)(
        title="Step limits", slug="step-limits", body="## Why\n\nA cap of five model calls."
    )
    for _ in range(3):
        scripted.enqueue(text_response([DECLINE]))
    server = serve("decline-searches", SEARCH_REQUESTS_PER_MINUTE_PER_IP="3", **model_env(scripted))
    same_minute(40)

    # A long question weighs as the same query sent to /api/search would: the whole minute's
    # allowance. Offered, it is spent.
    long = _answer(await ws_answer(server, "why is sourdough bread sour " * 60))
    short = _answer(await ws_answer(server, "why is rye bread sour"))

    assert long.startswith(DECLINE) and OFFER in long
    assert short.startswith(DECLINE) and OFFER not in short  # before: offered, uncounted


HOSTILE = "Steps](javascript:alert(1)) [x]\n<script>x</script> `tick \u202egnp.exe \\"
LINK = re.compile(r"\[([^\]\n]*)\]\(([^)\s]*)\)")


async def test_a_title_cannot_break_out_of_its_offered_link(serve, scripted):
    from channels.db import database_sync_to_async

    await database_sync_to_async(published_indexed)(
        title=HOSTILE, slug="step-limits", body="## Why\n\nA cap of five model calls."
    )
    scripted.enqueue(text_response([DECLINE]))
    server = serve("decline-titles", **model_env(scripted))

    answer = _answer(await ws_answer(server, "step limits of the model"))

    offer = answer.split(OFFER, 1)[1]
    links = LINK.findall(offer)
    assert [url for _, url in links] == ["/articles/step-limits/"], offer
    label = links[0][0]
    assert (
        "\n" not in label
        and "\u202e" not in label
        and "javascript:" not in offer.replace(label, "")
    )
    assert offer == f"[{label}](/articles/step-limits/).", offer  # one link, then the stop
