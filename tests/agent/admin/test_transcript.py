"""The conversation's change view is its transcript: every step, every tool call, in order."""

import html as html_lib
import json
import re
from datetime import UTC, datetime

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agent.charts import format_ms
from agent.loop import INVALID_ARGUMENTS
from agent.models import ToolCall
from agent.selectors import conversation_transcript
from tests.agent.admin.factories import (
    NO_RESULTS,
    make_busy_conversation,
    make_conversation,
    make_turn,
    search_hits,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def conversation():
    conversation = make_conversation(page="pgvector-notes")
    make_turn(
        conversation,
        index=1,
        user_message="How does pgvector index vectors?",
        answer="With **HNSW** indexes.",
        step_count=3,
        input_tokens=1234,
        output_tokens=56,
        ttft=210.0,
        duration_ms=2345.0,
        citations=[{"article_id": 1, "title": "Article 1", "url": "/articles/article-1/"}],
        tool_calls=[
            {"step": 1, "arguments": {"query": "pgvector index", "limit": 5},
             "result": search_hits(5, excerpt="HNSW " * 60), "duration_ms": 12.5},
            {"step": 1, "name": "list_articles", "arguments": {"tag": "postgres", "limit": 3},
             "result": [], "duration_ms": 3.0},
            {"step": 2, "name": "get_article_detail", "arguments": {"article_id": 7},
             "ok": False, "error": "Article 7 not found.", "duration_ms": 4.0},
        ],
    )  # fmt: skip
    make_turn(
        conversation,
        index=2,
        user_message="And Kubernetes?",
        answer="",
        status="max_steps",
        step_count=2,
        error_code="max_steps",
        error="The assistant stopped after 2 steps.",
        tool_calls=[
            {"step": 1, "arguments": {"query": "kubernetes"}, "result": NO_RESULTS},
            {
                "step": 2,
                "arguments": {"query": "k8s"},
                "executed": False,
                "duration_ms": 0,
                "ok": False,
                "error": "Not executed: the step limit was reached.",
            },  # fmt: skip
        ],
    )
    return conversation


def turn_sections(page: str) -> list[str]:
    return page.split('<section class="dc-turn"')[1:]


def test_transcript_shows_every_tool_call_with_arguments_result_and_step(
    staff_client, conversation
):
    response = staff_client.get(f"/admin/agent/conversation/{conversation.pk}/change/")

    page = response.content.decode()
    text = html_lib.unescape(page)
    assert response.status_code == 200
    calls = ToolCall.objects.filter(turn__conversation=conversation)
    assert calls.count() == 5
    for call in calls:
        block = text.split(f'data-call-id="{call.call_id}"')[1].split("</article>")[0]
        assert f'data-step="{call.step}"' in block
        assert f"step {call.step}" in block
        assert call.name in block
        assert json.dumps(call.arguments, indent=2, ensure_ascii=False) in block
        if call.result not in (None, ""):
            expected = (
                call.result if isinstance(call.result, str) else json.dumps(call.result, indent=2)
            )
            assert expected in block
        duration = format_ms(call.duration_ms) if call.executed else "—"
        assert f'<span class="dc-call__duration">{duration}</span>' in block
        assert ("executed" if call.executed else "stopped by the step limit") in block
        if call.error:
            assert call.error in block
    assert "How does pgvector index vectors?" in text
    assert "<strong>HNSW</strong>" in page  # the answer's Markdown is rendered
    assert "The assistant stopped after 2 steps." in text


def test_step_counts_match_the_saved_turns(staff_client, conversation):
    page = staff_client.get(f"/admin/agent/conversation/{conversation.pk}/change/").content.decode()

    sections = turn_sections(page)
    turns = list(conversation.turns.order_by("index"))
    assert len(sections) == len(turns)
    for turn, section in zip(turns, sections, strict=True):
        assert f'data-steps="{turn.step_count}"' in section
        steps = re.findall(r'<li class="dc-event dc-event--step" data-step="(\d+)"', section)
        assert steps == [str(n) for n in range(1, turn.step_count + 1)]
        assert f'<dd class="dc-step-count">{turn.step_count}</dd>' in section
    assert '<dd data-testid="step-total">5</dd>' in page


def test_footer_shows_status_first_token_duration_and_tokens(staff_client, conversation):
    page = staff_client.get(f"/admin/agent/conversation/{conversation.pk}/change/").content.decode()

    first, second = turn_sections(page)
    footer = first.split('class="dc-turn__foot"')[1]
    assert "<dd>Done</dd>" in footer
    assert "<dd>210 ms</dd>" in footer
    assert "<dd>2.35 s</dd>" in footer
    assert "1,234 in · 56 out" in footer
    assert "Hit the step limit" in second
    assert 'class="dc-pill dc-pill--skipped">Not executed' in second
    assert 'class="dc-pill dc-pill--error">Error' in first


def test_a_call_the_step_limit_stopped_gives_its_reason_not_an_error(staff_client, conversation):
    # It read "Error: Not executed: the step limit was reached." in red, under a "Not executed"
    # pill: no fault of the tool's, and not counted as one anywhere else.
    page = staff_client.get(f"/admin/agent/conversation/{conversation.pk}/change/").content.decode()

    skipped = page.split('data-outcome="not_executed"')[1].split("</article>")[0]
    assert '<p class="dc-call__error dc-call__error--skipped">Not executed: ' in skipped
    assert "<strong>Error" not in skipped


def test_a_step_limit_ending_shows_the_articles_it_listed(staff_client):
    # The visitor saw "These articles looked relevant:" and two links; the transcript showed the
    # ending alone, as the articles were never saved.
    conversation = make_conversation()
    listed = [
        {"article_id": 1, "title": "Why step limits matter", "url": "/articles/step-limits/"},
        {"article_id": 2, "title": "Anatomy of the loop", "url": "/articles/loop/"},
    ]
    make_turn(conversation, answer="", status="max_steps", error_code="max_steps",
              error="I reached the limit of 2 steps before finishing the answer. These articles "
              "may help:", listed_articles=listed)  # fmt: skip
    page = staff_client.get(f"/admin/agent/conversation/{conversation.pk}/change/").content.decode()

    ending = page.split("dc-event--error")[1].split("</ul>")[0]
    assert '<a href="/articles/step-limits/">Why step limits matter</a>' in ending
    assert '<a href="/articles/loop/">Anatomy of the loop</a>' in ending


def test_durations_and_times_read_as_in_the_turn_list(staff_client):
    # One turn read "First token 42 ms", "Duration 0.06 s" and, a click away in the turn list,
    # "62.3 ms"; its time "Dec. 4, 2026, 2:05 p.m." beside lists in 24-hour "Dec 4, 14:05".
    conversation = make_conversation(created_at=datetime(2026, 12, 4, 14, 5, tzinfo=UTC))
    make_turn(
        conversation, index=1, ttft=41.6, duration_ms=62.3,
        started_at=datetime(2026, 12, 4, 14, 5, 30, tzinfo=UTC),
        tool_calls=[{"step": 1, "arguments": {"query": "hnsw"}, "duration_ms": 3.0}],
    )  # fmt: skip

    page = staff_client.get(f"/admin/agent/conversation/{conversation.pk}/change/").content.decode()
    listing = staff_client.get("/admin/agent/turn/").content.decode()

    footer = page.split('class="dc-turn__foot"')[1]
    assert "<dd>41.6 ms</dd>" in footer and "<dd>62.3 ms</dd>" in footer
    assert "62.3 ms" in listing
    assert '<span class="dc-call__duration">3 ms</span>' in page
    assert "Dec 4 2026, 14:05" in page and "p.m." not in page
    chinese = staff_client.get(
        f"/admin/agent/conversation/{conversation.pk}/change/", headers={"accept-language": "zh-CN"}
    ).content.decode()
    assert "2026年12月4日 14:05" in chinese


def test_a_stopped_or_cut_off_turn_says_how_it_ended(staff_client):
    # They save no error text: the transcript ended on the question with only a grey pill.
    conversation = make_conversation()
    make_turn(conversation, index=1, status="cancelled", answer="", step_count=0, tool_calls=[])
    make_turn(conversation, index=2, status="cancelled", answer="HNSW builds", step_count=1)
    make_turn(conversation, index=3, status="interrupted", answer="", step_count=1)
    make_turn(conversation, index=4, user_message="Done one", step_count=1)
    url = f"/admin/agent/conversation/{conversation.pk}/change/"

    first, second, third, done = turn_sections(staff_client.get(url).content.decode())
    chinese = staff_client.get(url, headers={"accept-language": "zh-CN"}).content.decode()

    assert 'data-testid="ending-1"' in first and "before any answer was written" in first
    assert "shown as far as it got" in second
    assert "server process stopped" in third
    assert 'data-testid="ending-' not in done and "Stopped by the visitor" not in done
    assert "被访客停止" in chinese and "服务器进程停止" in chinese


def test_small_talk_is_marked_as_such_not_as_unanswered(staff_client):
    conversation = make_conversation()
    make_turn(conversation, index=1, user_message="thanks!", answer="You're welcome!",
              answered=False, small_talk=True, tool_calls=[])  # fmt: skip
    make_turn(conversation, index=2, user_message="Capital of France?", answered=False)
    url = f"/admin/agent/conversation/{conversation.pk}/change/"

    thanks, question = turn_sections(staff_client.get(url).content.decode())

    assert 'data-testid="small-talk-1"' in thanks and "Not answered" not in thanks
    assert "Not answered" in question and "small-talk" not in question


def test_long_results_are_collapsed_short_ones_are_not(staff_client, conversation):
    page = staff_client.get(f"/admin/agent/conversation/{conversation.pk}/change/").content.decode()

    search, listing = ToolCall.objects.filter(turn__index=1, step=1).order_by("id")
    long_block = page.split(f'data-call-id="{search.call_id}"')[1].split("</article>")[0]
    short_block = page.split(f'data-call-id="{listing.call_id}"')[1].split("</article>")[0]
    assert '<details class="dc-result">' in long_block
    assert "5 items" in long_block
    assert "<details" not in short_block


def test_page_is_csp_clean(staff_client, conversation):
    page = staff_client.get(f"/admin/agent/conversation/{conversation.pk}/change/").content.decode()

    assert " style=" not in page
    assert "<style" not in page
    assert "/static/admin/docent-admin.css" in page


def test_export_is_the_whole_transcript_as_json(staff_client, conversation):
    response = staff_client.get(f"/admin/agent/conversation/{conversation.pk}/export/")

    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert f"conversation-{conversation.pk}.json" in response["Content-Disposition"]
    data = json.loads(response.content)
    assert data["conversation"]["id"] == str(conversation.pk)
    assert data["conversation"]["step_total"] == 5
    assert [turn["index"] for turn in data["turns"]] == [1, 2]
    assert [turn["step_count"] for turn in data["turns"]] == [3, 2]
    first_calls = data["turns"][0]["tool_calls"]
    assert [(c["step"], c["name"]) for c in first_calls] == [
        (1, "search_knowledge_base"), (1, "list_articles"), (2, "get_article_detail"),
    ]  # fmt: skip
    assert first_calls[0]["arguments"] == {"query": "pgvector index", "limit": 5}
    assert first_calls[2]["ok"] is False and first_calls[2]["error"] == "Article 7 not found."
    assert data["turns"][1]["tool_calls"][1]["executed"] is False
    assert data["turns"][1]["tool_calls"][0]["result"] == NO_RESULTS


def test_unknown_or_malformed_ids_are_not_found(staff_client):
    assert staff_client.get("/admin/agent/conversation/not-a-uuid/change/").status_code == 404
    missing = "00000000-0000-0000-0000-000000000000"
    assert staff_client.get(f"/admin/agent/conversation/{missing}/change/").status_code == 404
    assert staff_client.get(f"/admin/agent/conversation/{missing}/export/").status_code == 404


def test_a_conversation_without_turns_still_renders(staff_client):
    empty = make_conversation()

    response = staff_client.get(f"/admin/agent/conversation/{empty.pk}/change/")

    assert response.status_code == 200
    assert "no saved turns yet" in response.content.decode()


def test_selector_groups_calls_into_steps(conversation):
    transcript = conversation_transcript(conversation_id=conversation.pk)

    first = transcript.turns[0]
    assert [step.number for step in first.steps] == [1, 2, 3]
    assert [[c.name for c in step.tool_calls] for step in first.steps] == [
        ["search_knowledge_base", "list_articles"], ["get_article_detail"], [],
    ]  # fmt: skip
    assert transcript.step_total == 5
    assert transcript.tool_call_count == 5


def count_queries(client, url: str) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured)


