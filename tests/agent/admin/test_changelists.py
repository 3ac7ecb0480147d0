"""The conversation, turn and tool-call lists: columns, filters, search, constant queries."""

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agent.models import Conversation, Turn
from blog.models import Article
from tests.agent.admin.factories import (
    make_busy_conversation,
    make_conversation,
    make_turn,
    search_hits,
)

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


@pytest.fixture
def three_kinds():
    """A clean conversation, one that hit the step limit, one whose tool failed."""
    clean = make_conversation(page="clean", created_at=T0)
    make_turn(clean, user_message="What is HNSW?", step_count=2, input_tokens=100,
              output_tokens=20, tool_calls=[{"result": search_hits(1)}])  # fmt: skip
    make_turn(clean, user_message="And IVFFlat?", step_count=3, input_tokens=200,
              output_tokens=30, model="llama3")  # fmt: skip
    limited = make_conversation(page="limited", created_at=T0 - timedelta(days=1))
    make_turn(limited, user_message="Tell me everything about Rust", status="max_steps",
              step_count=5, answer="")  # fmt: skip
    failed = make_conversation(page="failed", created_at=T0 - timedelta(days=2))
    make_turn(failed, user_message="Show article 99", tool_calls=[
        {"name": "get_article_detail", "arguments": {"article_id": 99}, "ok": False,
         "error": "not found"},
    ])  # fmt: skip
    return clean, limited, failed


def listed(response) -> set[str]:
    return {conversation.page for conversation in response.context["cl"].result_list}


def test_list_shows_turns_steps_last_status_and_tokens(staff_client, three_kinds):
    response = staff_client.get("/admin/agent/conversation/")

    html = response.content.decode()
    assert response.status_code == 200
    clean = next(c for c in response.context["cl"].result_list if c.page == "clean")
    assert (clean.turn_count, clean.step_total, clean.step_max, clean.token_total) == (2, 5, 3, 350)
    assert clean.last_status == "done" and clean.had_tool_error is False
    assert 'class="dc-pill dc-pill--max_steps" title="Hit the step limit">Step limit' in html
    assert "tool error</span>" in html  # the conversation whose tool failed
    assert "What is HNSW?" in html
    assert "/static/admin/docent-admin.css" in html
    for title in ("By turn status", "By start date", "By step limit reached",
                  "By tool error", "By model"):  # fmt: skip
        assert title in html
    # A list, titled as one: Django says "Select conversation to view" for a list nobody edits.
    assert "<h1>Conversations</h1>" in html and "Select conversation" not in html


@pytest.mark.parametrize(
    ("query", "pages"),
    [
        ("status=max_steps", {"limited"}),
        ("status=done", {"clean", "failed"}),
        ("step_limit=yes", {"limited"}),
        ("step_limit=no", {"clean", "failed"}),
        ("tool_error=yes", {"failed"}),
        ("tool_error=no", {"clean", "limited"}),
        ("model=llama3", {"clean"}),
        ("q=ivfflat", {"clean"}),
        ("q=rust+everything", {"limited"}),
        ("created_at__year=2026&created_at__month=11&created_at__day=19", {"limited"}),
    ],
)
def test_filters_and_search(staff_client, three_kinds, query, pages):
    assert listed(staff_client.get(f"/admin/agent/conversation/?{query}")) == pages


def test_a_filter_on_turns_does_not_inflate_the_counts(staff_client, three_kinds):
    response = staff_client.get("/admin/agent/conversation/?status=done&q=and")

    (clean,) = response.context["cl"].result_list
    assert (clean.turn_count, clean.step_total) == (2, 5)


def test_sorting_by_an_annotated_column(staff_client, three_kinds):
    response = staff_client.get(
        "/admin/agent/conversation/?o=-5"
    )  # "Max steps" (0-based), descending

    assert [c.page for c in response.context["cl"].result_list] == ["limited", "clean", "failed"]


def test_turn_and_tool_call_lists(staff_client, three_kinds):
    turns = staff_client.get("/admin/agent/turn/?status=max_steps").content.decode()
    calls = staff_client.get("/admin/agent/toolcall/?outcome=error")

    assert "Tell me everything about Rust" in turns
    assert "What is HNSW?" not in turns
    assert [c.name for c in calls.context["cl"].result_list] == ["get_article_detail"]
    assert "By outcome" in calls.content.decode()
    assert "By tool" in calls.content.decode()  # the name field is labelled "tool"


