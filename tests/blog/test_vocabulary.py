import time

import pytest
from django.db import connection

from blog.models import Article, Chunk
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


def test_the_change_key_reads_the_next_scheduled_date_from_an_index(make_article):
    # Every search sends the change key. It counted the visible articles (0.6-0.95 ms of the
    # server's CPU at 10,000 articles); now it reads one counter row and the next scheduled
    # post's date, one probe of the partial index. The planner would scan this test's few
    # rows, so the scan is priced out here.
    make_article(title="Kites")
    with connection.cursor() as cursor:
        cursor.execute("SET enable_seqscan = off")
        try:
            cursor.execute("EXPLAIN " + change_key_sql())
            plan = "\n".join(row[0] for row in cursor.fetchall())
        finally:
            cursor.execute("RESET enable_seqscan")

    assert "using article_visible_idx on blog_article" in plan, plan
    assert "count" not in plan.lower() and "Aggregate" not in plan, plan


def _visibility_changes() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT changes FROM blog_visibility_changes")
        return cursor.fetchone()[0]


def test_unpublishing_hides_the_words_at_once_though_no_chunk_changed(make_article, add_chunk):
    gone = make_article(title="Zeppelins")
    add_chunk(gone, "Zeppelin ballast.", unit((0, 1.0)))
    add_chunk(make_article(title="Kites"), "Kites and wind.", unit((1, 1.0)))
    assert "zeppelin" in vocabulary.current().frequency

    # Withdrawn by a bare update: no chunk is written or deleted, no statistics reported.
    Article.objects.filter(pk=gone.pk).update(status=Article.Status.DRAFT)
    assert "zeppelin" not in vocabulary.current().frequency

    Article.objects.filter(pk=gone.pk).update(status=Article.Status.PUBLISHED)
    assert "zeppelin" in vocabulary.current().frequency


def test_publishing_in_the_admin_s_way_makes_the_words_known(make_article, add_chunk):
    draft = make_article(title="Zeppelins", status=Article.Status.DRAFT)
    add_chunk(draft, "Zeppelin ballast.", unit((0, 1.0)))
    assert "zeppelin" not in vocabulary.current().frequency

    draft.status = Article.Status.PUBLISHED
    draft.save()  # the admin's save: every column written
    assert "zeppelin" in vocabulary.current().frequency


def test_a_scheduled_post_s_words_are_known_once_the_clock_passes_its_date(make_article, add_chunk):
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement_timestamp() + interval '1.5 seconds'")
        date = cursor.fetchone()[0]
    later = make_article(title="Zeppelins", published_at=date)
    add_chunk(later, "Zeppelin ballast.", unit((0, 1.0)))
    assert "zeppelin" not in vocabulary.current().frequency
    writes = _visibility_changes()

    while True:  # nothing is written meanwhile: only the database's clock moves
        with connection.cursor() as cursor:
            cursor.execute("SELECT statement_timestamp() > %s", [date])
            if cursor.fetchone()[0]:
                break
        time.sleep(0.2)

    assert _visibility_changes() == writes
    assert "zeppelin" in vocabulary.current().frequency


def test_writes_that_change_no_article_s_visibility_leave_the_vocabulary_be(
    make_article, add_chunk, django_assert_num_queries
):
    article = make_article(title="Kites")
    add_chunk(article, "Kites and wind.", unit((1, 1.0)))
    vocabulary.current()
    writes = _visibility_changes()

    Article.objects.filter(pk=article.pk).update(title="Kites, again")  # as reindexing writes
    make_article(title="Draft", status=Article.Status.DRAFT)
    Article.objects.filter(status=Article.Status.DRAFT).delete()

    assert _visibility_changes() == writes
    with django_assert_num_queries(1):  # the change key only; no ts_stat scan
        vocabulary.current()


def test_loading_many_articles_in_one_statement_moves_the_counter_once(db):
    writes = _visibility_changes()
    Article.objects.bulk_create(
        Article(title=f"A{i}", slug=f"a{i}", body="b", status=Article.Status.PUBLISHED)
        for i in range(50)
    )
    assert _visibility_changes() == writes + 1
