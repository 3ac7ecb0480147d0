import math

import pytest
from django.db import connection

from blog.chunking import query_terms
from blog.relevance import vocabulary
from blog.search import article_search
from blog.spelling import SHORT_STOP_WORDS, _rare_word, corrected, stem, typo_fixes
from tests.blog.test_search import VectorBook, add_chunk, demo_index, unit  # noqa: F401

pytestmark = pytest.mark.django_db

ARTICLE = (
    "The difference between streaming and waiting is latency. Retrieval finds the passage; "
    "the difference shows in the tokens. Streaming retrieval of tokens keeps latency low."
)


@pytest.fixture
def frequency(make_article, add_chunk):  # noqa: F811
    article = make_article(title="Streaming")
    add_chunk(article, ARTICLE, unit((0, 1.0)))
    add_chunk(article, ARTICLE, unit((0, 1.0)), ordinal=1)  # every word in two chunks
    return vocabulary.current().frequency


def test_a_slip_becomes_the_word_the_blog_writes(frequency):
    assert corrected(["diference", "retreival", "tokns"], frequency) == [
        "difference",
        "retrieval",
        "tokens",
    ]
    assert corrected(["latancy"], frequency) == ["latency"]


def test_a_short_slip_of_a_stop_word_is_dropped_like_one(frequency):
    assert corrected(["teh", "hte", "streaming"], frequency) == ["streaming"]


def test_names_and_rare_words_stay_as_written(frequency):
    """A name one edit from a blog word is still a word the blog never uses: the bar must
    see it. "shard" is a word ("hard" is one edit away, by its first letter), "jit" a name
    ("it" is one edit away), "jaeger" and "pinecone" are in the large word list."""
    terms = ["shard", "jit", "ttl", "jaeger", "pinecone", "streaming"]

    assert corrected(terms, frequency) == terms


def test_a_four_letter_slip_is_a_dropped_or_swapped_letter():
    """ "limt", "tokn", "tsak" are fast typing; a changed letter ("tekn") or a three-letter
    word ("tsk") is as likely a name, and stays as written."""
    frequency = {"limit": 3, "token": 4, "task": 2}

    assert corrected(["limt", "tokn", "tsak"], frequency) == ["limit", "token", "task"]
    assert corrected(["tekn", "tsk"], frequency) == ["tekn", "tsk"]


def test_a_word_of_its_own_near_a_blog_word_stays_as_written():
    """ "parsec" is one letter from "parse" and in the large list (1.95), and "parse" is not a
    hundred times as common (2.98): it is meant. "serach" (1.2) is a slip of "search" (5.0)."""
    frequency = {"pars": 3, "search": 3, "grep": 2}

    assert corrected(["parsec", "grpc"], frequency) == ["parsec", "grpc"]
    assert typo_fixes(["parsec", "serach", "teh"], frequency) == {"serach": "search", "teh": ""}


def test_the_search_says_what_it_read_a_typo_as(make_article, add_chunk):  # noqa: F811
    article = make_article(title="Streaming")
    add_chunk(article, ARTICLE, unit((0, 1.0)))
    add_chunk(article, ARTICLE, unit((0, 1.0)), ordinal=1)
    typed = "how does retreival keep latancy low?"
    book = VectorBook({typed: unit((0, 0.9), (1, math.sqrt(1 - 0.9**2)))})

    (hit,) = article_search(query=typed, embedder=book, min_relevance=0)

    read_as = {"retreival": "retrieval", "latancy": "latency"}
    assert hit.read_as == read_as
    assert hit.as_tool()["read_as"] == read_as


def test_a_word_the_blog_writes_is_not_looked_up_in_the_large_list():
    """The large list costs ~30 MB to read: a blog's own names ("pgvector") must not read it."""
    misses = _rare_word.cache_info().misses

    assert corrected(["pgvector", "websockets"], {"pgvector": 3, "websocket": 2}) == [
        "pgvector",
        "websockets",
    ]
    assert _rare_word.cache_info().misses == misses


def test_only_the_first_few_unknown_words_are_looked_at(frequency):
    """Each costs a few hundred variants to stem: a query of made-up words must not buy
    seconds of database time."""
    made_up = ["qzxwvk", "pqzrtm", "xkcdqz", "zzqwpt"]
    terms = ["diference", *made_up, "retreival"]

    assert corrected(terms, frequency) == ["difference", *made_up, "retreival"]


def test_a_question_with_typos_finds_what_it_finds_spelled_right(make_article, add_chunk):  # noqa: F811
    article = make_article(title="Streaming")
    add_chunk(article, ARTICLE, unit((0, 1.0)))
    add_chunk(article, ARTICLE, unit((0, 1.0)), ordinal=1)
    typed = "whats teh diference between streaming and retreival?"
    spelled = "what's the difference between streaming and retrieval?"
    near = unit((0, 0.88), (1, math.sqrt(1 - 0.88**2)))
    book = VectorBook({typed: near, spelled: near})

    (hit,) = article_search(query=typed, embedder=book, min_relevance=0)
    (same,) = article_search(query=spelled, embedder=book, min_relevance=0)

    assert (hit.known, hit.coverage) == (same.known, same.coverage) == (1.0, 1.0)
    assert hit.relevance == pytest.approx(same.relevance)


def test_how_a_reader_asks_is_not_what_they_ask_about():
    assert query_terms("Tell me about HNSW pls") == ["me", "about", "hnsw"]
    assert query_terms("Please explain RRF, thanks!") == ["rrf"]


def test_the_demo_blog_answers_a_question_with_typos_and_a_chatty_frame(demo_index):  # noqa: F811
    """Both were declined: "teh" and "diference" read as words the blog never uses, and
    "tell" (twice in the blog) outranked "HNSW" in the prompts article."""
    typed = article_search(
        query="whats teh diference between sse and websockets", embedder=demo_index
    )
    chatty = article_search(query="tell me about the step limit pls", embedder=demo_index)

    assert typed[0].url == "/articles/streaming-tokens-to-the-browser/"
    assert chatty[0].url == "/articles/why-step-limits-matter/"


def test_the_python_stemmer_spells_lexemes_as_the_index_does(demo_index):  # noqa: F811
    """Typos are judged by the Python stemmer against the index's lexemes: the two must agree
    on the words the blog writes. They are the same algorithm in two releases: of the demo's
    1,719 words three differ ("university" univers/universiti, "paste", "internals"), where a
    slip one edit from them may go uncorrected."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT DISTINCT word FROM blog_chunk, regexp_split_to_table(lower(text), '[^a-z]+') "
            "AS word WHERE length(word) > 2"
        )
        words = [row[0] for row in cursor.fetchall()]
        cursor.execute(
            "SELECT word, ts_lexize('english_stem', word) FROM unnest(%s::text[]) AS word", [words]
        )
        lexemes = dict(cursor.fetchall())

    differ = [w for w in words if lexemes[w] and lexemes[w] != [stem(w)]]

    assert len(words) > 1000 and len(differ) <= len(words) // 200, differ


def test_the_short_stop_words_are_postgresql_s():
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT word FROM unnest(%s::text[]) AS word "
            "WHERE ts_lexize('english_stem', word) <> '{}'",
            [sorted(SHORT_STOP_WORDS)],
        )
        assert cursor.fetchall() == []