def test_tool_calls_sort_by_duration(staff_client):
    conversation = make_conversation()
    make_turn(conversation, tool_calls=[{"duration_ms": ms} for ms in (30, 5, 120)])

    response = staff_client.get("/admin/agent/toolcall/?o=-4")  # Duration (0-based), longest first

    assert [c.duration_ms for c in response.context["cl"].result_list] == [120, 30, 5]


def test_the_tool_call_list_shows_what_each_call_was_asked(staff_client):
    # It listed "search_knowledge_base" fifty times over: which search was which took a click
    # into each row.
    conversation = make_conversation()
    make_turn(conversation, tool_calls=[
        {"arguments": {"query": "sourdough hydration", "limit": 5}},
        {"name": "get_article_detail", "arguments": {"article_id": 7}},
        {"arguments": {"query": "x" * 500}},
    ])  # fmt: skip

    page = staff_client.get("/admin/agent/toolcall/").content.decode()

    assert "Arguments" in page
    assert "<bdi>“sourdough hydration”</bdi>" in page  # the query, not '{"limit": 5, "que…'
    assert "&quot;article_id&quot;: 7" in page
    assert "x" * 200 not in page  # a long argument is cut in SQL, not shipped whole


def test_a_query_that_is_not_text_is_shown_as_the_model_sent_it(staff_client):
    # '"query": 5' read “5”, as a search for the text 5 would: the reason the call was
    # refused (a number where text belongs) was hidden.
    conversation = make_conversation()
    make_turn(conversation, tool_calls=[{"ok": False, "arguments": {"query": 5}}])

    page = staff_client.get("/admin/agent/toolcall/").content.decode()

    assert "“5”" not in page
    assert "{&quot;query&quot;: 5}" in page


def test_the_tool_call_list_names_the_article_a_call_read(staff_client):
    # get_article_detail's row read '{"article_id": 16}': which article took a lookup.
    article = Article.objects.create(title="Sourdough starters", slug="sourdough", body="x")
    conversation = make_conversation()
    make_turn(conversation, tool_calls=[
        {"name": "get_article_detail", "arguments": {"article_id": article.pk}},
        {"name": "get_article_detail", "arguments": {"article_id": 987654}},  # none has it
        {"name": "get_article_detail", "arguments": {"article_id": "twelve"}},  # the model's
    ])  # fmt: skip

    page = staff_client.get("/admin/agent/toolcall/").content.decode()

    assert f"<bdi>“Sourdough starters” (#{article.pk})</bdi>" in page
    assert "&quot;article_id&quot;: 987654" in page  # no title to give: the JSON, as before
    assert "&quot;article_id&quot;: &quot;twelve&quot;" in page


def test_changelists_defer_the_heavy_columns(staff_client, three_kinds):
    conversations = staff_client.get("/admin/agent/turn/").context["cl"].result_list
    calls = staff_client.get("/admin/agent/toolcall/").context["cl"].result_list

    assert {"answer", "error", "citations"} <= conversations[0].get_deferred_fields()
    assert {"arguments", "result"} <= calls[0].get_deferred_fields()


def count_queries(client, url: str) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured)


@pytest.mark.parametrize(
    "url", ["/admin/agent/conversation/", "/admin/agent/turn/", "/admin/agent/toolcall/"]
)
def test_changelist_query_count_is_constant_as_rows_grow(staff_client, url):
    for n in range(3):
        make_busy_conversation(turns=2, started_at=T0 + timedelta(hours=n))
    few = count_queries(staff_client, url)

    for n in range(3, 9):
        make_busy_conversation(turns=2, started_at=T0 + timedelta(hours=n))
    many = count_queries(staff_client, url)

    assert Conversation.objects.count() == 9 and Turn.objects.count() == 18
    assert few == many


