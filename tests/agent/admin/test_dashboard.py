import re
from datetime import UTC, datetime, timedelta
from html import unescape as html_unescape

import pytest
from django.utils import timezone, translation

from agent import charts
from agent.loop import INVALID_ARGUMENTS, NOT_AN_OBJECT
from agent.models import ToolCall, Turn
from agent.selectors import dashboard_metrics
from tests.agent.admin.factories import build_dashboard_fixture, make_conversation, make_turn

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 11, 20, 18, 0, tzinfo=UTC)


def test_metrics_match_the_known_fixture():
    expected = build_dashboard_fixture(now=NOW)

    metrics = dashboard_metrics(days=7, now=NOW)

    assert (metrics.since.isoformat(), metrics.until.isoformat()) == ("2026-11-14", "2026-11-20")
    assert metrics.turns == expected["turns"]
    assert metrics.conversations == expected["conversations"]
    assert metrics.unanswered == expected["unanswered"]
    assert (metrics.finished, metrics.voted, metrics.downvoted) == (
        expected["finished"],
        expected["voted"],
        expected["downvoted"],
    )
    assert metrics.vote_rate == pytest.approx(2 / 3)
    assert metrics.downvote_rate == pytest.approx(1 / 2)
    assert len(metrics.days) == 7
    assert {row.day: row.turns for row in metrics.days if row.turns} == expected["turns_by_day"]
    assert {
        row.day: (row.tokens_in, row.tokens_out) for row in metrics.days if row.turns
    } == expected["tokens_by_day"]
    assert {status: count for status, _, count in metrics.outcomes} == expected["outcomes"]
    assert metrics.step_counts == expected["step_counts"]
    assert {
        tool.name: {
            "calls": tool.calls,
            "executed": tool.executed_calls,
            "errors": tool.errors,
            "p50": tool.p50_ms,
            "p95": tool.p95_ms,
        }
        for tool in metrics.tools
    } == expected["tools"]
    assert metrics.tool_error_rate == pytest.approx(expected["tool_error_rate"])
    assert metrics.turn_p50_ms == pytest.approx(expected["turn_p50_ms"])
    assert metrics.turn_p95_ms == pytest.approx(expected["turn_p95_ms"])
    assert metrics.ttft_p50_ms == pytest.approx(expected["ttft_p50_ms"])


def test_an_empty_period_has_zeroes_not_errors():
    metrics = dashboard_metrics(days=30, now=NOW)

    assert metrics.turns == 0
    assert [row.turns for row in metrics.days] == [0] * 30
    assert metrics.tools == []
    assert metrics.tool_error_rate is None
    assert metrics.vote_rate is None and metrics.downvote_rate is None
    assert metrics.turn_p50_ms is None


def test_dashboard_page_shows_the_numbers(staff_client):
    build_dashboard_fixture(now=timezone.now())

    response = staff_client.get("/admin/agent/conversation/dashboard/?days=7")

    html = response.content.decode()
    assert response.status_code == 200
    assert 'aria-current="page">7 days' in html
    today = timezone.localdate()
    since = today - timedelta(days=6)
    # The period is dated as the lists date things ("Nov 14 2026"), not "Nov. 14, 2026".
    assert f"{since:%b} {since.day} {since.year} – {today:%b} {today.day} {today.year}" in html
    kpis = {
        "Turns": "5",
        "Unanswered": "2",
        "Median turn": "1.00 s",
        "Median first token": "175 ms",
        "Tool error rate": "12.5%",
        "Vote rate": "66.7%",
        "Down-vote rate": "50%",
    }
    for label, value in kpis.items():
        figure = rf'<dt>(<a class="dc-kpi__link" href="[^"]+">)?{label}(</a>)?</dt>\n      <dd>'
        assert re.search(figure + rf'<span class="dc-kpi__value">{re.escape(value)}</span>', html)
    assert "p95 3.60 s" in html
    assert "1 of 8 executed calls" in html
    rows = {
        "search_knowledge_base": ["6", "5", "0", "0%", "0", "20 ms", "38 ms"],
        "get_article_detail": ["2", "2", "1", "50%", "0", "40 ms", "49 ms"],
        "list_articles": ["1", "1", "0", "0%", "0", "5 ms", "5 ms"],
    }
    for name, cells in rows.items():
        row = html.split(f'data-tool="{name}"')[1].split("</tr>")[0]
        assert [cell.split("</td>")[0] for cell in row.split('<td class="dc-num">')[1:]] == cells
    for status, count in {"done": 2, "max_steps": 1, "error": 1, "cancelled": 1}.items():
        assert f'data-status="{status}"><th scope="row">' in html
        assert (
            html.split(f'data-status="{status}">')[1]
            .split("</tr>")[0]
            .endswith(f"<td>{count}</td>")
        )
    assert html.split('data-steps="5">')[1].split("</tr>")[0].endswith("<td>1</td>")


