"""Walk 23, the views: what a reader's header offers, and what the admin's does."""

import pytest

pytestmark = pytest.mark.django_db


def test_the_readers_header_has_no_api_link(client, make_article):
    # "API" sat between Search and the language switch on every page: a reader clicking it
    # landed on Swagger's JSON schema explorer, which is for whoever builds on the blog.
    make_article(title="Hello", slug="hello")
    for path in ("/", "/articles/hello/", "/search/?q=hello"):
        page = client.get(path).content.decode()
        assert "/api/docs" not in page, path


def test_the_admin_links_the_api_docs(admin_client):
    page = admin_client.get("/admin/").content.decode()

    assert '<a href="/api/docs">API</a>' in page
