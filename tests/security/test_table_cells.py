"""Tables that are mostly nothing: every row short of its header is filled with empty cells.

markdown-it bounds the filling per table (65,536 cells), not per document: ten tables of 256
header cells over 256 rows of "|" (15 kB of Markdown) rendered as 650,000 cells, 6.6 MB of
HTML and 13 CPU-seconds, on every view of an article holding them (a reader's page) and of a
transcript whose answer held them (the admin's review page). A document's tables now hold at
most a cell per character plus 4,096 (`blog.rendering.MAX_FILLED_CELLS`).
"""

import httpx
import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from blog.models import Article
from blog.rendering import MAX_FILLED_CELLS
from tests.agent.admin.factories import make_conversation, make_turn
from tests.security.clients import admin_signed_in

pytestmark = pytest.mark.django_db(transaction=True)

COLUMNS = 256
TABLE = "|" + "a|" * COLUMNS + "\n|" + "-|" * COLUMNS + "\n" + "|\n" * (COLUMNS - 1) + "\n"
TABLES = TABLE * 10
CAP = len(TABLES) + MAX_FILLED_CELLS


def test_empty_tables_are_cut_on_the_readers_page_and_in_the_admin_transcript(serve):
    Article.objects.create(
        title="Tables", slug="tables", body=TABLES, status=Article.Status.PUBLISHED
    )
    conversation = make_conversation()
    make_turn(conversation, index=1, user_message="tables", answer=TABLES)
    get_user_model().objects.create_superuser("editor", "e@example.com", "a-long-password")
    server = serve("tables")

    article = httpx.get(f"{server.url}/articles/tables/", timeout=120).text
    assert article.count("<td") + article.count("<th") <= CAP, article.count("<td")
    assert len(article) < 1_000_000, len(article)  # 6.6 MB before

    admin = admin_signed_in(server, username="editor", password="a-long-password")
    url = reverse("admin:agent_conversation_change", args=[conversation.pk])
    transcript = admin.get(url, timeout=120).text
    assert "<table" in transcript
    assert transcript.count("<td") <= CAP, transcript.count("<td")


def test_real_tables_keep_every_row():
    from blog.rendering import markdown_to_html

    rows = "".join(f"| {n} | {n * n} |\n" for n in range(3000))
    html = markdown_to_html("| n | square |\n|---|---|\n" + rows)
    assert html.count("<tr>") == 3001
    assert "<td>2999</td>" in html
