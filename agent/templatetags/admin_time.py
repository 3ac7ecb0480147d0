"""Relative times in the admin: "just now" for what happened under a minute ago."""

from datetime import datetime, timedelta

from django import template
from django.utils import timezone

register = template.Library()

# timesince counts whole minutes, so a question asked seconds ago read "0 minutes ago".
JUST_NOW = timedelta(minutes=1)


@register.filter
def just_now(value: datetime | None) -> bool:
    """True under a minute ago (or a little ahead, from a clock that runs fast)."""
    return value is not None and timezone.now() - value < JUST_NOW