def test_dashboard_charts_are_inline_svg_with_titles(staff_client):
    build_dashboard_fixture(now=timezone.now())

    html = staff_client.get("/admin/agent/conversation/dashboard/?days=7").content.decode()

    assert html.count('<svg class="dc-chart"') == 4
    for chart_id in ("turns-per-day", "outcomes", "step-counts", "tokens-per-day"):
        assert f'<title id="{chart_id}-title">' in html
        assert f'<desc id="{chart_id}-desc">' in html
    assert "<script" not in html.split('<div id="content"')[1]
    assert " style=" not in html


def test_chart_labels_are_escaped():
    svg = charts.bar_chart(
        chart_id="x", title="<b>t</b>", desc="d & d", points=[("<script>", 3), ("ok", 1)]
    )

    assert "<script>" not in svg
    assert "&lt;script&gt;" in svg
    assert "&lt;b&gt;t&lt;/b&gt;" in svg


def test_number_formats():
    # In English whatever an earlier test left active in this thread (a random order of the
    # clean-clone CI once left zh-hans, and "38 ms" read "38 毫秒").
    with translation.override("en"):
        assert charts.format_ms(None) == "—"
        assert charts.format_ms(38.0) == "38 ms"
        assert charts.format_ms(38.5) == "38.5 ms"
        assert charts.format_ms(3600) == "3.60 s"
        assert charts.format_ms(18_440) == "18.4 s"
        assert charts.format_ms(184_000) == "3 min 4 s"
        assert charts.format_percent(0.125) == "12.5%"
        assert charts.format_count(12345) == "12,345"
    with translation.override("zh-hans"):
        assert charts.format_ms(184_000) == "3 分 4 秒"


def test_unknown_period_falls_back_to_thirty_days(staff_client):
    response = staff_client.get("/admin/agent/conversation/dashboard/?days=9999")

    assert response.status_code == 200
    assert response.context["days"] == 30


def test_token_axis_ticks_read_as_1k_and_10k():
    assert [charts.format_compact(v) for v in (0, 500, 1000, 2500, 10_000, 1_200_000)] == [
        "0",
        "500",
        "1k",
        "2.5k",
        "10k",
        "1.2M",
    ]

    def ticks(values: list[float]) -> list[str]:
        svg = charts.line_chart(
            chart_id="t",
            title="Tokens",
            desc="d",
            labels=["a", "b"],
            series=[("Input", values, "input")],
            fmt=charts.format_compact,
            floor=1000,
        )
        return re.findall(r'text-anchor="end">([^<]+)<', svg)

    assert ticks([0, 0]) == ["0", "500", "1k"]  # a quiet week, not "0, 0, 1"
    assert ticks([3_000, 16_000]) == ["0", "10k", "20k"]


