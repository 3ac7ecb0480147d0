import json
import re
from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth import get_user_model

from blog.models import Article

pytestmark = pytest.mark.django_db


def test_admin_requires_staff(client):
    response = client.get("/admin/blog/article/")

    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]


def test_non_staff_user_is_refused(client):
    user = get_user_model().objects.create_user("reader", password="pw")
    client.force_login(user)

    response = client.get("/admin/blog/article/")

    assert response.status_code == 302


def test_staff_sees_articles_with_filters_and_search(staff_client, make_article):
    make_article(title="Pgvector notes", slug="pgvector-notes")

    response = staff_client.get("/admin/blog/article/?q=pgvector")

    html = response.content.decode()
    assert response.status_code == 200
    assert "Pgvector notes" in html
    assert "By status" in html


def test_add_form_prepopulates_the_slug(staff_client):
    html = staff_client.get("/admin/blog/article/add/").content.decode()

    assert "prepopulated" in html
    assert 'data-prepopulated-dependencies="[&quot;#id_title&quot;]"' in html or "id_title" in html


def test_change_form_links_to_the_site(staff_client, make_article):
    article = make_article(title="Visible", slug="visible")

    html = staff_client.get(f"/admin/blog/article/{article.pk}/change/").content.decode()

    assert "View on site" in html


def test_change_form_dates_the_index_as_the_list_does(staff_client, make_article):
    article = make_article(title="Indexed", slug="indexed")
    article.indexed_at = datetime(2026, 12, 4, 10, 21, tzinfo=UTC)
    article.save(update_fields=["indexed_at"])

    html = staff_client.get(f"/admin/blog/article/{article.pk}/change/").content.decode()

    # Django's own form of a read-only date was "Dec. 4, 2026, 10:21 a.m." beside the list's.
    assert "Dec 4 2026, 10:21" in html and "a.m." not in html


def test_a_drafts_change_form_offers_a_preview_not_the_site(staff_client, make_article):
    # "View on site" on a draft promised a public page; it opens a preview only staff can see.
    article = make_article(title="Unfinished", slug="unfinished", status="draft")

    html = staff_client.get(f"/admin/blog/article/{article.pk}/change/").content.decode()

    assert "Preview draft" in html and "View on site" not in html
    assert 'class="viewsitelink">Preview draft<' in html and "historylink" in html


def test_the_article_form_gives_the_body_room_and_the_summary_three_lines(staff_client):
    # The body (the article itself, in Markdown) opened as small as the one-line summary.
    html = staff_client.get("/admin/blog/article/add/").content.decode()

    body = re.search(r"<textarea[^>]*id=\"id_body\"[^>]*>", html).group(0)
    summary = re.search(r"<textarea[^>]*id=\"id_summary\"[^>]*>", html).group(0)
    assert 'rows="24"' in body and "dc-article-body" in body
    assert 'rows="3"' in summary
    assert "dc-article-title" in re.search(r"<input[^>]*id=\"id_title\"[^>]*>", html).group(0)


@pytest.mark.parametrize(
    ("status", "note"),
    [("draft", "A draft is not on the public site"), ("published", "once it is indexed")],
)
def test_saving_an_article_says_when_the_assistant_can_answer_from_it(staff_client, status, note):
    # "The article … was added successfully." and nothing about the search index.
    form = {"title": "Zeppelins", "slug": "zeppelins", "summary": "", "tags": [],
            "body": "## Masts\n\nMoored to masts.", "status": status}  # fmt: skip
    page = staff_client.post("/admin/blog/article/add/", form, follow=True).content.decode()

    assert "was added successfully" in page and note in page
    assert page.index("was added successfully") < page.index(note)
    article = Article.objects.get(slug="zeppelins")
    form["body"] += "\n\nAnd to the ground in a storm."
    page = staff_client.post(f"/admin/blog/article/{article.pk}/change/", form, follow=True)
    assert note in page.content.decode()


