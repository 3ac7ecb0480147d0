import math
from datetime import timedelta

import pytest
from django.utils import timezone

from blog.compounds import MAX_COMPOUNDS, compounds, unknown_compounds
from blog.relevance import vocabulary
from blog.search import article_search
from tests.blog.test_search import VectorBook, add_chunk, demo_index, unit  # noqa: F401

pytestmark = pytest.mark.django_db

ARTICLE = "Cross-language retrieval ranks each encoder list. Keep the step limit in the database."


def test_a_question_names_its_hyphenated_words_in_lower_case():
    assert compounds("Is RRF better than a Cross-Encoder, or X-Accel-Buffering?") == [
        "cross-encoder",
        "x-accel-buffering",
    ]
    assert compounds("a 2-step plan, a dangling pre- word, top-5 and e5-small") == [
        "top-5",
        "e5-small",
    ]
    many = " ".join(f"w{n}-x" for n in range(MAX_COMPOUNDS + 3))
    assert compounds(many) == [f"w{n}-x" for n in range(MAX_COMPOUNDS)]


def test_only_a_compound_the_blog_writes_in_no_form_is_unknown(make_article, add_chunk):  # noqa: F811
    add_chunk(make_article(title="Search"), ARTICLE, unit((0, 1.0)))
    frequency = vocabulary.current().frequency

    assert unknown_compounds("Is a cross-encoder better?", frequency) == {
        "cross-encod": ["cross-encoder"]
    }
    assert unknown_compounds("What is cross-language retrieval?", frequency) == {}  # as written
    assert unknown_compounds("How high is the step-limit?", frequency) == {}  # two words in a row
    assert unknown_compounds("Which data-base?", frequency) == {}  # run together
    assert unknown_compounds("Which limit-step?", frequency) != {}  # the words, not in a row


def test_a_compound_the_blog_writes_in_another_form_is_known(make_article, add_chunk):  # noqa: F811
    # The stemmer cuts the verb deeper than its -ing noun: "re-embed" is `re-emb`, the blog's
    # "re-embedding" `re-embed`; the question was counted as asking about an unknown word.
    add_chunk(make_article(title="Models"), "Changing models means re-embedding.", unit((0, 1.0)))
    frequency = vocabulary.current().frequency

    assert unknown_compounds("Do I have to re-embed everything?", frequency) == {}
    # Another word sharing the first part is no form of it.
    assert unknown_compounds("Should I re-rank?", frequency) == {"re-rank": ["re-rank"]}
    # A last part of one or two letters starts too many words to be read as one of them.
    assert unknown_compounds("What about re-e?", frequency) == {"re-e": ["re-e"]}


def test_a_post_scheduled_for_later_does_not_make_a_compound_written(make_article, add_chunk):  # noqa: F811
    # Its chunks are indexed when it is saved; whether it writes "cross encoder" is its secret.
    add_chunk(make_article(title="Search"), ARTICLE, unit((0, 1.0)))
    later = make_article(title="Launch", published_at=timezone.now() + timedelta(days=30))
    add_chunk(later, "Next month: our cross encoder.", unit((0, 1.0)))
    frequency = vocabulary.current().frequency

    assert unknown_compounds("Is a cross-encoder better?", frequency) == {
        "cross-encod": ["cross-encoder"]
    }


def test_a_hyphenated_name_the_blog_never_writes_lowers_known_not_coverage(
    make_article,
    add_chunk,  # noqa: F811
):
    """Split at the hyphen, "cross" and "encoder" are both words the blog uses."""
    add_chunk(make_article(title="Search"), ARTICLE, unit((0, 1.0)))
    asked = "Does retrieval rank with a cross-encoder?"
    written = "Does retrieval rank with cross-language?"
    near = unit((0, 0.88), (1, math.sqrt(1 - 0.88**2)))  # cosine 0.88, as real questions get
    book = VectorBook({asked: near, written: near})  # the vectors cannot tell the two apart

    (hit,) = article_search(query=asked, embedder=book, min_relevance=0)
    (same,) = article_search(query=written, embedder=book, min_relevance=0)

    assert hit.coverage == pytest.approx(1.0)  # no article could hold it: coverage leaves it out
    assert hit.known < 0.8 and same.known == pytest.approx(1.0)
    assert hit.relevance < 0.5 < same.relevance
    assert article_search(query=asked, embedder=book) == []


def test_the_demo_blog_declines_a_name_it_never_writes_beside_one_it_answers(demo_index):  # noqa: F811
    """The demo's RRF article never mentions cross-encoders; it passed the bar on "better"."""
    (hit, *_) = article_search(query="What is RRF?", embedder=demo_index)

    assert hit.url == "/articles/hybrid-search-with-rrf/"
    assert article_search(query="Is RRF better than a cross-encoder?", embedder=demo_index) == []
