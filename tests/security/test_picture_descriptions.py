"""A picture's description holding a link or another picture (CommonMark reads a description as
inline text). The picture is a link named by its description (blog/rendering.py), and a link
cannot hold another: the inner link split it in two, its own address a second link and the
words after it outside both; an inner picture left an empty link, no words at all."""

import pytest

from blog.models import Article
from blog.rendering import answer_to_html

pytestmark = pytest.mark.django_db

INNER_LINK = "![a [b](https://elsewhere.example/) c](https://example.com/p.png)"
INNER_PICTURE = "![![the chart](https://inner.example/c.png)](https://example.com/big.png)"


def _prose(client, body: str) -> str:
    Article.objects.create(
        title="Pictures", slug="pictures", body=body, status=Article.Status.PUBLISHED
    )
    page = client.get("/articles/pictures/").content.decode()
    return page.split('<div class="prose">', 1)[1].split("</div>", 1)[0]


def test_a_link_in_a_pictures_description_is_its_words_on_the_page(client):
    prose = _prose(client, INNER_LINK)

    assert "elsewhere.example" not in prose
    assert '<a href="https://example.com/p.png" rel="noopener noreferrer nofollow">a b c</a>' in (
        prose
    )


def test_a_picture_in_a_pictures_description_gives_its_words(client):
    prose = _prose(client, INNER_PICTURE)

    assert "inner.example" not in prose
    assert (
        '<a href="https://example.com/big.png" rel="noopener noreferrer nofollow">the chart</a>'
    ) in prose


def test_an_answers_picture_is_one_link_with_all_its_words():
    html = answer_to_html(f"{INNER_LINK} and {INNER_PICTURE}", external_label="leaves")

    assert html.count("<a ") == 2 and "elsewhere.example" not in html
    assert ">a b c</a>" in html and ">the chart</a>" in html