def test_saving_a_scheduled_article_says_the_assistant_waits_for_its_date(staff_client):
    # Published with a later date is indexed but not searchable until then (published_q): the
    # note said "once it is indexed, usually within seconds", and the assistant did not know it.
    form = {"title": "Airships", "slug": "airships", "summary": "", "tags": [],
            "body": "## Hangars\n\nHuge sheds.", "status": "published",
            "published_at_0": "2099-01-05", "published_at_1": "09:30:00"}  # fmt: skip
    page = staff_client.post("/admin/blog/article/add/", form, follow=True).content.decode()

    assert "was added successfully" in page
    assert "once it is indexed, usually within seconds" not in page
    assert "Scheduled for Jan 5 2099, 09:30" in page

    form.update(slug="airships-zh", title="飞艇")
    page = staff_client.post(
        "/admin/blog/article/add/", form, follow=True, headers={"accept-language": "zh-hans"}
    ).content.decode()
    assert "定于 2099年1月5日 09:30 发布" in page


def test_a_chinese_title_with_no_slug_is_spelled_in_pinyin(staff_client, make_article):
    # The slug script keeps ASCII only, and the server gave such a title "article", then
    # "article-2", ...: addresses that said nothing about the article.
    form = {"title": "酸面包入门", "slug": "", "summary": "", "tags": [],
            "body": "## 面团\n\n面粉和水。", "status": "draft"}  # fmt: skip

    response = staff_client.post("/admin/blog/article/add/", form, follow=True)

    assert "was added successfully" in response.content.decode()
    article = Article.objects.get(title="酸面包入门")
    assert article.slug == "suan-mian-bao-ru-men"
    # The same title again is numbered; a mixed one keeps its Latin words, phrases read right.
    staff_client.post("/admin/blog/article/add/", form)
    assert Article.objects.filter(slug="suan-mian-bao-ru-men-2").exists()
    staff_client.post("/admin/blog/article/add/", {**form, "title": "Django 与银行"})
    assert Article.objects.filter(slug="django-yu-yin-hang").exists()
    form.update(title="Sourdough basics", slug="")  # an ASCII title still gives its own words
    staff_client.post("/admin/blog/article/add/", form)
    assert Article.objects.filter(slug="sourdough-basics").exists()
    # A saved address stays: a new title does not move the article.
    edit = {**form, "title": "全麦酸面包", "slug": article.slug}
    staff_client.post(f"/admin/blog/article/{article.pk}/change/", edit)
    assert Article.objects.get(pk=article.pk).slug == "suan-mian-bao-ru-men"


def test_a_long_title_s_slug_is_cut_at_a_word():
    from blog.services import article_slug_from_title

    slug = article_slug_from_title(title="长城" * 40)

    assert len(slug) <= 100 and slug.endswith("-cheng"), slug
    assert len(article_slug_from_title(title="x" * 150)) == 100  # one word: cut anyway


def test_the_slug_field_says_what_it_is_and_what_to_type_for_a_chinese_title(staff_client):
    html = staff_client.get("/admin/blog/article/add/").content.decode()

    assert "(/articles/sourdough-basics/)" in html and "Chinese spelled in pinyin" in html
    assert 'placeholder="made from the title when you save"' in html
    # The script that keeps Django's ASCII-only slug script from writing "django" for
    # "Django 入门" (the server spells the whole title instead).
    assert re.search(r'src="/static/admin/docent-article-slug.js"[^>]*type="module"', html)
    chinese = staff_client.get("/admin/blog/article/add/", HTTP_ACCEPT_LANGUAGE="zh-CN")
    assert "中文按拼音拼写" in chinese.content.decode()


def index_section(html: str) -> str:
    cell = html.split('<strong class="dc-index-state">')[1]
    return re.sub(r"<[^>]+>", "", cell.split("</div>")[0])