def test_transcript_query_count_does_not_grow_with_turns(staff_client):
    small = make_busy_conversation(turns=2)
    large = make_busy_conversation(turns=10)

    small_count = count_queries(staff_client, f"/admin/agent/conversation/{small.pk}/change/")
    large_count = count_queries(staff_client, f"/admin/agent/conversation/{large.pk}/change/")

    assert small_count == large_count
    export_small = count_queries(staff_client, f"/admin/agent/conversation/{small.pk}/export/")
    export_large = count_queries(staff_client, f"/admin/agent/conversation/{large.pk}/export/")
    assert export_small == export_large


def test_a_turn_asked_while_indexing_says_so_and_the_others_do_not(staff_client):
    # The flag was saved but nowhere in the transcript: a reviewer read a decline asked during
    # the first indexing as a gap in the blog.
    conversation = make_conversation()
    make_turn(conversation, index=1, answer="", answered=False, index_incomplete=True)
    make_turn(conversation, index=2)

    response = staff_client.get(f"/admin/agent/conversation/{conversation.pk}/change/")
    first, second = turn_sections(response.content.decode())

    assert 'data-testid="index-incomplete-1"' in first and "Asked while indexing" in first
    assert "not indexed yet" in first and "the answer may exist" in first
    assert "index-incomplete" not in second and "Asked while indexing" not in second
    export = staff_client.get(f"/admin/agent/conversation/{conversation.pk}/export/").json()
    assert [turn["index_incomplete"] for turn in export["turns"]] == [True, False]
    turns = staff_client.get("/admin/agent/turn/?index_incomplete__exact=1")
    assert [turn.index for turn in turns.context["cl"].result_list] == [1]
    assert "By asked while indexing" in turns.content.decode()


