import math

import pytest

from blog.relevance import vocabulary
from blog.search import article_search
from blog.word_forms import form_fixes
from tests.blog.test_search import VectorBook, add_chunk, demo_index, unit  # noqa: F401

# The English stemmer's lexemes of the blog's words, each in two chunks.
FREQUENCY = {"fusion": 8, "final": 11, "decis": 2, "use": 40, "list": 9, "candid": 5}


def test_another_form_of_a_word_the_blog_writes_is_read_as_the_blogs():
    """The stemmer joins "fused" and "fusing" but not "fusion"; nor "finalised" and "final"
    (it does join "finalized" and "final")."""
    terms = ["fusing", "fused", "finalised", "decide"]

    assert form_fixes(terms, FREQUENCY) == {
        "fusing": "fusion",
        "fused": "fusion",
        "finalised": "final",
        "decide": "decision",
    }


def test_a_word_the_blog_writes_or_no_form_of_it_stays_as_written():
    """A word the blog uses as typed is left alone, and so is one with no form the blog
    writes in two chunks or more ("kubernetes"), a short base ("used": "us" is no word), a
    form the blog writes once, and a name with digits."""
    frequency = {**FREQUENCY, "extens": 1}

    terms = ["fusion", "finalized", "kubernetes", "extend", "used", "e5"]

    assert form_fixes(terms, frequency) == {}


ARTICLE = (
    "Reciprocal rank fusion merges two ranked lists. Take 20 to 50 candidates from each list "
    "before fusion; the fusion keeps the best two chunks per article."
)


@pytest.mark.django_db
def test_the_search_reads_a_form_as_the_blogs_word_and_says_so(make_article, add_chunk):  # noqa: F811
    """Read as typed, "fusing" is a word the blog never uses: `known` falls and the article
    does not cover it. Read as "fusion", the question is the blog's in every word."""
    article = make_article(title="Hybrid search")
    add_chunk(article, ARTICLE, unit((0, 1.0)))
    add_chunk(article, ARTICLE, unit((0, 1.0)), ordinal=1)
    typed = "candidates to take before fusing the lists?"
    book = VectorBook({typed: unit((0, 0.9), (1, math.sqrt(1 - 0.9**2)))})
    vocabulary.invalidate()

    (hit,) = article_search(query=typed, embedder=book, min_relevance=0)

    assert hit.read_as == {"fusing": "fusion"}
    assert hit.known == 1.0
    assert hit.coverage == 1.0
