"""The site's day across midnight, with two web processes whose clocks disagree.

Each web process named the day's budget key by its own clock. Here one runs two minutes into
tomorrow (its clock patched at start, `sitecustomize`: libfaketime's clock breaks Python's
sleeps), as an NTP-less VM drifts: its turns were charged to a day no other process counted
yet, and a scrape through the proxy read yesterday's total or tomorrow's by the process it
reached, so DocentDailyBudgetLow flapped at every roll-over. The day is Redis's now.
"""

import time

import pytest
import redis
from django.db import connection

from agent.models import Turn
from testing_support.live_server import LiveServer, database_url
from testing_support.model_server import text_response
from testing_support.waits import wait_until
from tests.ops.chat import ask
from tests.ops.prom import scrape, value
from tests.security.conftest import redis_url  # noqa: F401  (a real redis-server)

pytestmark = pytest.mark.django_db(transaction=True)

DAY = 86400
CLOCK = """
import os, time
_offset = float(os.environ["TEST_CLOCK_OFFSET_SECONDS"])
_time, _gmtime = time.time, time.gmtime
time.time = lambda: _time() + _offset
time.gmtime = lambda seconds=None: _gmtime(_time() + _offset if seconds is None else seconds)
"""


def test_two_clocks_across_midnight_charge_and_show_one_day(
    model_server,
    redis_url,  # noqa: F811
    tmp_path,
):
    model_server.enqueue(*(text_response(["Fine."], usage=(300, 50)) for _ in range(2)))
    (tmp_path / "clock").mkdir()
    (tmp_path / "clock" / "sitecustomize.py").write_text(CLOCK)
    ahead = DAY - time.time() % DAY + 120  # two minutes past the next UTC midnight
    env = {
        "REDIS_URL": redis_url,
        "OPENAI_BASE_URL": model_server.base_url,
        "OPENAI_API_KEY": "test",
        "AGENT_MODEL": "scripted",
    }
    skewed = {"PYTHONPATH": str(tmp_path / "clock"), "TEST_CLOCK_OFFSET_SECONDS": str(ahead)}
    name = database_url(connection.settings_dict["NAME"])
    with (
        LiveServer("clock-right", name, env, tmp_path / "a") as right,
        LiveServer("clock-ahead", name, env | skewed, tmp_path / "b") as wrong,
    ):
        for server in (right, wrong):
            assert ask(server.url, "Which day is it?")[-1]["type"] == "done"
        # Each budget settles in the background after the last event, before the turn's save:
        # scraped at once, a turn's hold could still be counted.
        saved = Turn.objects.filter(user_message="Which day is it?").exclude(status="running")
        wait_until(lambda: saved.count() == 2, "both turns saved")
        scrapes = [scrape(server.url) for server in (right, wrong)]
    spent = [value(samples, "docent_daily_tokens_spent") for samples in scrapes]

    client = redis.Redis.from_url(redis_url)
    seconds, _ = client.time()
    today = time.strftime("%Y-%m-%d", time.gmtime(seconds))
    assert {key.decode() for key in client.scan_iter("tok:d:*")} == {f"tok:d:{today}"}
    assert spent[0] == spent[1] == int(client.get(f"tok:d:{today}")) > 0
