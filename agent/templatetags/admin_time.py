"""Times in the admin: "just now", durations and timestamps written as the lists write them."""

from datetime import datetime, timedelta

from django import template
from django.utils import timezone

from agent.charts import format_ms
from docent.admin_dates import short_date, short_datetime

register = template.Library()

# timesince counts whole minutes, so a question asked seconds ago read "0 minutes ago".
JUST_NOW = timedelta(minutes=1)


@register.filter
def just_now(value: datetime | None) -> bool:
    """True under a minute ago (or a little ahead, from a clock that runs fast)."""
    return value is not None and timezone.now() - value < JUST_NOW


# The transcript wrote one turn's times three ways ("54 ms", "0.05 s", "35.5 ms") and its dates
# as "Dec. 4, 2026, 2:33 a.m." beside lists reading "Dec 4, 02:33"; these are the lists' forms.
@register.filter
def ms(value: float | None) -> str:
    """A duration in milliseconds as the lists and the dashboard show it: '38.5 ms', '1.24 s'."""
    return format_ms(value)


@register.filter
def admin_datetime(value: datetime | None) -> str:
    """A timestamp as the article list shows it: 'Dec 4 2026, 14:05' ('2026年12月4日 14:05')."""
    return short_datetime(value)


@register.filter
def admin_date(value) -> str:
    """A date as the lists write it: 'Dec 4 2026' ('2026年12月4日'); the dashboard's period read
    "Nov. 5, 2026" beside lists reading "Dec 4 2026, 14:05"."""
    return short_date(value)
