import threading

import pytest

from blog import parallel
from blog.search import article_search
from tests.blog.test_search import VectorBook, unit

pytestmark = pytest.mark.django_db(transaction=True)  # the worker's connection sees the rows


@pytest.fixture
def workers():
    yield
    parallel.close()


def test_the_text_half_on_a_second_connection_gives_the_same_hits(
    make_article, add_chunk, settings, workers
):
    add_chunk(make_article(title="Good"), "Tuning the pgvector index for recall.", unit((0, 1.0)))
    add_chunk(make_article(title="Near"), "Recall of an index.", unit((0, 0.8), (1, 0.6)))
    add_chunk(make_article(title="Off"), "Baking bread at home.", unit((1, 1.0)))
    book = VectorBook({"pgvector index recall": unit((0, 1.0))})
    ask = {"query": "pgvector index recall", "limit": 5, "embedder": book, "min_relevance": 0}

    settings.SEARCH_PARALLEL = False
    serial = article_search(**ask)
    settings.SEARCH_PARALLEL = True
    threads_before = {thread.name for thread in threading.enumerate()}
    side_by_side = article_search(**ask)

    assert side_by_side == serial and len(serial) == 3
    started = {thread.name for thread in threading.enumerate()} - threads_before
    assert any(name.startswith("search-text") for name in started)
