import pytest
from django.db import connection

from blog import parallel, search, search_fetch
from blog.models import Chunk
from blog.search import article_search
from tests.blog.test_search import VectorBook, titles, unit

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


@pytest.fixture
def bilingual(make_article, add_chunk):
    """An English and a Chinese article near the query: two nearest lists, en and zh."""
    english = add_chunk(make_article(title="Index"), "Tuning the pgvector index.", unit((0, 1.0)))
    chinese = add_chunk(make_article(title="Zh"), "调整 pgvector 索引。", unit((0, 0.9), (1, 0.4)))
    other = add_chunk(make_article(title="Bread"), "Baking bread at home.", unit((1, 1.0)))
    Chunk.objects.filter(pk__in=[english.pk, other.pk]).update(language="en")
    Chunk.objects.filter(pk=chinese.pk).update(language="zh")
    book = VectorBook({"pgvector index": unit((0, 1.0))})
    yield {"query": "pgvector index", "limit": 5, "embedder": book, "min_relevance": 0}
    parallel.close()


def test_the_later_languages_lists_on_their_own_side_connection_give_the_same_hits(
    bilingual, settings, monkeypatch
):
    fetched = []
    lists_fetch = search_fetch.lists_fetch

    def recorded(**kwargs):
        fetched.append(lists_fetch(**kwargs))
        return fetched[-1]

    monkeypatch.setattr(search_fetch, "lists_fetch", recorded)

    serial, side_by_side = serial_and_parallel(bilingual, settings)

    assert [hit.as_dict() for hit in side_by_side] == [hit.as_dict() for hit in serial]
    assert titles(serial) == ["Index", "Zh", "Bread"]
    here, beside = fetched
    assert not here.vector_on_side and not here.text_on_side
    assert beside.vector_on_side and beside.text_on_side
    assert here.vector == beside.vector and [len(rows) for rows in beside.vector] == [2, 1]
    assert len(side_backends()) == 2  # one for the text, one for the Chinese list, both kept


def test_the_side_vector_statement_runs_after_its_own_hnsw_settings(ask, settings):
    settings.SEARCH_EF_SEARCH = 33
    shows = (
        "SELECT 1 AS list, current_setting('hnsw.ef_search') AS ef, "
        "current_setting('hnsw.iterative_scan') AS scan, pg_backend_pid() AS pid",
        {},
    )

    fetched = search_fetch.lists_fetch(
        lexical="index", vector=None, k=20, lists=2, text=None, side=True, vector_beside=shows
    )

    (row,) = fetched.vector[1]
    assert fetched.vector_on_side and fetched.vector[0] == []
    assert (row["ef"], row["scan"]) == ("33", "strict_order")  # SET LOCAL on that connection
    assert row["pid"] in side_backends()
    with connection.cursor() as cursor:  # and only for its own transaction
        cursor.execute("SELECT current_setting('hnsw.ef_search')")
        assert cursor.fetchone()[0] != "33"


def test_killed_side_connections_fall_back_to_the_searchs_own_connection(bilingual, settings):
    serial, _ = serial_and_parallel(bilingual, settings)
    killed = side_backends()
    assert len(killed) == 2
    with connection.cursor() as cursor:
        for pid in killed:
            cursor.execute("SELECT pg_terminate_backend(%s, 5000)", [pid])

    after = article_search(**bilingual)  # both idle side connections are dead

    assert [hit.as_dict() for hit in after] == [hit.as_dict() for hit in serial]
    assert not set(killed) & set(side_backends())
    assert article_search(**bilingual) == serial


def test_no_side_connection_runs_every_list_here(bilingual, settings, monkeypatch, tmp_path):
    serial, _ = serial_and_parallel(bilingual, settings)
    before = set(side_backends())
    parallel.close()
    monkeypatch.setitem(connection.settings_dict, "HOST", str(tmp_path))
    monkeypatch.setitem(connection.settings_dict, "PORT", "5432")

    refused = article_search(**bilingual)

    assert [hit.as_dict() for hit in refused] == [hit.as_dict() for hit in serial]
    assert set(side_backends()) <= before
