"""The seventeenth first-run walk: an operator follows a log line, a view-only reviewer reads."""

import uuid

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client

from agent.models import Turn
from blog.models import Article
from tests.agent.admin.factories import make_conversation, make_turn
from tests.e2e.conftest import sign_in

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"


@pytest.fixture
def editor_client(db) -> Client:
    user = get_user_model().objects.create_superuser("editor", "e@example.com", "a-long-password")
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def two_conversations(db):
    """Two conversations whose questions share no word with any id."""
    first = make_conversation()
    traced = make_turn(first, user_message="How do I tune HNSW?", trace_id=TRACE)
    second = make_conversation()
    other = make_turn(second, user_message="What is RRF?")
    return first, traced, second, other


def listed(client: Client, path: str, term: str) -> str:
    response = client.get(path, {"q": term})
    assert response.status_code == 200
    return response.content.decode()


@pytest.mark.parametrize(
    "which", ["turn", "turn in brackets", "conversation", "trace", "json line", "text line"]
)
def test_an_id_from_a_log_line_finds_its_conversation(editor_client, two_conversations, which):
    # The text log ends a turn's lines with "[turn <id>]", JSON carries turn_id, conversation_id
    # and trace_id; pasted into the search box, each found nothing (it searched only the words).
    first, traced, second, _other = two_conversations
    term = {
        "turn": str(traced.pk),
        "turn in brackets": f"[turn {traced.pk}]",
        "conversation": str(first.pk),
        "trace": TRACE,
        "json line": f'"message": "turn answered", "turn_id": "{traced.pk}", '
        f'"conversation_id": "{first.pk}", "trace_id": "{TRACE}"}}',
        "text line": f"WARNING turn interrupted [turn {traced.pk}] [trace {TRACE}]",
    }[which]
    html = listed(editor_client, "/admin/agent/conversation/", term)
    assert f"/admin/agent/conversation/{first.pk}/change/" in html
    assert f"/admin/agent/conversation/{second.pk}/change/" not in html


def test_an_id_nobody_has_finds_nothing_and_words_still_search(editor_client, two_conversations):
    first, _traced, second, _other = two_conversations
    html = listed(editor_client, "/admin/agent/conversation/", str(uuid.uuid4()))
    assert "/admin/agent/conversation/" + str(first.pk) not in html
    html = listed(editor_client, "/admin/agent/conversation/", "RRF")
    assert f"/admin/agent/conversation/{second.pk}/change/" in html
    assert f"/admin/agent/conversation/{first.pk}/change/" not in html


@pytest.mark.parametrize("which", ["turn", "conversation", "trace"])
def test_the_turn_list_finds_a_turn_by_a_log_id(editor_client, two_conversations, which):
    first, traced, _second, other = two_conversations
    term = {"turn": str(traced.pk), "conversation": str(first.pk), "trace": TRACE}[which]
    html = listed(editor_client, "/admin/agent/turn/", term)
    assert f"/admin/agent/turn/{traced.pk}/change/" in html
    assert f"/admin/agent/turn/{other.pk}/change/" not in html
    assert "copied from the logs" in html


def test_the_transcript_and_the_turn_page_show_the_id_the_logs_print(
    editor_client, two_conversations
):
    # The log line leads to the transcript, but nothing there said which turn it was.
    first, traced, _second, _other = two_conversations
    transcript = editor_client.get(f"/admin/agent/conversation/{first.pk}/change/")
    assert f'<dd class="dc-turn-id"><code>{traced.pk}</code></dd>' in transcript.content.decode()
    page = editor_client.get(f"/admin/agent/turn/{traced.pk}/change/").content.decode()
    assert str(traced.pk) in page
    assert TRACE in page


BODY = 'Intro.\n\n```python\nTOOL = {\n    "name": "search",\n        "deep": 1,\n}\n```\n'


