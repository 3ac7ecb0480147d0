"""Agent exceptions meet event codes in one place."""

import pytest

from agent import events
from agent.exceptions import AgentError, BadRequest, ModelError, ToolFailure, ToolNotFound


@pytest.mark.parametrize(
    ("exc", "code"),
    [
        (ModelError("The model endpoint failed."), events.MODEL_ERROR),
        (BadRequest("The message is empty."), events.BAD_REQUEST),
        (ValueError("a bug"), events.INTERNAL),
    ],
)
def test_each_exception_maps_to_its_event_code(exc, code):
    assert events.error_code(exc) == code


def test_error_from_uses_the_visitor_safe_message():
    assert events.error_from(BadRequest("turn must be 1 or more.")) == {
        "type": "error",
        "code": "bad_request",
        "message": "turn must be 1 or more.",
        "articles": [],
    }


def test_one_hierarchy():
    for kind in (ModelError, BadRequest, ToolNotFound, ToolFailure):
        assert issubclass(kind, AgentError)


def test_done_says_whether_the_turn_answered():
    assert events.done("c", 2, {}, answered=True)["answered"] is True
    assert events.done("c", 2, {})["answered"] is False


@pytest.mark.parametrize(
    ("reason", "extra"),
    [("auth", {"reason": "setup"}), ("not_found", {"reason": "setup"}), ("http_4xx", {}),
     ("connection", {}),
     ("timeout", {}), ("http_5xx", {}), ("rate_limited", {})],
)  # fmt: skip
def test_a_model_error_the_sites_settings_caused_is_marked_setup(reason, extra):
    # A wrong key or model name was "isn't responding right now... press Enter to send it
    # again", and every retry met the same refusal.
    event = events.error_from(ModelError("The language model rejected it.", reason))
    assert {k: v for k, v in event.items() if k == "reason"} == extra