def test_a_call_cancelled_as_it_ran_or_stopped_by_the_step_limit_is_no_tool_error(staff_client):
    # The visitor pressed Stop (or left) while the search ran; the step limit stopped a read.
    stopped = make_conversation(page="stopped", created_at=T0)
    make_turn(stopped, user_message="Does the chat take voice input?", status="cancelled",
              tool_calls=[{"ok": False, "error": "cancelled"}])  # fmt: skip
    limited = make_conversation(page="limited", created_at=T0)
    make_turn(limited, status="max_steps", tool_calls=[
        {"name": "get_article_detail", "ok": False, "executed": False, "duration_ms": 0,
         "error": "Not executed: the step limit was reached."},
    ])  # fmt: skip

    conversations = staff_client.get("/admin/agent/conversation/")
    cancelled = staff_client.get("/admin/agent/toolcall/?outcome=cancelled")
    transcript = staff_client.get(f"/admin/agent/conversation/{stopped.pk}/change/")

    assert "tool error</span>" not in conversations.content.decode()
    assert listed(staff_client.get("/admin/agent/conversation/?tool_error=yes")) == set()
    assert [c.turn.conversation.page for c in cancelled.context["cl"].result_list] == ["stopped"]
    assert staff_client.get("/admin/agent/toolcall/?outcome=error").context["cl"].result_count == 0
    skipped = staff_client.get("/admin/agent/toolcall/?outcome=not_executed").content.decode()
    assert '<td class="field-duration">—</td>' in skipped  # it never ran: no "0 ms"
    page = transcript.content.decode()
    assert 'data-outcome="cancelled"' in page and "dc-pill--cancelled" in page
    assert "dc-call--error" not in page


def test_the_turn_and_tool_call_pages_show_durations_as_people_read_them(staff_client):
    # "First token (ms): 58.6482660000911" and "55.311828999947465" in the tool call table.
    conversation = make_conversation()
    turn = make_turn(conversation, ttft=58.6482660000911, duration_ms=1234.56789,
                     tool_calls=[{"duration_ms": 55.311828999947465}])  # fmt: skip
    call = turn.tool_calls.get()

    page = staff_client.get(f"/admin/agent/turn/{turn.pk}/change/").content.decode()
    assert "58.6 ms" in page and "1.23 s" in page and "55.3 ms" in page
    assert "58.648" not in page and "55.311" not in page and "1234.5" not in page
    call_page = staff_client.get(f"/admin/agent/toolcall/{call.pk}/change/").content.decode()
    assert "55.3 ms" in call_page and "55.311" not in call_page


def test_the_turn_page_links_its_citations_instead_of_showing_their_json(staff_client):
    # The page showed '[{"url": "/articles/…", "title": …, "excerpt": "…300 characters…"}]'.
    citations = [
        {
            "article_id": 3,
            "title": "HNSW <indexes>",
            "url": "/articles/hnsw/",
            "excerpt": "x" * 300,
        },
        {"article_id": 4, "title": "Elsewhere", "url": "javascript:alert(1)", "excerpt": "y"},
    ]
    turn = make_turn(make_conversation(), citations=citations)
    page = staff_client.get(f"/admin/agent/turn/{turn.pk}/change/").content.decode()
    assert '<div><a href="/articles/hnsw/">HNSW &lt;indexes&gt;</a></div>' in page
    assert "x" * 300 not in page and "javascript:" not in page and '"article_id"' not in page

    bare = make_turn(make_conversation(), citations=[])
    page = staff_client.get(f"/admin/agent/turn/{bare.pk}/change/").content.decode()
    assert "[]" not in page.split("field-sources")[1].split("</div>")[0]


def test_the_turn_page_renders_the_answer_as_the_transcript_does(staff_client):
    # The turn's page showed "## Tuning HNSW", "- **`m`**: …" as typed; the transcript renders it.
    answer = (
        "## Tuning HNSW\n\n- **`m`**: links per node\n\n"
        "See [the README](https://github.com/pgvector/pgvector). <b>raw</b> <img src=x onerror=y>"
    )
    turn = make_turn(make_conversation(), answer=answer)

    def bubble(url):
        page = staff_client.get(url).content.decode()
        return page.split('<div class="dc-bubble dc-answer">')[1].split("</div>")[0]

    shown = bubble(f"/admin/agent/turn/{turn.pk}/change/")
    assert shown == bubble(f"/admin/agent/conversation/{turn.conversation_id}/change/")
    assert ">Tuning HNSW</h2>" in shown and "<strong><code>m</code></strong>" in shown
    assert 'class="dc-external"' in shown and "##" not in shown and "**" not in shown
    assert "<b>" not in shown and "<img" not in shown and "&lt;b&gt;raw&lt;/b&gt;" in shown

    empty = make_turn(make_conversation(), answer="")
    page = staff_client.get(f"/admin/agent/turn/{empty.pk}/change/").content.decode()
    assert "dc-answer" not in page