@pytest.mark.parametrize(
    ("status", "indexed", "expected"),
    [
        ("draft", None, "not indexed (draft) · Drafts are not indexed"),
        ("published", None, "pending · Waiting to be indexed"),
        ("published", "before the edit", "outdated · The last change is being indexed"),
        ("published", "after the edit", "up to date · The assistant answers from this version."),
    ],
)
def test_the_article_page_says_where_it_stands_in_the_search_index(
    staff_client, make_article, status, indexed, expected
):
    # The page showed "Indexed at: —" alone, and the note after a save pointed at a column of
    # the list: an author editing the article could not tell whether the assistant knew it.
    article = make_article(title="Zeppelins", status=status)
    if indexed:
        moment = article.updated_at + (timedelta(seconds=1 if indexed == "after the edit" else -1))
        Article.objects.filter(pk=article.pk).update(indexed_at=moment, index_hash="h")
    html = staff_client.get(f"/admin/blog/article/{article.pk}/change/").content.decode()

    assert index_section(html).startswith(expected), index_section(html)


def test_a_scheduled_article_s_page_says_the_assistant_waits_for_its_date(
    staff_client, make_article
):
    article = make_article(title="Airships", published_at=datetime(2099, 1, 5, 9, 30, tzinfo=UTC))
    Article.objects.filter(pk=article.pk).update(
        indexed_at=article.updated_at + timedelta(seconds=1), index_hash="h"
    )
    html = staff_client.get(f"/admin/blog/article/{article.pk}/change/").content.decode()

    assert index_section(html).startswith("up to date · Scheduled for Jan 5 2099")


def test_unpublishing_clears_the_date_and_publishing_again_dates_it_anew(staff_client):
    # A draft kept its first publication date: the list read "Published Dec 4" beside "Draft",
    # and publishing again put it back under that old date, below everything written since.
    form = {"title": "Zeppelins", "slug": "zeppelins", "summary": "", "tags": [],
            "body": "Moored to masts.", "status": "published",
            "published_at_0": "2026-01-05", "published_at_1": "09:30:00"}  # fmt: skip
    staff_client.post("/admin/blog/article/add/", form)
    article = Article.objects.get(slug="zeppelins")
    url = f"/admin/blog/article/{article.pk}/change/"

    page = staff_client.post(url, {**form, "status": "draft"}, follow=True).content.decode()

    article.refresh_from_db()
    assert article.published_at is None
    assert "Its publication date, Jan 5 2026, 09:30, was cleared" in page
    listing = staff_client.get("/admin/blog/article/").content.decode()
    assert re.search(r'<td class="field-published">—</td>', listing), listing
    staff_client.post(url, {**form, "status": "published", "published_at_0": "",
                            "published_at_1": ""})  # fmt: skip
    article.refresh_from_db()
    assert article.published_at > datetime.now(UTC) - timedelta(minutes=1)
    # A draft saved again (not unpublished now) gets no such note.
    staff_client.post(url, {**form, "status": "draft"}, follow=True)  # its messages read
    page = staff_client.post(url, {**form, "status": "draft"}, follow=True).content.decode()
    assert "was cleared" not in page


def test_an_unpublished_article_shows_no_indexing_date_beside_not_indexed(staff_client):
    # The job that drops a draft's chunks (and clears its date) runs after the save: the page
    # read "not indexed (draft)" above "Indexed at: <the old date>" until a reload.
    form = {"title": "Zeppelins", "slug": "zeppelins", "summary": "", "tags": [],
            "body": "Moored to masts.", "status": "published",
            "published_at_0": "", "published_at_1": ""}  # fmt: skip
    staff_client.post("/admin/blog/article/add/", form)
    article = Article.objects.get(slug="zeppelins")
    Article.objects.filter(pk=article.pk).update(
        indexed_at=datetime(2026, 12, 4, 19, 57, tzinfo=UTC), index_hash="h"
    )
    url = f"/admin/blog/article/{article.pk}/change/"

    draft = {**form, "status": "draft", "_continue": "1"}  # back on the article's own page
    page = staff_client.post(url, draft, follow=True).content.decode()

    assert index_section(page).startswith("not indexed (draft)")
    indexed = page.split('class="form-row field-indexed')[1].split("</div>\n")[0]
    assert re.sub(r"<[^>]+>|\s+", " ", indexed).split("Indexed at:")[1].strip() == "—"
    state = f"/admin/blog/article/{article.pk}/index-state/"
    assert staff_client.get(state).json()["indexed"] == "—"