@pytest.mark.parametrize(
    ("peak", "expected"),
    [
        (0, ["0", "1", "2"]),
        (1, ["0", "1", "2"]),
        (4, ["0", "2", "4"]),
        (5, ["0", "5", "10"]),
        (7, ["0", "5", "10"]),
        (30, ["0", "20", "40"]),
        (45, ["0", "25", "50"]),
    ],
)
def test_count_axes_label_the_middle_line_with_its_true_value(peak, expected):
    """Four turns drew an axis of 5 whose middle line (2.5) was labelled "2"."""
    svg = charts.bar_chart(chart_id="c", title="Turns", desc="d", points=[("a", peak), ("b", 0)])
    assert re.findall(r'text-anchor="end">([^<]+)<', svg) == expected


def test_the_dashboard_token_axis_uses_compact_ticks(staff_client):
    response = staff_client.get("/admin/agent/conversation/dashboard/")

    tokens = str(response.context["tokens_chart"])
    assert re.findall(r'text-anchor="end">([^<]+)<', tokens) == ["0", "500", "1k"]


def test_a_call_the_model_sent_bad_arguments_for_is_not_a_tool_error():
    # "query": 5 was counted a tool error: the dashboard's error rate and the "tool error"
    # filters rose when the model guessed, though the tool never ran.
    conversation = make_conversation(created_at=NOW)
    make_turn(conversation, started_at=NOW - timedelta(hours=1), tool_calls=[
        {"ok": False, "error": f"{INVALID_ARGUMENTS}search_knowledge_base: query: not text."},
        {"ok": False, "error": f"{NOT_AN_OBJECT}search_knowledge_base are not a JSON object."},
        {"ok": False, "error": "TimeoutError"},
    ])  # fmt: skip

    [search] = dashboard_metrics(days=7, now=NOW).tools
    calls = ToolCall.objects.order_by("pk")

    assert (search.executed_calls, search.errors, search.refused) == (3, 1, 2)
    assert [call.outcome for call in calls] == ["refused", "refused", "error"]
    assert list(calls.filter(ToolCall.OUTCOMES["error"])) == [calls[2]]


def test_a_call_cancelled_as_it_ran_is_not_counted_as_a_tool_error():
    conversation = make_conversation(created_at=NOW)
    make_turn(conversation, status="cancelled", started_at=NOW - timedelta(hours=1), tool_calls=[
        {"ok": False, "error": "cancelled"},
        {"ok": False, "error": "TimeoutError"},
    ])  # fmt: skip

    [search] = dashboard_metrics(days=7, now=NOW).tools

    assert (search.executed_calls, search.errors) == (2, 1)


def test_the_unanswered_figure_says_how_many_were_asked_while_indexing(staff_client):
    conversation = make_conversation()
    now = timezone.now()
    make_turn(conversation, index=1, answered=False, index_incomplete=True, started_at=now)
    make_turn(conversation, index=2, answered=False, started_at=now)

    assert dashboard_metrics(days=7).unanswered_while_indexing == 1
    html = staff_client.get("/admin/agent/conversation/dashboard/?days=7").content.decode()
    assert "declined, or cited no article; 1 asked while indexing" in html


def test_small_talk_is_not_counted_as_unanswered(staff_client):
    conversation = make_conversation()
    now = timezone.now()
    make_turn(conversation, index=1, user_message="thanks!", answered=False, small_talk=True,
              index_incomplete=True, started_at=now)  # fmt: skip
    make_turn(conversation, index=2, answered=False, started_at=now)

    metrics = dashboard_metrics(days=7)

    assert (metrics.turns, metrics.unanswered, metrics.unanswered_while_indexing) == (2, 1, 0)


def test_a_dashboard_without_turns_says_how_to_get_some_instead_of_empty_charts(staff_client):
    # A first run showed five empty charts and "0 turns took 0 steps".
    html = staff_client.get("/admin/agent/conversation/dashboard/").content.decode()

    assert 'data-testid="dashboard-empty"' in html and "No turns in this period yet" in html
    assert "turns-per-day" not in html and "dc-grid" not in html
    assert "0 turns took 0 steps" not in html