@pytest.mark.parametrize(
    ("url", "name"),
    [("/admin/agent/conversation/", "conversations"), ("/admin/agent/turn/", "turns"),
     ("/admin/agent/toolcall/", "tool calls")],
)  # fmt: skip
def test_an_empty_list_says_where_its_rows_come_from(staff_client, url, name):
    # A first run showed "0 conversations" and nothing more (the dashboard said what to do).
    page = staff_client.get(url).content.decode()

    assert 'data-testid="changelist-empty"' in page
    assert f"No {name} yet." in page and 'href="/"' in page
    chinese = staff_client.get(url, headers={"accept-language": "zh-CN"}).content.decode()
    assert "还没有" in chinese and "No " + name not in chinese


def test_a_list_emptied_by_its_filters_says_so(staff_client, three_kinds):
    page = staff_client.get("/admin/agent/conversation/?status=interrupted").content.decode()
    full = staff_client.get("/admin/agent/conversation/").content.decode()

    assert "No conversations match these filters or this search." in page
    assert "yet." not in page
    assert 'data-testid="changelist-empty"' not in full


def test_the_conversation_list_names_its_most_steps_column(staff_client, three_kinds):
    # "Max steps" read as the step limit; the column is the most steps any one turn took.
    html = staff_client.get("/admin/agent/conversation/").content.decode()

    assert "Most steps in a turn" in html and "Max steps" not in html


@pytest.fixture
def small_talk_and_a_decline():
    conversation = make_conversation()
    make_turn(conversation, user_message="thanks!", answer="You're welcome.", answered=False,
              small_talk=True)  # fmt: skip
    make_turn(conversation, user_message="What about Rust?", answer="", answered=False)
    make_turn(conversation, user_message="What is HNSW?", answered=True)


def answered_cell(html: str, question: str) -> str:
    row = html.split(question)[1].split("</tr>")[0]
    return row.split('<td class="field-answered_mark">')[1].split("</td>")[0]


def test_a_small_talk_turn_is_neither_answered_nor_missed_in_the_turn_list(
    staff_client, small_talk_and_a_decline
):
    # A "thanks!" showed the ✗ of a declined question.
    html = staff_client.get("/admin/agent/turn/").content.decode()

    assert (
        answered_cell(html, "thanks!") == '<span class="dc-pill dc-pill--skipped">Small talk</span>'
    )
    assert 'alt="False"' in answered_cell(html, "What about Rust?")
    assert 'alt="True"' in answered_cell(html, "What is HNSW?")


def test_a_running_turn_is_not_marked_unanswered_in_the_turn_list(staff_client):
    conversation = make_conversation()
    make_turn(conversation, user_message="Still streaming?", status=Turn.Status.RUNNING,
              answered=False)  # fmt: skip

    html = staff_client.get("/admin/agent/turn/").content.decode()

    assert answered_cell(html, "Still streaming?") == "—"


@pytest.mark.parametrize(
    ("answered", "questions"),
    [
        ("yes", ["What is HNSW?"]),
        ("no", ["What about Rust?"]),  # small talk is not a question the blog missed
        ("small_talk", ["thanks!"]),
        ("", ["thanks!", "What about Rust?", "What is HNSW?"]),
    ],
)
def test_the_turn_list_filters_small_talk_apart(
    staff_client, small_talk_and_a_decline, answered, questions
):
    response = staff_client.get(f"/admin/agent/turn/?answered={answered}")

    assert sorted(t.user_message for t in response.context["cl"].result_list) == sorted(questions)
    assert "?answered=small_talk" in response.content.decode()


def test_a_turns_and_a_tool_calls_own_page_date_them_as_the_lists_do(staff_client):
    # "Started at: Dec. 4, 2026, 10:46 p.m." under a list and a transcript reading "Dec 4, 22:46".
    started = datetime(2026, 11, 20, 22, 46, tzinfo=UTC)
    turn = make_turn(make_conversation(), started_at=started, vote="down", feedback_at=started,
                     tool_calls=[{}])  # fmt: skip
    for url in (
        f"/admin/agent/turn/{turn.pk}/change/",
        f"/admin/agent/toolcall/{turn.tool_calls.get().pk}/change/",
    ):
        page = staff_client.get(url).content.decode()
        assert "Nov 20 2026, 22:46" in page, url
        assert "p.m." not in page and "Nov. 20" not in page, url
    chinese = staff_client.get(
        f"/admin/agent/turn/{turn.pk}/change/", headers={"accept-language": "zh-CN"}
    )
    assert "2026年11月20日 22:46" in chinese.content.decode()