PREVIEW = "/admin/blog/article/preview/"


def test_the_add_form_previews_the_body_as_the_site_renders_it_without_saving(staff_client):
    # There was no way to see the Markdown rendered before saving (and so publishing it).
    add = staff_client.get("/admin/blog/article/add/").content.decode()
    assert re.search(r'<button type="submit" class="button dc-preview-button" '
                     r'formaction="/admin/blog/article/preview/" formtarget="docent-preview"',
                     add)  # fmt: skip
    form = {"title": "Zeppelins", "slug": "", "summary": "Big ones.", "tags": [],
            "body": "## Masts\n\nMoored **fast**.\n\n<script>alert(1)</script>",
            "status": "draft"}  # fmt: skip

    page = staff_client.post(PREVIEW, form)

    html = page.content.decode()
    assert page.status_code == 200 and "no-store" in page["Cache-Control"]
    assert '<h2 id="sec-masts">Masts</h2>' in html and "<strong>fast</strong>" in html
    assert "<script>alert" not in html and "nothing is saved" in html
    assert 'id="chat-launcher"' not in html  # no assistant for an article not yet written
    assert not Article.objects.exists()


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_preview_has_no_language_switch_that_leads_to_an_error(staff_client, language):
    # The switch sends its page's address on; the preview's answers a posted form only, so the
    # author's click on "English" in a Chinese preview ended on a bare "HTTP ERROR 405".
    form = {"title": "预览", "slug": "", "summary": "", "tags": [], "body": "正文",
            "status": "draft"}  # fmt: skip

    preview = staff_client.post(PREVIEW, form, HTTP_ACCEPT_LANGUAGE=language).content.decode()
    home = staff_client.get("/", HTTP_ACCEPT_LANGUAGE=language).content.decode()

    assert 'class="lang-switch"' in home  # the site's pages keep theirs
    assert 'class="lang-switch"' not in preview and "正文" in preview


def test_the_preview_is_for_staff_with_a_csrf_token_only(staff_client):
    from django.test import Client

    assert staff_client.get(PREVIEW).status_code == 405
    anonymous = Client()
    assert anonymous.post(PREVIEW, {"body": "x"}).status_code == 302  # to the login
    reader = Client()
    reader.force_login(get_user_model().objects.create_user("reader", password="pw"))
    assert reader.post(PREVIEW, {"body": "x"}).status_code == 302
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(get_user_model().objects.create_superuser("ed", password="pw"))
    assert strict.post(PREVIEW, {"body": "x"}).status_code == 403
    # Staff, but not allowed to write articles (a moderator of conversations, say).
    moderator = Client()
    moderator.force_login(get_user_model().objects.create_user("mod", password="pw", is_staff=True))
    assert moderator.post(PREVIEW, {"body": "x"}).status_code == 403


def test_the_index_line_updates_itself_until_its_state_is_final(staff_client, make_article):
    # The page said "reload the page to see it done": nothing updated it after a save.
    article = make_article(title="Zeppelins")
    url = f"/admin/blog/article/{article.pk}/index-state/"
    html = staff_client.get(f"/admin/blog/article/{article.pk}/change/").content.decode()
    assert f'data-state="pending" data-final="false" data-url="{url}"' in html
    assert re.search(r'src="/static/admin/docent-index-state.js"[^>]*type="module"', html)

    pending = staff_client.get(url).json()
    assert pending["state"] == "pending" and pending["final"] is False
    assert "this line says when it is done" in pending["html"] and pending["indexed"] == "—"

    Article.objects.filter(pk=article.pk).update(
        indexed_at=datetime(2099, 1, 5, 9, 30, tzinfo=UTC), index_hash="h"
    )
    done = staff_client.get(url).json()
    assert done["state"] == "up_to_date" and done["final"] is True
    assert done["html"].startswith('<strong class="dc-index-state">up to date</strong>')
    assert done["indexed"] == "Jan 5 2099, 09:30"


