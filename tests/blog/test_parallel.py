import pytest
from django.db import connection

from blog import parallel, search, search_fetch
from blog.search import article_search
from tests.blog.test_search import VectorBook, unit

pytestmark = pytest.mark.django_db(transaction=True)  # a side connection sees the rows


@pytest.fixture
def ask(make_article, add_chunk, settings):
    add_chunk(make_article(title="Good"), "Tuning the pgvector index for recall.", unit((0, 1.0)))
    add_chunk(make_article(title="Near"), "Recall of an index.", unit((0, 0.8), (1, 0.6)))
    add_chunk(make_article(title="Off"), "Baking bread at home.", unit((1, 1.0)))
    book = VectorBook({"pgvector index recall": unit((0, 1.0))})
    yield {"query": "pgvector index recall", "limit": 5, "embedder": book, "min_relevance": 0}
    parallel.close()


def serial_and_parallel(ask, settings):
    settings.SEARCH_PARALLEL = False
    serial = article_search(**ask)
    settings.SEARCH_PARALLEL = True
    return serial, article_search(**ask)


def side_backends() -> list[int]:
    """Backends on this database other than this thread's own connection."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid() AND backend_type = 'client backend'"
        )
        return [row[0] for row in cursor.fetchall()]


def test_the_text_half_on_a_side_connection_gives_the_same_hits(ask, settings):
    serial, side_by_side = serial_and_parallel(ask, settings)

    assert side_by_side == serial and len(serial) == 3
    assert len(side_backends()) == 1  # the side connection, kept for the next search


def test_the_text_statement_runs_on_the_side_connection(ask):
    statement = search._text_statement(["pgvector", "index"], 20, unit((0, 1.0)))

    here = search_fetch.lists_fetch(
        lexical="pgvector index", vector=None, k=20, lists=1, text=statement, side=False
    )
    beside = search_fetch.lists_fetch(
        lexical="pgvector index", vector=None, k=20, lists=1, text=statement, side=True
    )

    assert beside.text_on_side and not here.text_on_side
    two, more = here.text  # "Good" holds both terms, "Near" only one
    assert beside.text == here.text and (len(two), len(more)) == (1, 2)


def test_a_killed_side_connection_falls_back_to_the_searchs_own_connection(ask, settings):
    serial, _ = serial_and_parallel(ask, settings)
    (killed,) = side_backends()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(%s, 5000)", [killed])

    after = article_search(**ask)  # the idle side connection is dead: its statement fails

    assert after == serial
    assert killed not in side_backends()  # the dead one was dropped, not kept
    assert article_search(**ask) == serial  # and the next search opens a new one


def test_no_side_connection_to_be_had_runs_both_halves_here(ask, settings, monkeypatch, tmp_path):
    serial, _ = serial_and_parallel(ask, settings)
    before = set(side_backends())  # the side connection just used (and any other thread's)
    parallel.close()
    # New connections now look for the server's socket in an empty directory and fail; this
    # thread's own connection is already open.
    monkeypatch.setitem(connection.settings_dict, "HOST", str(tmp_path))
    monkeypatch.setitem(connection.settings_dict, "PORT", "5432")

    refused = article_search(**ask)

    assert refused == serial
    # No connection was opened. (A closed side connection's backend exits on its own time:
    # on a loaded machine CI once still listed it here, so "none at all" was a race.)
    assert set(side_backends()) <= before


def test_a_side_connection_carries_the_vector_adapters_for_all_its_cursors(ask, settings):
    # Registered on each cursor they cost two new adapter classes per search cursor.
    from pgvector import Vector
    from psycopg.adapt import PyFormat

    side = parallel.take()
    try:
        assert side.adapters.get_dumper(Vector, PyFormat.BINARY) is not None
    finally:
        parallel.give_back(side)
    serial, side_by_side = serial_and_parallel(ask, settings)  # and the text half still binds it
    assert [hit.as_dict() for hit in side_by_side] == [hit.as_dict() for hit in serial]
