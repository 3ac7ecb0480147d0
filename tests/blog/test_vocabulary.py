import pytest
from django.db import connection

from blog.models import Chunk
from blog.relevance import change_key_sql, vocabulary
from tests.blog.test_search import unit

# The delete counter the vocabulary watches moves when the deleting transaction has committed.
pytestmark = pytest.mark.django_db(transaction=True)


def test_deleting_chunks_rebuilds_the_vocabulary_without_a_new_chunk(make_article, add_chunk):
    gone = add_chunk(make_article(title="Zeppelins"), "Zeppelin ballast.", unit((0, 1.0)))
    add_chunk(make_article(title="Kites"), "Kites and wind.", unit((1, 1.0)))  # the newest id
    assert "zeppelin" in vocabulary.current().frequency

    Chunk.objects.filter(pk=gone.pk).delete()  # as unpublishing does; the newest id stays
    with connection.cursor() as cursor:
        # Report this session's statistics now (at the end of this statement), not seconds later.
        cursor.execute("SELECT pg_stat_force_next_flush()")

    rebuilt = vocabulary.current()
    assert "zeppelin" not in rebuilt.frequency and "kite" in rebuilt.frequency
    assert rebuilt.chunks == 1


def test_an_unchanged_index_is_not_read_again(make_article, add_chunk, django_assert_num_queries):
    add_chunk(make_article(title="Kites"), "Kites and wind.", unit((1, 1.0)))
    vocabulary.current()

    with django_assert_num_queries(1):  # the change key only; no ts_stat scan
        vocabulary.current()


def test_the_change_key_counts_the_visible_articles_from_an_index_alone(make_article):
    # Every search sends the change key; at 10,000 articles scanning the table for the count
    # cost 1.67 ms of the server's CPU, reading the partial index alone 0.95 ms. The planner
    # would pick the scan for this test's few rows, so the scan is priced out here.
    make_article(title="Kites")
    with connection.cursor() as cursor:
        cursor.execute("VACUUM blog_article")  # all-visible pages, as autovacuum leaves them
        cursor.execute("SET enable_seqscan = off")
        try:
            cursor.execute("EXPLAIN " + change_key_sql())
            plan = "\n".join(row[0] for row in cursor.fetchall())
        finally:
            cursor.execute("RESET enable_seqscan")

    assert "Index Only Scan using article_visible_idx on blog_article" in plan, plan