def test_an_article_whose_indexing_job_failed_says_so_and_is_asked_again(
    staff_client, make_article
):
    from django.db import connection

    article = make_article(title="Zeppelins")
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO procrastinate_jobs (queue_name, task_name, args, status)"
            " VALUES ('index', 'blog.article_index', %s, 'failed')",
            [f'{{"article_id": {article.pk}, "force": false}}'],
        )
    state = staff_client.get(f"/admin/blog/article/{article.pk}/index-state/").json()

    # Not final: the periodic reconciliation retries it within ten minutes.
    assert state["state"] == "failed" and state["final"] is False
    assert "Reindex selected articles" in state["html"]
    with connection.cursor() as cursor:  # retried: the newest job is waiting again
        cursor.execute(
            "INSERT INTO procrastinate_jobs (queue_name, task_name, args, status)"
            " VALUES ('index', 'blog.article_index', %s, 'todo')",
            [f'{{"article_id": {article.pk}, "force": false}}'],
        )
    retried = staff_client.get(f"/admin/blog/article/{article.pk}/index-state/").json()
    assert retried["state"] != "failed"


def test_the_index_state_is_for_staff_only(staff_client, make_article):
    from django.test import Client

    article = make_article(title="Zeppelins")
    url = f"/admin/blog/article/{article.pk}/index-state/"

    assert Client().get(url).status_code == 302  # to the login
    assert staff_client.get("/admin/blog/article/999999/index-state/").status_code == 403
    moderator = Client()  # staff without the blog's permissions
    moderator.force_login(get_user_model().objects.create_user("mod", password="pw", is_staff=True))
    assert moderator.get(url).status_code == 403


def test_the_tag_boxes_do_not_tell_the_author_to_hold_down_control(staff_client):
    # Django's hint for a plain multiple select, under the two boxes that need no such thing.
    html = staff_client.get("/admin/blog/article/add/").content.decode()

    assert "Hold down" not in html and 'id="id_tags"' in html


def test_the_published_filter_offers_times_from_now_and_scheduled_posts(staff_client, make_article):
    # Django's date filter offered ranges ending now: a post scheduled for next week was under
    # none of them.
    from datetime import timedelta

    from django.utils import timezone

    now = timezone.now()
    made = {
        "scheduled": make_article(title="Next week", published_at=now + timedelta(days=7)),
        "week": make_article(title="Yesterday", published_at=now - timedelta(days=1)),
        "month": make_article(title="Two weeks ago", published_at=now - timedelta(days=14)),
        "earlier": make_article(title="Last year", published_at=now - timedelta(days=365)),
        "none": make_article(title="A draft", status=Article.Status.DRAFT),
    }
    url = "/admin/blog/article/"

    listing = staff_client.get(url).content.decode()
    assert re.findall(r'\?when=\w+">([^<]+)</a>', listing) == [
        "Scheduled for later", "In the past 7 days", "In the past 30 days", "Earlier",
        "Not yet (drafts)",
    ]  # fmt: skip
    assert "Past 7 days" not in listing
    for value, article in made.items():
        page = staff_client.get(url, {"when": value}).content.decode()
        titles = re.findall(r'<th class="field-title"><a [^>]*>([^<]+)</a>', page)
        expected = [article.title] if value != "month" else ["Yesterday", "Two weeks ago"]
        assert sorted(titles) == sorted(expected), value


def test_saving_an_article_with_another_s_title_warns_the_author(staff_client, make_article):
    # A walk through the admin left three "Django 入门指南": nothing said so.
    make_article(title="Django 入门指南", slug="django-ru-men-zhi-nan")
    form = {
        "title": "Django  入门指南",
        "slug": "",
        "summary": "",
        "body": "正文",
        "status": "draft",
        "published_at_0": "",
        "published_at_1": "",
    }

    response = staff_client.post("/admin/blog/article/add/", form, follow=True)
    shown = [str(message) for message in response.context["messages"]]

    assert any("same title (django-ru-men-zhi-nan)" in text for text in shown), shown
    other = staff_client.post("/admin/blog/article/add/", {**form, "title": "Another"}, follow=True)
    assert not any("same title" in str(m) for m in other.context["messages"])


