import pytest
from django.utils import timezone

from blog.indexing import articles_reindex
from blog.models import Article
from tests.blog.embeddings_server import eight_dimension_backend

pytestmark = pytest.mark.django_db


@pytest.fixture
def articles(make_article):
    airships = make_article(
        title="Airships",
        summary="Lighter than air.",
        body="## Lift\n\nHelium lifts the envelope of an airship.",
        tags=["flight"],
    )
    make_article(title="Boats", body="Hulls float on water.", tags=["sea"])
    make_article(
        title="Secret draft", body="Helium airship envelope plans.", status=Article.Status.DRAFT
    )
    articles_reindex()
    return airships


def test_search_returns_ranked_excerpts(client, articles):
    response = client.get("/api/search", {"q": "helium airship envelope", "limit": 5})

    assert response.status_code == 200
    hits = response.json()
    assert [hit["title"] for hit in hits][:1] == ["Airships"]
    assert "Secret draft" not in [hit["title"] for hit in hits]
    assert {"rank", "article_id", "title", "url", "excerpt", "relevance", "similarity"} <= set(
        hits[0]
    )
    assert hits[0]["rank"] == 1 and hits[0]["url"] == "/articles/airships/"
    assert hits[0]["excerpt"] == "Helium lifts the envelope of an airship."


def test_search_hides_hits_below_the_relevance_bar_unless_all_is_asked(client, articles):
    question = {"q": "kubernetes helm chart rollout", "limit": 5}

    hidden = client.get("/api/search", question).json()
    everything = client.get("/api/search", {**question, "all": "true"}).json()

    assert hidden == []
    assert {hit["title"] for hit in everything} == {"Airships", "Boats"}
    assert all(hit["relevance"] < 0.5 and hit["known"] < 0.5 for hit in everything)
    # The rare word the blog never writes ("helm" and "rollout" are everyday English), with
    # every hit: the question turns on it.
    assert [hit["unknown_words"] for hit in everything] == [["kubernetes"]] * 2


def test_search_validates_its_parameters(client):
    assert client.get("/api/search").status_code == 422
    assert client.get("/api/search", {"q": ""}).status_code == 422
    assert client.get("/api/search", {"q": "x", "limit": 0}).status_code == 422
    assert client.get("/api/search", {"q": "x", "limit": 21}).status_code == 422


def test_search_with_a_mismatched_index_is_a_503_naming_the_fix(client, articles):
    with eight_dimension_backend():
        response = client.get("/api/search", {"q": "helium"})

    assert response.status_code == 503
    assert "reindex --full" in response.json()["detail"]


def test_article_list_is_paginated_published_only_and_filters_by_tag(client, articles):
    everything = client.get("/api/articles").json()
    flight = client.get("/api/articles", {"tag": "flight"}).json()

    assert everything["count"] == 2
    assert {item["title"] for item in everything["items"]} == {"Airships", "Boats"}
    assert [item["title"] for item in flight["items"]] == ["Airships"]
    item = flight["items"][0]
    assert item["url"] == "/articles/airships/" and item["tags"] == ["flight"]
    assert item["summary"] == "Lighter than air." and "body" not in item
    assert item["reading_minutes"] == 1  # what the cards show, for a client's own list


def test_article_detail_and_404s_for_drafts_and_unknown_slugs(client, articles):
    detail = client.get("/api/articles/airships")
    draft = client.get("/api/articles/secret-draft")
    unknown = client.get("/api/articles/nope")

    assert detail.status_code == 200
    assert detail.json()["body"].startswith("## Lift")
    assert detail.json()["tags"] == ["flight"]
    for response in (draft, unknown):
        assert response.status_code == 404
        assert response["Content-Type"].startswith("application/json")
        assert response.json() == {"detail": "Not found."}


def test_index_status_counts_published_articles_not_yet_searchable(client, make_article):
    fresh = make_article(title="Fresh", body="Not indexed yet.")
    make_article(title="Draft", body="Never indexed.", status=Article.Status.DRAFT)

    response = client.get("/api/index-status")
    assert response.json() == {"unindexed": 1, "searchable": 0}  # a first run: nothing yet
    assert response["Cache-Control"] == "no-store"  # the panel asks again to see it change

    articles_reindex()
    assert client.get("/api/index-status").json() == {"unindexed": 0, "searchable": 1}
    make_article(title="Second", body="Not indexed yet either.")
    assert client.get("/api/index-status").json() == {"unindexed": 1, "searchable": 1}
    Article.objects.filter(pk=fresh.pk).update(updated_at=timezone.now())  # edited since
    assert client.get("/api/index-status").json() == {"unindexed": 2, "searchable": 0}


def test_the_openapi_schema_documents_the_endpoints(client):
    schema = client.get("/api/openapi.json").json()

    paths = {"/api/search", "/api/articles", "/api/articles/{slug}", "/api/index-status"}
    assert paths <= set(schema["paths"])
    parameters = {p["name"] for p in schema["paths"]["/api/search"]["get"]["parameters"]}
    assert parameters == {"q", "limit", "all"}
    assert client.get("/api/docs").status_code == 200
