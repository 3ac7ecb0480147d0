"""Markdown nested past the renderer's depth: markdown-it (maxNesting 20) dropped the deep
block and, for a list, every line after it, so one line of "> > > …" or a ladder of list items
hid the rest of an article from its readers. The over-deep lines are now kept as text, and the
cost stays that of the text (the depth is never more than twenty levels of recursion)."""

import pytest

from blog.models import Article
from blog.rendering import answer_to_html

pytestmark = pytest.mark.django_db

LADDER = "\n".join(" " * (2 * depth) + "- rung" for depth in range(2000))
BODIES = [
    "> " * 20_000 + "quoted",  # one line, 40 kB
    ">" * 50_000 + "quoted",
    "1. " * 10_000 + "quoted",
    "* 1. > " * 5_000 + "quoted",
    LADDER + "\n" + " " * 4000 + "quoted",
]


@pytest.mark.parametrize("body", BODIES, ids=["spaced", "packed", "ordered", "mixed", "ladder"])
def test_deep_nesting_keeps_the_deep_words_and_the_rest_of_the_article(client, body):
    Article.objects.create(
        title="Deep",
        slug="deep",
        body=f"{body}\n\n## After\n\nThe rest survives.",
        status=Article.Status.PUBLISHED,
    )

    page = client.get("/articles/deep/").content.decode()
    prose = page.split('<div class="prose">', 1)[1].split("</div>", 1)[0]

    assert "quoted" in prose
    assert '<h2 id="sec-after">After</h2>' in prose and "<p>The rest survives.</p>" in prose


def test_an_answer_as_deep_keeps_its_end_in_the_transcript_renderer_too():
    html = answer_to_html(LADDER + "\n\nEnd of the answer.", external_label="leaves")

    assert html.count("<ul>") == 9 and html.endswith("<p>End of the answer.</p>\n")
