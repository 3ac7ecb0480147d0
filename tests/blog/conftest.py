"""Fixtures shared by the blog tests."""

from tests.blog.test_search import add_chunk  # noqa: F401 (a fixture, for test_relevance)