def test_the_chinese_admin_words_its_messages_as_chinese_is_written(staff_client):
    # Django's catalogue spaced the model's name off ("成功添加了 文章“飞艇”。", "修改 文章") and
    # ended "您可以在下面再次编辑它." with a Western full stop; then the space Django joins the two
    # sentences with still stood after the "。" (templates/admin/base_site.html drops it).
    zh = {"headers": {"accept-language": "zh-hans"}}
    form = {"title": "飞艇", "slug": "airships", "summary": "", "tags": [],
            "body": "## 机库\n\n很大。", "status": "draft", "_continue": "1"}  # fmt: skip

    added = staff_client.post("/admin/blog/article/add/", form, follow=True, **zh)
    page = added.content.decode()
    listed = staff_client.get("/admin/blog/article/", **zh).content.decode()
    blank = staff_client.get("/admin/blog/article/add/", **zh).content.decode()

    assert re.search(r"已添加文章“<a [^>]+>飞艇</a>”。可以在下方继续编辑。</li>", page)
    assert "| 修改文章 |" in page and "修改 文章" not in page
    assert "选择要修改的文章" in listed and "<title>添加文章 |" in blank


def test_a_list_s_count_is_worded_as_each_language_says_it(staff_client, make_article):
    # Django put the number before the model's name in every language: "2 文章", "0 对话".
    make_article(title="One", slug="one", body="1")
    make_article(title="Two", slug="two", body="2")
    zh = {"headers": {"accept-language": "zh-hans"}}

    def count(path: str, **options) -> str:
        html = staff_client.get(path, **options).content.decode()
        paginator = re.search(r'<nav class="paginator".*?</h2>(.*?)</nav>', html, re.S)
        return " ".join(paginator.group(1).split())

    assert count("/admin/blog/article/", **zh) == "文章共 2 条"
    assert count("/admin/agent/conversation/", **zh) == "对话共 0 条"
    assert count("/admin/blog/article/") == "2 articles"
    assert count("/admin/blog/article/?q=One") == "1 article"


@pytest.mark.parametrize(("language", "words"), [("en", "No tags"), ("zh-hans", "无标签")])
def test_the_tags_filter_names_its_choice_for_untagged_articles(
    staff_client, make_article, language, words
):
    # Its last choice read "-" (Django's empty value): a stray mark, not "articles without tags".
    make_article(title="Tagged", slug="tagged", tags=["agents"])
    make_article(title="Untagged", slug="untagged")
    url = "/admin/blog/article/"

    listing = staff_client.get(url, headers={"accept-language": language}).content.decode()
    choice = re.search(r'<a href="\?tags__isnull=True">([^<]+)</a>', listing)
    assert choice and choice.group(1) == words
    page = staff_client.get(url, {"tags__isnull": "True"}).content.decode()
    assert re.findall(r'<th class="field-title"><a [^>]*>([^<]+)</a>', page) == ["Untagged"]


def test_the_chinese_tag_boxes_put_no_space_between_the_words(staff_client):
    # Django's catalogue headed the article form's tag boxes "可用 标签" and "选中的 标签".
    catalogue = staff_client.get("/admin/jsi18n/", headers={"accept-language": "zh-hans"})
    found = re.search(r"const newcatalog = (\{.*?\});\n", catalogue.content.decode(), re.S)
    strings = json.loads(found.group(1))

    assert strings["Available %s"] == "可选%s" and strings["Chosen %s"] == "已选%s"


def test_the_chinese_article_form_labels_end_in_a_chinese_colon(staff_client):
    # Django's Chinese keeps the Western ":" after a label: "标题:", "状态:".
    zh = staff_client.get("/admin/blog/article/add/", headers={"accept-language": "zh-hans"})
    en = staff_client.get("/admin/blog/article/add/", headers={"accept-language": "en"})

    assert re.search(r'<label class="required" for="id_title">标题：</label>', zh.content.decode())
    assert re.search(r'<label class="required" for="id_title">Title:</label>', en.content.decode())


