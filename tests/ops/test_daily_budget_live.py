"""The site's daily token budget, seen filling before it refuses anyone."""

import pytest

from agent.models import Turn
from testing_support.model_server import text_response
from testing_support.waits import wait_until
from tests.ops.chat import ask
from tests.ops.prom import scrape, value
from tests.ops.test_incidents_live import MODEL, _server
from tests.security.conftest import redis_url  # noqa: F401  (a real redis-server)

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_days_tokens_show_before_the_budget_runs_out(
    model_server,
    redis_url,  # noqa: F811
    tmp_path,
):
    """Nothing said how much of AGENT_TOKENS_PER_DAY was gone: DocentDailyBudgetSpent fired
    only once every visitor was refused, and the operator on call could not see it coming."""
    model_server.enqueue(text_response(["Hello."], usage=(1200, 34)))
    env = {
        **MODEL,
        "OPENAI_BASE_URL": model_server.base_url,
        "REDIS_URL": redis_url,
        "AGENT_TOKENS_PER_DAY": "50000",
    }
    with _server("day-tokens", tmp_path, **env) as server:
        before = scrape(server.url)
        ask(server.url, "What is a mast?")
        # The budget is settled in the background after the last event, just before the turn's
        # save: scraped at once, a loaded server could still count the turn's 4,000-token hold.
        saved = Turn.objects.filter(user_message="What is a mast?").exclude(status="running")
        wait_until(saved.exists, "the turn saved")
        after = scrape(server.url)

    assert value(before, "docent_daily_tokens_spent") == 0
    assert value(before, "docent_daily_tokens_budget") == 50000
    # What each turn holds first: the alert's margin when the budget is a few holds.
    assert value(before, "docent_turn_tokens_reserve") == 4000
    # What the endpoint billed; the turn's 4,000-token hold given back. DocentDailyBudgetLow:
    # max(docent_daily_tokens_spent) / max(docent_daily_tokens_budget) > 0.8
    assert value(after, "docent_daily_tokens_spent") == 1234
