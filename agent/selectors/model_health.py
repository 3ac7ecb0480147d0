"""Whether the model endpoint is failing now, and which setting the operator should check.

A first-time operator who set a wrong key, model name or base URL saw "Error 1" among how
turns ended, and in the transcript "returned an error (HTTP 404)", naming no setting. The
stored error is the adapter's visitor-safe sentence (agent.llm.openai_compat); it is read here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time
from urllib.parse import urlsplit, urlunsplit

from django.conf import settings
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from agent.events import MODEL_ERROR
from agent.models import Turn

OPENAI_DEFAULT = "https://api.openai.com/v1"
# The stored errors of a refusal of the site's settings (a key, a model name: the adapter's
# reasons in agent.events.SETUP_FAILURES), which asking again cannot mend.
_SETUP_ERRORS = re.compile(r"rejected this site’s credentials|\(HTTP 404\)")

# (the stored error's pattern, what to check): %(endpoint)s, %(model)s, %(seconds)s filled in.
_ADVICE: list[tuple[str, str]] = [
    (
        r"rejected this site’s credentials",
        gettext_noop(
            "The endpoint %(endpoint)s refused the API key. Check OPENAI_API_KEY: "
            "it must be a key for this endpoint."
        ),
    ),
    (
        r"\(HTTP 404\)",
        gettext_noop(
            "The endpoint %(endpoint)s has no model named “%(model)s” (HTTP 404). Check "
            "AGENT_MODEL against the endpoint’s list of models, and that OPENAI_BASE_URL "
            "ends in /v1."
        ),
    ),
    (
        r"could not be reached",
        gettext_noop(
            "Nothing answers at %(endpoint)s. Check OPENAI_BASE_URL and that the model server "
            "is running and reachable from this machine."
        ),
    ),
    (
        r"timed out",
        gettext_noop(
            "The model at %(endpoint)s sent nothing for %(seconds)s s (AGENT_MODEL_TIMEOUT). "
            "A slow local model may need a longer timeout or a smaller model."
        ),
    ),
]


@dataclass(frozen=True)
class ModelTrouble:
    """The model's failures since it last answered, the newest first."""

    latest: Turn
    failures: int
    endpoint: str
    advice: str


def model_trouble(*, since: date) -> ModelTrouble | None:
    """The model endpoint's failure, if its newest finished turn since `since` failed with it."""
    start = timezone.make_aware(datetime.combine(since, time.min))
    finished = Turn.objects.filter(offline=False, started_at__gte=start).exclude(status="running")
    latest = finished.order_by("-started_at").first()
    if latest is None or latest.error_code != MODEL_ERROR:
        return None
    answered = finished.exclude(error_code=MODEL_ERROR).order_by("-started_at").first()
    failed = finished.filter(error_code=MODEL_ERROR)
    if answered is not None:
        failed = failed.filter(started_at__gt=answered.started_at)
    endpoint = model_endpoint()
    return ModelTrouble(latest, failed.count(), endpoint, _advice(latest, endpoint))


def turn_failed_setup(*, error_code: str, error: str) -> bool:
    """Whether a saved turn ended on the endpoint refusing the site's settings: the panel says
    the assistant is unavailable, after a reload too, and not that the model is slow."""
    return error_code == MODEL_ERROR and bool(_SETUP_ERRORS.search(error))


def model_endpoint() -> str:
    """The configured base URL without any credentials in it (user:password@host)."""
    url = urlsplit(settings.OPENAI_BASE_URL or OPENAI_DEFAULT)
    host = url.hostname or ""
    netloc = f"{host}:{url.port}" if url.port else host
    return urlunsplit((url.scheme, netloc, url.path, "", ""))


def _advice(turn: Turn, endpoint: str) -> str:
    values = {
        "endpoint": endpoint,
        "model": turn.model,
        "seconds": f"{settings.AGENT_MODEL_TIMEOUT:g}",
    }
    for pattern, advice in _ADVICE:
        if re.search(pattern, turn.error):
            return _(advice) % values
    return _("The model endpoint %(endpoint)s failed: %(error)s") % {**values, "error": turn.error}