def test_a_delete_confirmation_lists_the_articles_not_their_chunks_and_tag_links(
    staff_client, make_article
):
    # The Chinese confirmation listed "Chunk: 12#0" and "Article-tag relationship: Article_tags
    # object (26)" under each article, and "Chunks: 6" in its summary, all in English.
    from blog.models import Chunk

    article = make_article(title="Doomed", slug="doomed", tags=["search"])
    Chunk.objects.create(
        article=article, ordinal=0, text="x", lexical="x", embedding=[0.1] * 384,
        embedding_model="m", content_hash="h",
    )  # fmt: skip
    chinese = {"accept-language": "zh-CN"}
    pages = [
        staff_client.post(
            "/admin/blog/article/",
            {"action": "delete_selected", "_selected_action": [article.pk]},
            headers=chinese,
        ),
        staff_client.get(f"/admin/blog/article/{article.pk}/delete/", headers=chinese),
    ]
    for response in pages:
        html = response.content.decode()
        assert response.status_code == 200 and "Doomed" in html
        assert "Chunk" not in html and "relationship" not in html and "object (" not in html
    # Django's Chinese put spaces around the model's name: "请确认要删除选中的 文章 吗？".
    assert "确定要删除所选的文章吗？" in pages[0].content.decode()
    assert "确定要删除文章“Doomed”吗？" in pages[1].content.decode()
    summary = pages[0].content.decode().split("<h2>")[1]
    assert "文章：1" in summary  # the article itself is still counted
    assert Article.objects.filter(pk=article.pk).exists()  # only asked, not done


def test_a_tag_links_to_its_page_only_once_a_published_article_carries_it(
    staff_client, make_article
):
    # "View on site" on a new tag, or one only drafts carry, opened a 404.
    from blog.models import Tag

    make_article(title="Draft", slug="draft", tags=["unused"], status="draft")
    make_article(title="Live", slug="live", tags=["used"])

    def change_page(slug: str) -> str:
        pk = Tag.objects.get(slug=slug).pk
        return staff_client.get(f"/admin/blog/tag/{pk}/change/").content.decode()

    assert "View on site" not in change_page("unused")
    assert 'href="/tags/used/"' in change_page("used") and "View on site" in change_page("used")


# A tenth list inside nine others: markdown-it dropped it and the rest of the article from the
# page and the preview, and the admin saved it without a word.
DEEP_BODY = "\n".join("  " * depth + f"- step {depth + 1}" for depth in range(10)) + "\n\nThe end."


@pytest.mark.parametrize(
    ("language", "words"),
    [
        ("en", "Line 10 (“- step 10”) is nested too deeply in lists or quotes"),
        ("zh-hans", "第 10 行（“- step 10”）在列表或引用里嵌套得太深"),
    ],
)
def test_a_body_nested_deeper_than_the_page_shows_is_refused_naming_its_line(
    staff_client, language, words
):
    form = {"title": "Stairs", "slug": "stairs", "summary": "", "tags": [],
            "body": DEEP_BODY.replace("\n", "\r\n"), "status": "published"}  # fmt: skip
    headers = {"accept-language": language}

    page = staff_client.post("/admin/blog/article/add/", form, headers=headers)

    assert page.status_code == 200 and words in page.content.decode()
    assert "A published article needs a body" not in page.content.decode()  # it has one
    assert not Article.objects.exists()
    form["body"] = DEEP_BODY.replace("  - step 10", "- step 10")  # nine deep: saved
    saved = staff_client.post("/admin/blog/article/add/", form)
    assert saved.status_code == 302, saved.context["adminform"].form.errors


