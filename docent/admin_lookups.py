"""Changelist filters from the URL that Python or PostgreSQL cannot take end as "?e=1".

The admin turns any query parameter naming a field lookup into a filter, but only checks it
when the query runs: `?created_at__year=99999` raised ValueError ("year 99999 is out of
range") while counting the rows, a 500 instead of the admin's own "invalid lookup" page.
"""

from django.contrib.admin.options import IncorrectLookupParameters
from django.db import DataError


class BoundedLookups:
    """A ModelAdmin mixin: a changelist whose filters fail to build or run is refused politely."""

    def get_changelist_instance(self, request):
        try:
            return super().get_changelist_instance(request)
        except (ValueError, OverflowError, DataError) as exc:
            # changelist_view answers IncorrectLookupParameters with a redirect to "?e=1".
            raise IncorrectLookupParameters(exc) from exc
