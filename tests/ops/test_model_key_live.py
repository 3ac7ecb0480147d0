"""A rotated key: the model endpoint answers 401 to every call, and the operator is told so."""

import json

import pytest

from testing_support.model_server import error_response
from tests.ops.chat import ask
from tests.ops.prom import scrape, value
from tests.ops.test_incidents_live import MODEL, _server

pytestmark = pytest.mark.django_db(transaction=True)

ENDPOINT_SAYS = "Incorrect API key provided: sk-old...a1b2"


def test_a_rejected_key_is_counted_at_once_and_logged_in_the_endpoints_words(
    model_server, tmp_path
):
    """A 401 is not retried, so no retry line ever quoted the endpoint: the log said only the
    visitor's sentence ("rejected this site's credentials"), not which key or why, and the
    README's only alert for it (DocentModelFailing) waits 5 minutes of failing calls."""
    model_server.enqueue(error_response(401, message=ENDPOINT_SAYS))
    model_server.enqueue(error_response(401, message=ENDPOINT_SAYS))
    env = {**MODEL, "OPENAI_BASE_URL": model_server.base_url, "LOG_FORMAT": "json"}
    with _server("rotated-key", tmp_path, **env) as server:
        before = scrape(server.url)
        ends = [ask(server.url, question)[-1] for question in ("Hello?", "Anyone?")]
        after = scrape(server.url)
        output = server.output()

    assert [end["code"] for end in ends] == ["model_error", "model_error"]
    assert len(model_server.requests) == 2  # one request a turn: never retried
    # DocentModelKeyRejected: increase(docent_model_errors_total{reason="auth"}[5m]) > 0,
    # by hand over two scrapes.
    auth = "docent_model_errors_total"
    assert value(after, auth, reason="auth") - value(before, auth, reason="auth") == 2
    assert value(after, "docent_model_retries_total", reason="auth") == 0
    lines = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    said = [line for line in lines if line["logger"] == "agent.llm.openai_compat"]
    assert len(said) == 2
    for line in said:
        assert line["level"] == "WARNING" and ENDPOINT_SAYS in line["message"]
        # ...and which setting to check: the reader is told only that the assistant is
        # unavailable (walk 21).
        assert line["message"].endswith(
            "not tried again; check OPENAI_API_KEY (readers are told the assistant is unavailable)"
        )
        assert line["turn_id"] and line["conversation_id"]  # joins the admin transcript