def test_an_answer_link_to_another_site_is_marked_as_the_chat_panel_marks_it(staff_client):
    # A stored answer (a real model's, or the offline model's before it stopped making links)
    # linked to another site: the panel marks such a link as leaving the site and sends no
    # referrer, but the transcript showed it as an ordinary link with nothing to tell it apart.
    conversation = make_conversation()
    make_turn(
        conversation,
        answer=(
            "Renew at [the renewal page](https://Evil.example:8443/renew?x=1), "
            "[mail us](mailto:help@evil.example), [also](//evil.example/p) or "
            "[read this](/articles/zebra-tokens/)."
        ),
    )

    page = staff_client.get(f"/admin/agent/conversation/{conversation.pk}/change/").content
    answer = page.decode().split('<div class="dc-bubble dc-answer">')[1].split("</div>")[0]
    links = {
        html_lib.unescape(label): dict(re.findall(r'(\w+)="([^"]*)"', attributes))
        for attributes, label in re.findall(r"<a ([^>]*)>(.*?)</a>", answer)
    }

    external = {"target": "_blank", "rel": "nofollow noopener noreferrer", "class": "dc-external"}
    assert links == {
        "the renewal page": {
            "href": "https://Evil.example:8443/renew?x=1",
            "title": "evil.example:8443 (opens another site)",
            **external,
        },
        "also": {
            "href": "//evil.example/p",
            "title": "evil.example (opens another site)",
            **external,
        },
        "read this": {"href": "/articles/zebra-tokens/"},
    }
    # As in the panel, a mailto: (or any address that is not a web page) stays text.
    assert '<span class="dc-md-unlinked">mail us</span>' in answer


