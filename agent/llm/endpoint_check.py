"""One look at the model endpoint when the site starts: is the key taken, is the model there?

An operator who set a wrong key, URL or model name learned it only when a reader asked and was
told the assistant wasn't set up right: the start said nothing about the model at all. The
endpoint's own list of models (`GET /models`, which OpenAI, Ollama, vLLM, llama.cpp and LiteLLM
all serve) answers all three questions without spending a token.
"""

from __future__ import annotations

from dataclasses import dataclass

import openai

SHOWN_MODELS = 5  # of the endpoint's list, in the line that says the model is not on it


@dataclass(frozen=True)
class EndpointCheck:
    """What the endpoint said: `problem` is "" (the model is listed), "key", "unreachable",
    "model" (not listed), "unlisted" (the endpoint keeps no list) or "other"."""

    problem: str
    detail: str = ""  # the listed models, or the endpoint's error
    models: tuple[str, ...] = ()


def endpoint_check(
    *, base_url: str | None, api_key: str | None, model: str, timeout: float
) -> EndpointCheck:
    """Ask the endpoint for its models, once, within `timeout` seconds.

    Args:
        base_url: OPENAI_BASE_URL (None: OpenAI's).
        api_key: OPENAI_API_KEY (None: a placeholder, as the chat's client sends).
        model: AGENT_MODEL.
        timeout: seconds for the whole call; nothing is retried.
    Returns:
        The check's outcome; never raises for the endpoint's failures.
    """
    client = openai.OpenAI(
        base_url=base_url or None,
        api_key=api_key or "not-needed",
        timeout=openai.Timeout(timeout, connect=min(timeout, 5.0)),
        max_retries=0,
    )
    try:
        listed = tuple(sorted(entry.id for entry in client.models.list()))
    except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
        return EndpointCheck("key", f"HTTP {exc.status_code}")
    except openai.NotFoundError:
        return EndpointCheck("unlisted")
    except openai.APIConnectionError as exc:  # refused, unknown host, timed out
        return EndpointCheck("unreachable", str(exc.__cause__ or exc))
    except (openai.APIError, ValueError) as exc:  # a 5xx, or an answer that is not a list
        return EndpointCheck("other", str(exc))
    finally:
        client.close()
    if model not in listed:
        return EndpointCheck("model", ", ".join(listed[:SHOWN_MODELS]), listed)
    return EndpointCheck("", models=listed)
