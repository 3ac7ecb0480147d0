"""The admin's one short form of a timestamp (and of a date), shared by its lists, the
transcript, the article form and the dashboard; and its filters of times seen from now."""

import datetime as dt

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone
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


class FromNowFilter(admin.SimpleListFilter):
    """A list filter of time ranges seen from now, for times that may lie ahead.

    Django's date filter offers "Today", "Past 7 days", "This month", "This year": ranges that
    end now, under none of which a post scheduled for next week, or a job waiting for later,
    appears. A subclass names its `options` and the filter of each at a moment (`ranges`).
    """

    options: list[tuple[str, str]] = []

    def ranges(self, now: dt.datetime) -> dict[str, dict]:
        raise NotImplementedError

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        return self.options

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        ranges = self.ranges(timezone.now())
        return queryset.filter(**ranges[self.value()]) if self.value() in ranges else queryset
