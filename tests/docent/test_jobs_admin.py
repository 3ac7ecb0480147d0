"""The task queue's admin pages keep to the site's CSP: no inline styles to refuse."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

pytestmark = pytest.mark.django_db

# The list with the routine checks that succeeded, like the fixture's job (hidden by default).
LIST = "/admin/procrastinate/procrastinatejob/?routine=show"
STYLE_ATTRIBUTE = re.compile(r"<[^>]*\sstyle\s*=", re.IGNORECASE)


@pytest.fixture
def job_id() -> int:
    # procrastinate's own procedure, as the worker defers a job; then the events a run leaves.
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT procrastinate_defer_jobs_v1(ARRAY[ROW('maintenance', 'agent.spool_drain', 0,"
            " NULL, 'spool-drain', '{\"timestamp\": 1796180520}', NULL)"
            "::procrastinate_job_to_defer_v1])"
        )
        (ids,) = cursor.fetchone()
        cursor.execute(
            "UPDATE procrastinate_jobs SET status = 'succeeded', attempts = 2 WHERE id = %s",
            [ids[0]],
        )
    return ids[0]


def test_the_job_list_and_a_job_page_have_no_inline_styles(staff_client, job_id):
    for url in (
        LIST,
        f"/admin/procrastinate/procrastinatejob/{job_id}/change/",
    ):
        response = staff_client.get(url)
        assert response.status_code == 200
        html = response.content.decode()
        assert "spool_drain" in html
        assert STYLE_ATTRIBUTE.findall(html) == []
        # Their replacements are in the site's stylesheet, which the page links.
        assert "admin/docent-admin.css" in html

    listing = staff_client.get(LIST).content.decode()
    assert '<pre class="dc-job-args">timestamp: 1796180520</pre>' in listing
    assert '<ul class="dc-job-summary">' in listing and "<strong>Attempts:</strong> 2" in listing


def test_a_job_event_of_seconds_ago_says_just_now(staff_client, job_id):
    # timesince counts whole minutes: the job deferred a moment ago read "0 minutes ago".
    listing = staff_client.get(LIST).content.decode()
    summary = listing.split('<ul class="dc-job-summary">')[1].split("</ul>")[0]

    assert "just now</strong>" in summary, summary
    assert not re.search(r"\b0\s+minutes", summary), summary


def visible_text(html: str) -> str:
    html = re.sub(r"<(script|style|svg)\b.*?</\1>", " ", html, flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_the_job_pages_are_chinese_in_the_chinese_admin(staff_client, job_id):
    # procrastinate names nothing for translation: "Procrastinate jobs", "Succeeded",
    # "Retry Job", "Queue name" and "Attempts:" were English on the Chinese admin's pages.
    chinese = {"accept-language": "zh-CN,zh;q=0.9"}
    english = ["Procrastinate", "Succeeded", "Retry Job", "Queue", "Task Name", "Attempts",
               "Scheduled", "Args", "Summary", "Lock", "Priority", " ago", "Deferred"]  # fmt: skip
    pages = {
        "/admin/": "后台任务",
        LIST: "重试所选的失败或执行中的任务",
        f"/admin/procrastinate/procrastinatejob/{job_id}/change/": "尝试次数",
    }
    for url, expected in pages.items():
        response = staff_client.get(url, headers=chinese)
        assert response.status_code == 200
        text = visible_text(response.content.decode())
        assert expected in text, url
        assert [word for word in english if word in text] == [], url

    index = visible_text(staff_client.get("/admin/").content.decode())
    assert "Background jobs" in index  # and English stays English


def test_a_job_s_status_filter_and_summary_read_in_chinese(staff_client, job_id):
    url = LIST
    text = visible_text(
        staff_client.get(url, headers={"accept-language": "zh-CN"}).content.decode()
    )
    assert "成功" in text and "尝试次数： 2" in text and "PK" not in text
    assert "✅" not in text  # procrastinate's emoji drew a box without an emoji font
    assert "待执行" in text and "执行中" in text  # the status filter's choices


def test_a_job_s_events_are_a_table_of_what_happened_and_when(staff_client, job_id):
    page = staff_client.get(
        f"/admin/procrastinate/procrastinatejob/{job_id}/change/",
        headers={"accept-language": "zh-CN"},
    )
    html = page.content.decode()
    text = visible_text(html)
    # It read "Event 1 - Job 1: deferred at 2026-12-03 01:57:34.141321+00:00", then each event
    # was headed "任务事件: 已入队 · 2026年…" (Django's Western ":") above an "事件" and a "时间"
    # field saying the same again.
    events = html.split('class="module dc-job-events"')[1].split("</table>")[0]
    rows = re.findall(r"<tr><td>([^<]+)</td><td><time [^>]+>([^<]+)</time></td></tr>", events)
    assert rows and rows[0][0] == "已入队", events
    assert re.fullmatch(r"\d{4}年\d+月\d+日 \d\d:\d\d", rows[0][1]), rows
    assert "任务事件:" not in text and "任务事件：" not in text
    assert "查看任务" in text  # Django's Chinese: "查看 任务"
    assert "Event " not in text and "Pk" not in text and "ID：" in text  # a Chinese label colon


def test_the_job_list_names_each_task_in_full(staff_client, job_id):
    # procrastinate abbreviates the modules: "a.spool_drain" looked like a name cut off.
    listing = staff_client.get(LIST).content.decode()
    cell = listing.split('<td class="field-short_task_name">')[1].split("</td>")[0]

    assert cell == "agent.spool_drain"


def test_a_job_s_status_reads_as_a_capitalised_pill_like_a_turn_s(staff_client, job_id):
    # The list read procrastinate's raw values ("succeeded", "waiting") beside "Done" pills.
    listing = staff_client.get(LIST).content.decode()

    assert '<span class="dc-pill dc-pill--job-succeeded">Succeeded</span>' in listing
    # The status filter's choices.
    choices = re.findall(r"(?:\?|&amp;)status__exact=\w+\">([^<]+)</a>", listing)
    assert choices == ["Waiting", "Running", "Succeeded", "Failed", "Cancelled", "Aborted"]
    page = staff_client.get(f"/admin/procrastinate/procrastinatejob/{job_id}/change/")
    assert "<tr><td>Queued</td>" in page.content.decode()  # an event, no longer "queued"


def test_the_list_shows_arguments_as_short_name_value_lines(staff_client, job_id):
    # Indented JSON was four lines for two arguments, squeezed to a few characters a line at
    # 375 px. The job's own page keeps the JSON.
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE procrastinate_jobs SET args = %s WHERE id = %s",
            ['{"article_id": 12, "force": false, "note": "' + "x" * 100 + '"}', job_id],
        )
    listing = staff_client.get(LIST).content.decode()
    cell = listing.split('<td class="field-arguments">')[1].split("</td>")[0]
    args = cell.split('<pre class="dc-job-args">')[1]

    assert args.startswith("force: false\nnote: &quot;x")  # the article is named above them
    assert args.endswith("x…</pre>") and len(args) < 100
    page = staff_client.get(f"/admin/procrastinate/procrastinatejob/{job_id}/change/")
    assert "&quot;article_id&quot;: 12" in page.content.decode()


def filter_titles(html: str) -> list[str]:
    return [
        re.sub(r"\s+", " ", title).strip()
        for title in re.findall(r"<summary>(.*?)</summary>", html, flags=re.S)
    ]


def test_the_job_filters_are_bounded_and_name_a_missing_lock(staff_client, job_id):
    # "By queueing lock" listed every article-index-N (one per article): it grew with the blog.
    listing = staff_client.get(LIST).content.decode()

    assert "By queueing lock" not in filter_titles(listing)
    assert "By lock" in filter_titles(listing)
    # The lock filter's choice for jobs without one read a bare "-".
    assert re.search(r'\?lock__isnull=True[^"]*">No lock</a>', listing), listing
    found = staff_client.get(LIST + "&q=spool-drain")
    assert '<td class="field-short_task_name">agent.spool_drain' in found.content.decode()
    missed = staff_client.get("/admin/procrastinate/procrastinatejob/?q=article-index-99")
    assert '<td class="field-short_task_name">' not in missed.content.decode()


def test_the_chinese_filter_headings_have_no_stray_space(staff_client, job_id):
    # Django's Chinese " 以 %(filter_title)s" read "以 计划执行时间".
    listing = staff_client.get(LIST, headers={"accept-language": "zh-CN"}).content.decode()

    assert "按计划执行时间" in filter_titles(listing)
    assert [title for title in filter_titles(listing) if " " in title] == []


def test_the_scheduled_for_filter_offers_times_from_now_not_past_ranges(staff_client, job_id):
    # Django's date filter offered "Past 7 days" and "This month" for a time set only when a
    # job must wait (a retry's back-off): ranges that ended now, for jobs waiting for later.
    url = "/admin/procrastinate/procrastinatejob/"
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO procrastinate_jobs (queue_name, task_name, args, status, scheduled_at)"
            " SELECT 'index', 'blog.article_index', '{}', 'todo', now() + make_interval(mins => m)"
            " FROM unnest(ARRAY[5, 300, -5]) AS m RETURNING id"
        )
        soon, later, due = [row[0] for row in cursor.fetchall()]
    listing = staff_client.get(LIST).content.decode()

    choices = re.findall(r'(?:\?|&amp;)scheduled=\w+">([^<]+)</a>', listing)
    assert choices == ["Not scheduled: runs when a worker is free", "Within the next hour",
                       "Later than an hour from now", "Already due"]  # fmt: skip
    assert "Past 7 days" not in listing and "This year" not in listing
    expected = {"none": [job_id], "hour": [soon], "later": [later], "due": [due]}
    for value, ids in expected.items():
        page = staff_client.get(url, {"scheduled": value, "routine": "show"}).content.decode()
        shown = [
            int(pk) for pk in re.findall(r'<th class="field-id"><a href="[^"]*/(\d+)/change/', page)
        ]
        assert shown == ids, value


def test_the_list_opens_without_the_routine_checks_that_succeeded(staff_client, job_id):
    # The periodic checks leave ~8,600 succeeded jobs a day, kept 72 hours: the list opened on
    # pages of them, and an article's indexing or a failure was somewhere behind.
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO procrastinate_jobs (queue_name, task_name, args, status) VALUES"
            " ('index', 'blog.article_index', '{\"article_id\": 7}', 'succeeded'),"
            " ('maintenance', 'docent.jobs_prune', '{}', 'failed') RETURNING id"
        )
        indexed, failed = [row[0] for row in cursor.fetchall()]

    def listed(url: str) -> list[int]:
        page = staff_client.get(url).content.decode()
        found = re.findall(r'<th class="field-id"><a href="[^"]*/(\d+)/change/', page)
        return sorted(int(pk) for pk in found)

    assert listed("/admin/procrastinate/procrastinatejob/") == [indexed, failed]
    assert listed(LIST) == sorted([job_id, indexed, failed])
    chinese = staff_client.get("/admin/procrastinate/procrastinatejob/", HTTP_ACCEPT_LANGUAGE="zh")
    assert "按例行检查" in filter_titles(chinese.content.decode())


def _index_jobs(*article_ids: int) -> None:
    # As blog.indexing queues them, through procrastinate's own procedure.
    rows = ",".join(
        f"ROW('index', 'blog.article_index', 0, 'index', 'article-index-{n}',"
        f' \'{{"article_id": {n}, "force": false}}\', NULL)::procrastinate_job_to_defer_v1'
        for n in article_ids
    )
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT procrastinate_defer_jobs_v1(ARRAY[{rows}])")  # noqa: S608


def test_an_indexing_job_names_its_article_or_says_it_was_deleted(staff_client, make_article):
    # The list read "article_id: 15": which article, and did it still exist?
    kept = make_article(title="pgvector <and> HNSW")
    gone = make_article(title="A short-lived note")
    gone_id = gone.pk
    gone.delete()
    _index_jobs(kept.pk, gone_id)

    listing = staff_client.get(LIST + "&task_name=blog.article_index").content.decode()
    cells = re.findall(r'<td class="field-arguments">(.*?)</td>', listing, flags=re.S)
    chinese = staff_client.get(LIST, headers={"accept-language": "zh-CN"}).content.decode()

    link = f'<a href="/admin/blog/article/{kept.pk}/change/">pgvector &lt;and&gt; HNSW</a>'
    assert sorted(cell.split("<pre")[0] for cell in cells) == sorted(
        [
            f'<div class="dc-job-article">{link}</div>',
            f'<div class="dc-job-article dc-muted">Article {gone_id}, deleted since</div>',
        ]
    )
    assert "article_id" not in "".join(cells)
    assert f"文章 {gone_id}，已被删除" in chinese
    job = re.search(r"procrastinatejob/(\d+)/change/", listing).group(1)
    page = staff_client.get(f"/admin/procrastinate/procrastinatejob/{job}/change/").content
    assert "Article:" in page.decode() and "dc-job-article" in page.decode()  # on its page too


def test_the_job_list_reads_its_articles_in_one_query(staff_client, make_article):
    def queries(count: int) -> int:
        ids = [make_article(title=f"Post {n}", slug=f"post-{count}-{n}").pk for n in range(count)]
        _index_jobs(*ids)
        with CaptureQueriesContext(connection) as captured:
            assert staff_client.get(LIST).status_code == 200
        return len(captured)

    assert queries(1) == queries(5)


def test_a_job_action_says_what_it_did_of_how_many(staff_client, job_id):
    # procrastinate's actions said nothing: "Cancel" on a job that had already run left the list
    # as it was, and the reviewer could not tell whether it had worked.
    for language, expected in [
        ("en", "0 of 1 selected job cancelled: only waiting jobs can be."),
        ("zh-CN", "所选 1 个任务中有 0 个已取消：只有待执行的任务可以取消。"),
    ]:
        response = staff_client.post(
            LIST,
            {"action": "cancel", "_selected_action": [job_id]},
            headers={"accept-language": language},
            follow=True,
        )
        messages = [(m.level_tag, m.message) for m in response.context["messages"]]
        assert messages == [("warning", expected)]


def test_a_job_page_says_nothing_with_a_dash_as_the_assistant_s_pages_do(staff_client, job_id):
    # The job's empty article and schedule read Django's "-", a stray hyphen beside "—" elsewhere.
    html = staff_client.get(f"/admin/procrastinate/procrastinatejob/{job_id}/change/").content
    html = html.decode()

    assert '<div class="readonly">—</div>' in html
    assert '<div class="readonly">-</div>' not in html


@pytest.mark.parametrize(
    ("language", "name"),
    [("en", "Save the turns held during an outage"), ("zh-CN", "保存故障期间暂存的轮次")],
)
def test_a_job_page_is_titled_by_what_the_job_is_for(staff_client, job_id, language, name):
    # Its title and breadcrumb were procrastinate's str(): "agent.spool_drain[7](timestamp=…)".
    page = staff_client.get(
        f"/admin/procrastinate/procrastinatejob/{job_id}/change/",
        headers={"accept-language": language},
    ).content.decode()
    crumbs = page.split('<ol class="breadcrumbs">')[1].split("</ol>")[0]

    assert re.search(rf"<title>{name} · #{job_id} \| ", page)
    assert f'<li aria-current="page">{name} · #{job_id}</li>' in crumbs
    assert "timestamp" not in crumbs
    assert f"<h2>{name} · #{job_id}</h2>" in page


def test_every_task_of_the_site_has_a_name_for_its_job_pages():
    from procrastinate.contrib.django import app

    from docent.admin import TASK_PURPOSES

    ours = {name for name in app.tasks if not name.split(":")[-1].startswith("procrastinate.")}
    assert ours and ours == set(TASK_PURPOSES)


def test_a_reviewer_who_may_only_view_jobs_cannot_act_on_them(client, job_id):
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Permission

    viewer = get_user_model().objects.create_user("viewer", password="a-long-password")
    viewer.is_staff = True
    viewer.save()
    viewer.user_permissions.set(Permission.objects.filter(codename="view_procrastinatejob"))
    client.force_login(viewer)
    with connection.cursor() as cursor:
        cursor.execute("UPDATE procrastinate_jobs SET status = 'todo' WHERE id = %s", [job_id])

    listed = client.get(LIST).content.decode()
    client.post(LIST, {"action": "cancel", "_selected_action": [job_id]}, follow=True)

    assert listed.count('name="action"') == 0  # no action menu at all
    with connection.cursor() as cursor:
        cursor.execute("SELECT status FROM procrastinate_jobs WHERE id = %s", [job_id])
        assert cursor.fetchone() == ("todo",)
