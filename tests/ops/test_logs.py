"""LOG_FORMAT=json: one JSON object per line with the turn's ids; text stays the default."""

import io
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

from ops.logs import ContextFormatter, JsonFormatter, bound
from tests.ops.log_capture import log_through

ROOT = Path(__file__).resolve().parents[2]


def test_json_lines_carry_the_bound_ids_and_the_traceback():
    def emit(logger):
        with bound(turn_id="t-1", conversation_id="c-1", trace_id="ab" * 16):
            try:
                raise ValueError("boom\nsecond line")
            except ValueError:
                logger.exception("saving %s failed", "turn")
        logger.info("outside")

    lines = log_through(JsonFormatter(), emit).splitlines()

    assert len(lines) == 2  # the multi-line traceback stays inside one line
    inside, outside = (json.loads(line) for line in lines)
    assert inside["message"] == "saving turn failed" and inside["level"] == "ERROR"
    assert (inside["turn_id"], inside["conversation_id"]) == ("t-1", "c-1")
    assert inside["trace_id"] == "ab" * 16
    assert "ValueError: boom" in inside["exception"]
    assert "turn_id" not in outside


def test_a_turns_summary_line_carries_its_figures_as_json_fields():
    def emit(logger):
        with bound(turn_id="t-3"):
            logger.info("turn declined in 9 ms", extra={"turn": {"status": "done", "model_ms": 7}})

    entry = json.loads(log_through(JsonFormatter(), emit))
    assert (entry["turn_id"], entry["status"], entry["model_ms"]) == ("t-3", "done", 7)


def test_text_lines_name_the_turn():
    def emit(logger):
        with bound(turn_id="t-2", conversation_id="c-2"):
            logger.warning("slow")

    line = log_through(ContextFormatter("%(levelname)s %(message)s"), emit)
    assert line == "WARNING slow [turn t-2]\n"


def test_text_lines_name_the_turns_trace_as_the_json_lines_do():
    trace = "4bf92f3577b34da6a3ce929d0e0e4736"

    def emit(logger):
        with bound(turn_id="t-4", conversation_id="c-4", trace_id=trace):
            logger.warning("turn interrupted")

    line = log_through(ContextFormatter("%(levelname)s %(message)s"), emit)
    assert line == f"WARNING turn interrupted [turn t-4] [trace {trace}]\n"


SETTINGS = (
    "from django.conf import settings; print(settings.LOGGING['handlers']['console']['formatter'])"
)


def _formatter(log_format: str | None) -> str:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"}
    env.pop("LOG_FORMAT", None)
    if log_format:
        env["LOG_FORMAT"] = log_format
    code = f"import django; django.setup(); {SETTINGS}"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_text_is_the_default_and_json_is_chosen_by_log_format():
    assert _formatter(None) == "plain"
    assert _formatter("json") == "json"


def test_a_django_request_warning_is_one_line_in_the_chosen_format():
    # With DEBUG on, Django's own console handler printed "Not Found: /admin/x/" a second
    # time beside ours: unformatted, and not JSON under LOG_FORMAT=json.
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "LOG_FORMAT": "json"}
    env["DJANGO_DEBUG"] = "true"
    code = (
        "import django, logging; django.setup(); "
        "logging.getLogger('django.request').warning('Not Found: %s', '/admin/x/')"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if "/admin/x/" in line]
    assert len(lines) == 1, lines
    entry = json.loads(lines[0])
    assert (entry["level"], entry["message"]) == ("WARNING", "Not Found: /admin/x/")


def test_a_limit_says_it_refuses_once_a_minute_with_the_count_since(caplog):
    """A storm from one address moved docent_rate_limit_refusals_total and nothing said whose;
    a line per refusal would let the client decide how fast the log grows."""
    from ops import refusals

    refusals.reset()
    with caplog.at_level(logging.WARNING, logger="ops.refusals"):
        for second in range(0, 60, 5):  # twelve refusals in the first minute: one line
            refusals.refusal_note(reason="ip", address="203.0.113.9", now=1000.0 + second)
        refusals.refusal_note(reason="session", address="203.0.113.9", now=1001.0)  # its own
        refusals.refusal_note(reason="ip", address="198.51.100.4\nFORGED", now=1060.0)
    refusals.reset()

    lines = [record.getMessage() for record in caplog.records]
    assert lines == [
        "rate limit ip refused a request from 203.0.113.9; each refusal counts in "
        'docent_rate_limit_refusals_total{reason="ip"}',
        "rate limit session refused a request from 203.0.113.9; each refusal counts in "
        'docent_rate_limit_refusals_total{reason="session"}',
        "rate limit ip refused a request from 198.51.100.4\\nFORGED (11 more refused since the "
        'last such line); each refusal counts in docent_rate_limit_refusals_total{reason="ip"}',
    ]


def test_a_refused_permission_is_one_warning_line_without_its_traceback(db, client):
    # A staff user without the blog's permissions whose page still polls an article's index
    # state: Django logs each PermissionDenied at WARNING with its traceback, ~20 lines a poll.
    from django.contrib.auth import get_user_model

    from blog.models import Article
    from ops.logs import SuspiciousRequestFilter

    article = Article.objects.create(title="Zeppelins", slug="zeppelins", body="Gas bags.")
    user = get_user_model().objects.create_user("mod", password="pw", is_staff=True)
    client.force_login(user)
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(SuspiciousRequestFilter())
    handler.setFormatter(ContextFormatter("%(levelname)s %(name)s: %(message)s"))
    logger = logging.getLogger("django.request")
    logger.addHandler(handler)
    try:
        response = client.get(f"/admin/blog/article/{article.pk}/index-state/")
    finally:
        logger.removeHandler(handler)

    assert response.status_code == 403
    lines = stream.getvalue().splitlines()
    assert lines == [
        f"WARNING django.request: Forbidden (Permission denied): "
        f"/admin/blog/article/{article.pk}/index-state/"
    ]
