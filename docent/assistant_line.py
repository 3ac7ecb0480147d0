"""The start's line about the assistant's model: which one, and whether its endpoint takes it.

`make run` said where the site and the admin were, never which model answered or whether the
endpoint accepted the key, the URL and the model name: an operator found a wrong one only when
a reader was told the assistant wasn't set up right.
"""

from django.conf import settings

from agent.llm.endpoint_check import EndpointCheck, endpoint_check
from agent.runner import offline_mode
from agent.selectors.model_health import model_endpoint

CHECK_SECONDS = 10.0  # a model server on another continent answers its list well within this
DETAIL_CHARS = 160


def assistant_line() -> tuple[str, bool]:
    """The line, and whether it reports a problem (checks the endpoint: up to CHECK_SECONDS)."""
    if offline_mode():
        return (
            "Assistant: the built-in offline model (Quote mode); for a language model set "
            "OPENAI_API_KEY or OPENAI_BASE_URL, and AGENT_MODEL",
            False,
        )
    check = endpoint_check(
        base_url=settings.OPENAI_BASE_URL or None,
        api_key=settings.OPENAI_API_KEY or None,
        model=settings.AGENT_MODEL,
        timeout=CHECK_SECONDS,
    )
    return _said(check, model=settings.AGENT_MODEL, endpoint=model_endpoint()), bool(
        check.problem and check.problem != "unlisted"
    )


def _said(check: EndpointCheck, *, model: str, endpoint: str) -> str:
    detail = check.detail[:DETAIL_CHARS]
    lines = {
        "": f"Assistant: {model} at {endpoint}",
        "unlisted": (
            f"Assistant: {model} at {endpoint} (the endpoint lists no models: the first "
            "question will show whether it answers)"
        ),
        "key": (
            f"Assistant: {endpoint} refused the API key ({detail}): check OPENAI_API_KEY. "
            "Until it is right, readers are told the assistant is unavailable"
        ),
        "unreachable": (
            f"Assistant: nothing answers at {endpoint} ({detail}): check OPENAI_BASE_URL and "
            "that the model server is running"
        ),
        "model": (
            f"Assistant: {endpoint} has no model named “{model}”: check AGENT_MODEL "
            f"(it lists {detail}{', …' if len(check.models) > 5 else ''})"
        ),
    }
    return lines.get(check.problem, f"Assistant: {model} at {endpoint}; the check failed: {detail}")
