"""The gauges read at scrape time stay cheap as the blog grows."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from ops.collectors import ReindexCollector

pytestmark = pytest.mark.django_db


def _chunks() -> tuple[float, list[str]]:
    with CaptureQueriesContext(connection) as queries:
        families = {family.name: family for family in ReindexCollector().collect()}
    (sample,) = families["docent_index_chunks"].samples
    return sample.value, [query["sql"] for query in queries]


def _counted(sqls: list[str]) -> bool:
    return any("COUNT(*)" in sql.upper() and "blog_chunk" in sql for sql in sqls)


def test_few_chunks_are_counted():
    chunks, sqls = _chunks()
    assert chunks == 0 and _counted(sqls)  # reltuples is -1 (never analyzed) or tiny here


def test_many_chunks_are_read_from_the_planners_estimate():
    # As ANALYZE leaves it for a 250,000-chunk table (the test rolls it back). Counted, every
    # scrape of every process scanned the table: 21.7 ms at 100,000 chunks, 1.4 ms estimated.
    with connection.cursor() as cursor:
        cursor.execute("UPDATE pg_class SET reltuples = 250000 WHERE oid = 'blog_chunk'::regclass")

    chunks, sqls = _chunks()

    assert chunks == 250000
    assert not _counted(sqls)