def test_a_call_refused_for_its_arguments_is_the_models_mistake_not_a_tool_error(staff_client):
    # It read "Error" in red, as a tool that timed out does: the search never ran, the model
    # sent "query": 5.
    conversation = make_conversation(created_at=datetime(2026, 11, 20, 12, 0, tzinfo=UTC))
    error = f"{INVALID_ARGUMENTS}search_knowledge_base: query: Input should be a valid string."
    make_turn(conversation, tool_calls=[{"ok": False, "arguments": {"query": 5}, "error": error}])

    page = staff_client.get(f"/admin/agent/conversation/{conversation.pk}/change/").content.decode()
    refused = page.split('data-outcome="refused"')[1].split("</article>")[0]

    assert '<span class="dc-pill dc-pill--max_steps">Invalid arguments</span>' in refused
    assert "refused: the model's arguments did not fit the tool" in refused
    assert "dc-pill--error" not in refused


def test_a_long_transcript_opens_with_an_index_of_its_turns_marking_those_to_review(staff_client):
    # A 100-turn conversation was 79,000 px of page with nothing saying which turns went
    # unanswered or were voted down: the reviewer scrolled through all of them to find out.
    long = make_conversation()
    for index in range(1, 13):
        make_turn(long, index=index, user_message=f"Question {index}?",
                  answered=index != 4, vote="down" if index == 9 else "")  # fmt: skip
    short = make_conversation()
    for index in range(1, 4):
        make_turn(short, index=index)

    page = staff_client.get(f"/admin/agent/conversation/{long.pk}/change/").content.decode()
    index = page.split('data-testid="turn-index"')[1].split("</nav>")[0]

    assert re.findall(r'href="#turn-(\d+)"', index) == [str(n) for n in range(1, 13)]
    assert re.findall(r'href="#turn-(\d+)" title="[^"]*" class="is-unanswered"', index) == ["4"]
    assert re.findall(r'href="#turn-(\d+)" title="[^"]*" class="is-voted-down"', index) == ["9"]
    assert 'title="Question 4?"' in index
    short_page = staff_client.get(f"/admin/agent/conversation/{short.pk}/change/").content
    assert b'data-testid="turn-index"' not in short_page


