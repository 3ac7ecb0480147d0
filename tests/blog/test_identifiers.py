"""Underscored names ("ef_search") count for an article only where it writes them."""

import pytest

from blog.identifiers import MAX_NAMES, name_parts, written_parts
from blog.search import article_search
from tests.blog.test_search import VectorBook, add_chunk, unit  # noqa: F401

pytestmark = pytest.mark.django_db


def test_a_names_parts_are_the_lexemes_only_it_gives():
    lexemes = ["good", "valu", "ef", "search"]

    assert name_parts("What's a good value for ef_search?", lexemes) == {
        "ef_search": frozenset({"ef", "search"})
    }
    # "search" is said on its own too: only "ef" is the name's.
    assert name_parts("How do I search faster with ef_search?", lexemes) == {
        "ef_search": frozenset({"ef"})
    }
    assert name_parts("What does AGENT_TOOL_TIMEOUT do?", ["agent", "tool", "timeout"]) == {
        "agent_tool_timeout": frozenset({"agent", "tool", "timeout"})
    }
    assert name_parts("What is a good value?", lexemes) == {}  # no name
    assert name_parts("Is asyncio.create_task safe?", ["asyncio", "creat", "task"]) == {}
    many = " ".join(f"a{n}_b{n}" for n in range(MAX_NAMES + 3))
    assert len(name_parts(many, [f"a{n}" for n in range(10)])) == MAX_NAMES


def test_an_article_that_never_writes_the_name_loses_its_parts():
    names = {"ef_search": frozenset({"ef", "search"})}
    matched = {"good", "search"}

    assert written_parts(matched, ["Fusion: search twice, merge."], names) == {"good"}
    assert written_parts(matched, ["Raise `ef_search` for recall."], names) == matched
    assert written_parts(matched, ["Raise EF_SEARCH."], names) == matched  # as any case writes it


def test_an_article_sharing_only_a_names_parts_covers_none_of_it(
    make_article,
    add_chunk,  # noqa: F811
):
    # The fusion article writes "search" on every line and never "ef_search": split at its
    # underscore, the name's "search" covered half the question there.
    fusion = make_article(title="Fusion", slug="fusion")
    add_chunk(fusion, "Search twice and merge the two lists.", unit((0, 1.0)))
    hnsw = make_article(title="Indexes", slug="indexes")
    add_chunk(hnsw, "Raise ef_search for better recall.", unit((0, 1.0)))
    question, typed = "What is ef_search?", "What is ef_serach?"
    book = VectorBook({question: unit((0, 1.0)), typed: unit((0, 1.0))})

    hits = {hit.url: hit for hit in article_search(query=question, embedder=book, min_relevance=0)}
    # A name typed with a slip is the name the search reads it as (k-05's "ef_serach").
    slip = {hit.url: hit for hit in article_search(query=typed, embedder=book, min_relevance=0)}

    assert hits["/articles/fusion/"].coverage == 0.0
    assert hits["/articles/indexes/"].coverage == 1.0
    assert list(hits)[0] == "/articles/indexes/"
    assert slip["/articles/indexes/"].read_as == {"serach": "search"}
    assert slip["/articles/indexes/"].coverage == 1.0
