"""Metrics read from the database at scrape time: the same answer from every worker."""

from collections.abc import Iterator

from django.db import DatabaseError
from django.db.models import Min
from django.utils import timezone
from prometheus_client import CollectorRegistry
from prometheus_client.core import GaugeMetricFamily


class IndexLagCollector:
    """How far the search index is behind the published articles.

    Read from the articles themselves rather than counted by the indexing worker, so it is
    right whichever process (or queue) does the indexing, and after any restart.
    """

    def collect(self) -> Iterator[GaugeMetricFamily]:
        from blog.selectors import article_list_unindexed

        stale = article_list_unindexed()  # the panel's rule, so both say the same
        try:
            oldest = stale.aggregate(oldest=Min("updated_at"))["oldest"]
            pending = stale.count()
        except DatabaseError:
            return  # /metrics still answers with every other metric
        lag = (timezone.now() - oldest).total_seconds() if oldest else 0.0
        yield GaugeMetricFamily(
            "docent_indexing_lag_seconds",
            "Age of the oldest published change not yet in the search index (0: up to date).",
            value=max(lag, 0.0),
        )
        yield GaugeMetricFamily(
            "docent_indexing_pending_articles",
            "Published articles whose search index is missing or older than the article.",
            value=pending,
        )

    @classmethod
    def registry(cls) -> CollectorRegistry:
        registry = CollectorRegistry(auto_describe=False)
        registry.register(cls())
        return registry