def test_the_preview_of_a_body_nested_too_deep_shows_all_its_text_and_says_why(staff_client):
    form = {"title": "Stairs", "slug": "", "summary": "", "tags": [], "body": DEEP_BODY,
            "status": "draft"}  # fmt: skip

    html = staff_client.post(PREVIEW, form).content.decode()

    assert "step 9\n- step 10</li>" in html and "<p>The end.</p>" in html
    assert re.search(
        r'<p class="draft-banner draft-banner--problem" role="alert"[^>]*>Line 10 ', html
    )
    plain = {**form, "body": "- one\n  - two"}
    assert "draft-banner--problem" not in staff_client.post(PREVIEW, plain).content.decode()


@pytest.mark.parametrize(
    ("language", "title", "count", "line"),
    [
        ("zh-CN", "删除所选文章", "<li>文章：2</li>", "<li>文章：<a "),
        ("en", "Delete the selected articles", "<li>Articles: 2</li>", "<li>Article: <a "),
    ],
)
def test_a_delete_confirmation_is_titled_by_what_it_deletes_with_each_language_s_colon(
    staff_client, make_article, language, title, count, line
):
    # The Chinese page was titled "删除多个对象" ("Delete multiple objects") and wrote "文章: 2"
    # and "文章: <title>" with a Western colon and a space.
    ids = [make_article(title=name, slug=name.lower()).pk for name in ("Kept", "Gone")]
    html = staff_client.post(
        "/admin/blog/article/",
        {"action": "delete_selected", "_selected_action": ids},
        headers={"accept-language": language},
    ).content.decode()
    crumbs = html.split('<ol class="breadcrumbs">')[1].split("</ol>")[0]

    assert f"<title>{title} | " in html and f"<h1>{title}</h1>" in html
    assert f'<li aria-current="page">{title}</li>' in crumbs
    assert count in html and html.count(line) == 2
    assert "删除多个对象" not in html and "Delete multiple objects" not in html


def test_a_draft_saves_with_a_title_alone_and_publishing_it_asks_for_a_body(staff_client):
    # A new author's first save, a title and a draft, got "This field is required." on the body.
    form = {"title": "Zeppelins", "slug": "", "summary": "", "tags": [], "body": "",
            "status": "draft"}  # fmt: skip

    page = staff_client.post("/admin/blog/article/add/", form, follow=True).content.decode()

    assert "was added successfully" in page
    article = Article.objects.get(title="Zeppelins")
    assert article.body == "" and article.slug == "zeppelins"
    published = {**form, "slug": "zeppelins", "status": "published", "body": "  \n"}
    page = staff_client.post(f"/admin/blog/article/{article.pk}/change/", published)
    assert "A published article needs a body" in page.content.decode()
    assert Article.objects.get(pk=article.pk).status == "draft"


def test_a_taken_slug_is_refused_naming_its_article_and_a_free_one(staff_client, make_article):
    # Django said "Article with this Slug already exists.": which article, and what then?
    make_article(title="Sourdough basics", slug="sourdough")
    form = {"title": "Rye bread", "slug": "sourdough", "summary": "", "tags": [],
            "body": "Rye.", "status": "draft"}  # fmt: skip

    page = staff_client.post("/admin/blog/article/add/", form).content.decode()

    assert "/articles/sourdough/ is already taken by “Sourdough basics”" in page
    assert "for example sourdough-2" in page
    assert "already exists" not in page
    assert not Article.objects.filter(title="Rye bread").exists()


def test_a_delete_line_without_a_link_keeps_its_title_escaped():
    # Django escapes "Article: <a …>title</a>" for an object with a change page, but writes a
    # plain "Article: title" for one without; marked safe whole, that title was HTML.
    from django.contrib.admin.sites import site
    from django.utils.html import format_html

    article_admin = site._registry[Article]
    plain = article_admin._colon_localise("Article: <img src=x onerror=alert(1)>")
    line = format_html('Article: <a href="{}">{}</a>', "/a/", "<b>")
    linked = article_admin._colon_localise(line)

    assert plain == "Article: &lt;img src=x onerror=alert(1)&gt;"
    assert linked == 'Article: <a href="/a/">&lt;b&gt;</a>'