def test_a_call_reading_an_article_names_it_not_only_its_id(staff_client, make_article):
    # A reviewer read `{"article_id": 3}` and had to open the folded result to learn which
    # article the assistant read. The title comes from what the call returned; a call that
    # failed names the article as it stands, and one that names no article, nothing.
    kept = make_article(title="Why step limits matter")
    conversation = make_conversation()
    make_turn(
        conversation,
        index=1,
        tool_calls=[
            {"step": 1, "name": "get_article_detail", "arguments": {"article_id": 3},
             "result": {"article_id": 3, "title": "Anatomy of the agent loop", "body": "…"}},
            {"step": 1, "name": "get_article_detail", "arguments": {"article_id": kept.pk},
             "ok": False, "error": "timed out"},
            {"step": 1, "name": "get_article_detail", "arguments": {"article_id": 999999},
             "ok": False, "error": "Article 999999 not found."},
        ],
    )  # fmt: skip

    page = staff_client.get(f"/admin/agent/conversation/{conversation.pk}/change/").content
    names = re.findall(r'<span class="dc-call__article">(.*?)</span>', page.decode())

    assert [html_lib.unescape(name) for name in names] == [
        "reads “Anatomy of the agent loop”",
        "reads “Why step limits matter”",
    ]
    chinese = staff_client.get(
        f"/admin/agent/conversation/{conversation.pk}/change/",
        headers={"accept-language": "zh-CN,zh;q=0.9"},
    ).content.decode()
    assert "阅读了《Anatomy of the agent loop》" in html_lib.unescape(chinese)