def test_offline_turns_explain_the_zero_in_the_tokens_card(staff_client):
    # A first run (offline model) showed "Tokens 0 · input and output", as if nothing counted.
    conversation = make_conversation()
    make_turn(conversation, model="offline-extractive", offline=True, input_tokens=0,
              output_tokens=0, started_at=timezone.now())  # fmt: skip

    html = staff_client.get("/admin/agent/conversation/dashboard/?days=7").content.decode()
    assert "none reported; the offline model counts none" in html
    # Nor a flat line at 0 on an axis to 1k, under "Tokens per day".
    assert 'data-testid="tokens-empty"' in html and 'id="tokens-per-day-title"' not in html
    make_turn(conversation, index=2, started_at=timezone.now())  # a model that counts
    html = staff_client.get("/admin/agent/conversation/dashboard/?days=7").content.decode()
    assert "none reported" not in html and "input and output" in html
    assert 'data-testid="tokens-empty"' not in html and 'id="tokens-per-day-title"' in html


def test_one_turn_reads_one_turn_in_the_charts_in_english_and_chinese(staff_client):
    # The charts read "1 turns, Nov 20 to Nov 26.", "1 turns took 1 steps" and a bar's
    # tooltip "Nov 26: 1 turns": fixed words where the count needs its plural form.
    make_turn(make_conversation(), step_count=1, started_at=timezone.now())
    url = "/admin/agent/conversation/dashboard/?days=7"

    html = staff_client.get(url).content.decode()
    assert "1 turn took 1 step." in html and ": 1 turn</title>" in html
    assert re.search(r"<desc id=\"turns-per-day-desc\">1 turn, ", html)
    assert "1 turns" not in html and "1 steps" not in html

    chinese = staff_client.get(url, headers={"accept-language": "zh-CN"}).content.decode()
    assert "，1 轮用了 1 步。</desc>" in chinese and ": 1 轮</title>" in chinese
    assert '<desc id="turns-per-day-desc">1 轮，' in chinese
    assert '<desc id="outcomes-desc">完成：1，' in chinese  # Chinese punctuation, not ", "


def test_many_turns_keep_their_plurals(staff_client):
    conversation = make_conversation()
    for index in (1, 2):
        make_turn(conversation, index=index, step_count=3, started_at=timezone.now())

    html = staff_client.get("/admin/agent/conversation/dashboard/?days=7").content.decode()
    assert "2 turns took 3 steps." in html and ": 2 turns</title>" in html


def test_the_dashboards_figures_open_the_turns_they_count(staff_client):
    # "Unanswered 2" led nowhere: finding those two meant rebuilding the filters by hand.
    build_dashboard_fixture(now=timezone.now())
    page = staff_client.get("/admin/agent/conversation/dashboard/?days=7").content.decode()
    links = dict(
        (label, html_unescape(url))
        for url, label in re.findall(r'<a class="dc-kpi__link" href="([^"]+)">([^<]+)</a>', page)
    )
    expected = {"Turns": 5, "Unanswered": 2, "Down-vote rate": 1, "Tool error rate": 1}
    assert set(links) == set(expected)
    for label, count in expected.items():
        response = staff_client.get(links[label])
        assert response.status_code == 200, label
        assert response.context["cl"].result_count == count, label


def test_a_busy_dashboards_small_print_groups_its_thousands(staff_client):
    # Under "1,891" unanswered, the vote card read "2327 of 3943 answers voted on" (walk 21).
    conversation = make_conversation()
    Turn.objects.bulk_create(
        Turn(conversation=conversation, index=n, user_message="q", answer="a", status="done",
             answered=True, vote="down" if n % 2 else "up",
             started_at=timezone.now() - timedelta(minutes=n))
        for n in range(1, 1202)
    )  # fmt: skip

    page = html_unescape(staff_client.get("/admin/agent/conversation/dashboard/").content.decode())

    assert "1,201 of 1,201 answers voted on" in page
    assert "601 of 1,201 votes" in page
    assert "1,201 turns, " in page  # the turns chart's description, for screen readers
