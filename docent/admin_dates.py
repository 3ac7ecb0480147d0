"""The admin's one short form of a timestamp (and of a date), shared by its lists, the
transcript, the article form and the dashboard."""

from django.utils.formats import date_format
from django.utils.timezone import localtime
from django.utils.translation import pgettext


def short_datetime(value) -> str:
    """A timestamp as 'Nov 30 2026, 14:05' ('2026年11月30日 14:05') in the current time zone;
    '—' when unset."""
    short = pgettext("a short date and time in admin lists", "M j Y, H:i")
    return date_format(localtime(value), short) if value else "—"


def short_date(value) -> str:
    """A date as 'Nov 30 2026' ('2026年11月30日'): short_datetime without the time."""
    short = pgettext("a short date in admin lists", "M j Y")
    return date_format(value, short) if value else "—"