@pytest.fixture
def viewer(transactional_db):
    """A reviewer who may only view: articles and conversations."""
    user = get_user_model().objects.create_user("viewer", password="a-long-password")
    user.is_staff = True
    user.save()
    user.user_permissions.set(
        Permission.objects.filter(
            codename__startswith="view_", content_type__app_label__in=["agent", "blog"]
        )
    )
    return Article.objects.create(
        title="Indented", slug="indented", summary="S.", body=BODY, status="draft"
    )


@pytest.mark.e2e
def test_a_view_only_reviewer_reads_the_markdown_as_typed(live_server, viewer, browser):
    # A reviewer without change permission saw the body as Django's readonly text: line breaks
    # kept, but every run of spaces collapsed, so a code block lost its indentation.
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    sign_in(page, live_server.url, "viewer")
    page.goto(f"{live_server.url}/admin/blog/article/{viewer.pk}/change/")
    text = page.locator(".field-body div.readonly").inner_text()
    assert '    "name": "search",\n        "deep": 1,' in text
    # On a phone it wraps inside the page rather than widening it.
    page.set_viewport_size({"width": 390, "height": 844})
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.close()


def viewer_client(codenames_like: str = "view_") -> Client:
    user = get_user_model().objects.create_user("viewer", password="a-long-password")
    user.is_staff = True
    user.save()
    user.user_permissions.set(
        Permission.objects.filter(
            codename__startswith=codenames_like, content_type__app_label__in=["agent", "blog"]
        )
    )
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.django_db
def test_the_unanswered_page_offers_writing_only_to_who_may_write(editor_client):
    # A reviewer who may only view got "Write an article about this" under every question,
    # and Django's 403 page when they followed it.
    make_turn(make_conversation(), user_message="Who won the cup?", answered=False)
    path = "/admin/agent/conversation/unanswered/"
    viewer = viewer_client()
    seen = viewer.get(path).content.decode()
    assert "Who won the cup?" in seen and "Write an article about this" not in seen
    assert viewer.get("/admin/blog/article/add/").status_code == 403
    assert "Write an article about this" in editor_client.get(path).content.decode()


@pytest.mark.django_db
def test_a_view_only_article_page_offers_no_preview_it_cannot_make(editor_client):
    # Preview posts the form to a view only editors may use: a viewer's click opened a tab
    # with Django's 403 page.
    article = Article.objects.create(title="T", slug="t", summary="S.", body="B.", status="draft")
    path = f"/admin/blog/article/{article.pk}/change/"
    assert "dc-preview-button" not in viewer_client().get(path).content.decode()
    assert "dc-preview-button" in editor_client.get(path).content.decode()
    assert "dc-preview-button" in editor_client.get("/admin/blog/article/add/").content.decode()


@pytest.mark.django_db
def test_the_dashboard_counts_one_answer_and_one_call_in_the_singular(editor_client):
    # With one answer and one call the cards read "0 of 1 answers voted on" and "0 of 1
    # executed calls".
    from django.utils import timezone

    turn = make_turn(make_conversation(), started_at=timezone.now(), vote=Turn.Vote.UP)
    make_turn(turn.conversation, started_at=timezone.now(), tool_calls=[{}])
    html = editor_client.get("/admin/agent/conversation/dashboard/").content.decode()
    assert "1 of 2 answers voted on" in html
    assert "0 of 1 vote</" in html and "0 of 1 executed call</" in html
    chinese = editor_client.get(
        "/admin/agent/conversation/dashboard/", headers={"accept-language": "zh-CN"}
    ).content.decode()
    assert "1 次已执行调用中 0 次出错" in chinese


def test_a_record_nobody_edits_offers_no_history(editor_client, two_conversations):
    # Turns and tool calls are never changed, so Django's History button always opened
    # "This object doesn't have a change history".
    _first, traced, _second, _other = two_conversations
    page = editor_client.get(f"/admin/agent/turn/{traced.pk}/change/").content.decode()

    assert 'class="historylink"' not in page and str(traced.pk) in page
    article = Article.objects.create(title="Kept", slug="kept", body="Text.")
    editable = editor_client.get(f"/admin/blog/article/{article.pk}/change/").content.decode()
    assert 'class="historylink"' in editable  # an article's edits have a history
