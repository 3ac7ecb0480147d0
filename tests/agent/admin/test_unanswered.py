"""Questions the blog could not answer, grouped so editors see what to write next."""

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from agent.models import ToolCall, Turn
from agent.selectors import turn_unanswered, turn_unanswered_groups
from blog.indexing import articles_reindex
from blog.models import Article
from tests.agent.admin.factories import NO_RESULTS, make_conversation, make_turn, search_hits

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def ask(question: str, *, minutes: int, empty_search: bool = False, tool_calls=(), at=T0,
        **fields):  # fmt: skip
    conversation = make_conversation()
    calls = [{"arguments": {"query": question}, "result": NO_RESULTS}] if empty_search else []
    calls += list(tool_calls)
    return make_turn(conversation, index=1, user_message=question, answered=False,
                     started_at=at + timedelta(minutes=minutes), tool_calls=calls,
                     **fields)  # fmt: skip


@pytest.fixture
def questions():
    ask("How do I install pgvector?", minutes=1)
    ask("how do i install pgvector", minutes=2)
    # A real model's decline: it searched, found nothing and said so.
    ask("How to install pgvector?", minutes=3, empty_search=True, model="gpt-4o-mini",
        answer="The blog doesn't cover installing pgvector.")  # fmt: skip
    ask("Do you cover Kubernetes operators?", minutes=4)
    ask("kubernetes operators?", minutes=5)
    ask("怎么安装pgvector", minutes=6)
    ask("如何安装 pgvector？", minutes=7)
    ask("What is the capital of France?", minutes=8)
    # Answered questions never show up, even when one search along the way found something.
    answered = make_conversation()
    make_turn(answered, user_message="How do I install pgvector?", started_at=T0,
              tool_calls=[{"result": search_hits(2)}])  # fmt: skip
    # Turns that did not finish are not questions the blog failed to answer.
    for status in ("cancelled", "error", "interrupted"):
        ask("Why did this stop?", minutes=9, status=status)


def test_unanswered_means_finished_and_not_answered_by_any_model(questions):
    messages = set(turn_unanswered().values_list("user_message", flat=True))

    assert "How to install pgvector?" in messages  # a real model's decline
    assert "Why did this stop?" not in messages
    assert len(messages) == 8
    assert turn_unanswered().count() == 8


def test_similar_questions_are_grouped_with_counts(questions):
    groups = turn_unanswered_groups()

    summary = [(group.count, sorted(group.variants)) for group in groups]
    assert summary == [
        (
            3,
            ["How do I install pgvector?", "How to install pgvector?", "how do i install pgvector"],
        ),
        (2, ["如何安装 pgvector？", "怎么安装pgvector"]),
        (2, ["Do you cover Kubernetes operators?", "kubernetes operators?"]),
        (1, ["What is the capital of France?"]),
    ]
    install = groups[0]
    # All three wordings normalise alike ("how install pgvector"): named as first typed.
    assert install.question == "How do I install pgvector?"
    assert install.last_asked == T0 + timedelta(minutes=3)
    assert install.conversations == 3


def test_grouping_looks_at_the_newest_turns_only(questions):
    groups = turn_unanswered_groups(limit=2)

    assert sum(group.count for group in groups) == 2
    assert {group.question for group in groups} == {
        "What is the capital of France?",
        "如何安装 pgvector？",
    }


def test_page_lists_the_groups_biggest_first_with_links(staff_client, questions):
    response = staff_client.get("/admin/agent/conversation/unanswered/")

    html = response.content.decode()
    assert response.status_code == 200
    assert "8 questions the blog could not answer" in html
    counts = [part.split('"')[0] for part in html.split('data-count="')[1:]]
    assert counts == ["3", "2", "2", "1"]
    first = html.split('data-count="3"')[1].split("</li>\n    \n")[0]
    assert "How do I install pgvector?" in first
    assert "how do i install pgvector" in first
    assert first.count("/admin/agent/conversation/") == 3
    assert "#turn-1" in first


def test_page_says_so_when_everything_was_answered(staff_client):
    html = staff_client.get("/admin/agent/conversation/unanswered/").content.decode()

    assert "no question has gone unanswered" in html
    # Not "0 questions the blog could not answer … Write about the top ones next."
    assert "0 questions" not in html and "top ones" not in html


def test_a_question_whose_search_failed_says_so_instead_of_asking_for_an_article(staff_client):
    # First run: the demo articles were still indexing, the search timed out, and "why cap the
    # agent's steps?" (a demo article's own subject) was listed as something to write about.
    timed_out = {"ok": False, "result": "Error: search_knowledge_base timed out after 10s.",
                 "error": "Error: search_knowledge_base timed out after 10s."}  # fmt: skip
    ask("Why cap the agent's steps?", minutes=1, tool_calls=[timed_out])
    ask("why cap the agents steps", minutes=2, empty_search=True)
    ask("What is the capital of France?", minutes=3, empty_search=True)
    # A search cancelled by the visitor's Stop is not the search failing.
    ask("Is there a dark mode?", minutes=4, tool_calls=[{"ok": False, "error": ToolCall.CANCELLED}])

    failed = {group.question: group.search_failed for group in turn_unanswered_groups()}
    assert failed == {
        "Why cap the agent's steps?": 1,
        "What is the capital of France?": 0,
        "Is there a dark mode?": 0,
    }

    html = staff_client.get("/admin/agent/conversation/unanswered/").content.decode()
    assert html.count("Search failed</span>") == 1
    steps = html.split('data-count="2"')[1].split("</li>")[0]
    assert "The search failed (timed out or raised) in 1 of these turns" in steps


# As search_knowledge_base words it when the search limit (60 a minute) refuses a search.
REFUSED = ("Error: too many searches for this visitor right now (retry in 40 s). Answer from the "
           "results you have, or say that you could not search.")  # fmt: skip


def test_a_search_the_search_limit_refused_is_told_from_one_that_failed(staff_client):
    # Both read "The search failed (timed out or raised)": a refusal sent editors to the server
    # log for a fault that was the visitor's own rate.
    refused = {"ok": False, "result": REFUSED, "error": REFUSED}
    timed_out = {"ok": False, "result": "Error: search_knowledge_base timed out after 10s.",
                 "error": "Error: search_knowledge_base timed out after 10s."}  # fmt: skip
    ask("Why cap the agent's steps?", minutes=1, tool_calls=[refused])
    ask("What is the capital of France?", minutes=2, tool_calls=[timed_out])

    counts = {g.question: (g.search_failed, g.search_refused) for g in turn_unanswered_groups()}
    assert counts == {
        "Why cap the agent's steps?": (0, 1),
        "What is the capital of France?": (1, 0),
    }

    html = staff_client.get("/admin/agent/conversation/unanswered/").content.decode()
    first, second = html.split('class="dc-question"')[1:3]
    assert "In 1 of these turns the search limit refused it" in second
    assert "timed out or raised" not in second and "Search refused</span>" in second
    assert "The search failed (timed out or raised) in 1 of these turns" in first
    for lang, words in [("zh-CN", "搜索次数限制拒绝了"), ("zh-TW", "搜尋次數限制拒絕了")]:
        page = staff_client.get("/admin/agent/conversation/unanswered/",
                                headers={"accept-language": lang})  # fmt: skip
        assert words in page.content.decode(), lang


def test_questions_asked_while_indexing_are_marked_and_can_be_hidden(staff_client):
    # First run: the demo articles were still being indexed, so a question about one of them
    # found nothing and was listed as something to write about.
    ask("Is there a post on HNSW?", minutes=1, index_incomplete=True)
    ask("is there a post on hnsw", minutes=2)
    ask("What is the capital of France?", minutes=3)

    groups = {group.question: group.while_indexing for group in turn_unanswered_groups()}
    assert groups == {"Is there a post on HNSW?": 1, "What is the capital of France?": 0}

    html = staff_client.get("/admin/agent/conversation/unanswered/").content.decode()
    assert "1 of these was asked while some articles were not indexed yet" in html
    assert html.count("Asked while indexing</span>") == 1
    assert "?while_indexing=hide" in html

    hidden = staff_client.get("/admin/agent/conversation/unanswered/?while_indexing=hide")
    shown = [(group.question, group.count) for group in hidden.context["groups"]]
    assert shown == [("What is the capital of France?", 1), ("is there a post on hnsw", 1)]
    assert "are hidden" in hidden.content.decode()


def test_a_down_voted_answer_is_marked_with_an_icon_not_an_emoji(staff_client):
    # "👎" drew a box on a machine without an emoji font.
    ask("Is there a post on HNSW?", minutes=1, vote="down", feedback_comment="Nothing here.")

    html = staff_client.get("/admin/agent/conversation/unanswered/").content.decode()
    downvoted = html.split('data-testid="downvoted"')[1]

    assert "👎" not in html
    assert '<svg class="dc-icon"' in downvoted and 'aria-label="thumbs down"' in downvoted


def test_with_the_indexing_ones_hidden_an_empty_list_does_not_claim_none_went_unanswered(
    staff_client,
):
    # "Questions asked while … are hidden", then "no question has gone unanswered": one was.
    ask("Is there a post on HNSW?", minutes=1, index_incomplete=True)

    html = staff_client.get("/admin/agent/conversation/unanswered/?while_indexing=hide")
    text = html.content.decode()

    assert "no question has gone unanswered" not in text
    assert "None but those asked while indexing" in text


SOURDOUGH = """Sourdough bread needs a starter: flour and water left to ferment for a week.

## Baking the loaf

Mix the starter with flour, water and salt, let the dough rise overnight, shape the loaf and
bake it in a hot oven for forty minutes. A sourdough loaf keeps for days.
"""


def test_an_article_indexed_since_a_question_that_the_search_finds_for_it_is_named(
    staff_client, make_article
):
    # An editor published an article on the question, and the list still asked for one.
    ask("How do I bake sourdough bread?", minutes=1)
    ask("Do you cover Kubernetes operators?", minutes=2)
    make_article(title="Baking sourdough bread", slug="sourdough", body=SOURDOUGH)
    make_article(title="Sourdough, the old post", slug="old-sourdough", body=SOURDOUGH)
    articles_reindex()
    # Indexed before the question was asked: the list already knew it and it did not help.
    Article.objects.filter(slug="old-sourdough").update(indexed_at=T0 - timedelta(days=1))

    since = {group.question: group.indexed_since for group in turn_unanswered_groups()}

    # Only what the search finds for the question: a new article on another topic is no hint.
    assert since == {
        "How do I bake sourdough bread?": [("Baking sourdough bread", "/articles/sourdough/")],
        "Do you cover Kubernetes operators?": [],
    }
    html = staff_client.get("/admin/agent/conversation/unanswered/").content.decode()
    assert html.count('data-testid="indexed-since"') == 1
    assert '<a href="/articles/sourdough/">Baking sourdough bread</a>' in html


def test_the_new_since_search_runs_once_per_question_and_state_of_the_index(
    staff_client, make_article, monkeypatch
):
    # Each view of the Unanswered page and the dashboard embedded the 20 most asked questions
    # again (the dashboard shows no "New since"): 0.3-2.6 s of a view with 2,000
    # conversations on this machine, idle to loaded (walk 21).
    import blog.search

    asked: list[str] = []
    search = blog.search.article_search

    def counted(**kwargs):
        asked.append(kwargs["query"])
        return search(**kwargs)

    monkeypatch.setattr(blog.search, "article_search", counted)
    ask("How do I bake sourdough bread?", minutes=1)
    ask("Do you cover Kubernetes operators?", minutes=2)
    article = make_article(title="Baking sourdough bread", slug="sourdough", body=SOURDOUGH)
    articles_reindex()

    for _ in range(2):
        page = staff_client.get("/admin/agent/conversation/unanswered/").content.decode()
        assert '<a href="/articles/sourdough/">Baking sourdough bread</a>' in page
    # The dashboard lists the questions without that hint: it searches for none.
    dashboard = staff_client.get("/admin/agent/conversation/dashboard/?days=90")
    assert "How do I bake sourdough bread?" in dashboard.content.decode()
    assert sorted(asked) == ["Do you cover Kubernetes operators?", "How do I bake sourdough bread?"]

    # An edit re-indexes the article: what the search finds may have changed, so it runs again.
    article.body = SOURDOUGH + "\nRye flour works too."
    article.save()
    articles_reindex()
    staff_client.get("/admin/agent/conversation/unanswered/")
    assert len(asked) == 4


def test_a_busy_backlog_says_how_many_it_groups_of_how_many_and_links_every_down_vote(
    staff_client,
):
    # With 2,000 conversations the page said "500 questions the blog could not answer" (its
    # limit, of 1,903) and listed 200 down-voted answers, 23,000 px of page (walk 21).
    conversation = make_conversation()
    Turn.objects.bulk_create(
        Turn(conversation=conversation, index=n, user_message=f"Question {n} about Kafka",
             answer="I couldn't find that.", status="done", answered=False,
             started_at=timezone.now() - timedelta(minutes=n),
             vote="down" if n <= 22 else "")
        for n in range(1, 1004)
    )  # fmt: skip

    page = staff_client.get("/admin/agent/conversation/unanswered/").content.decode()

    assert "The newest 500 of 1,003 questions the blog could not answer" in page
    assert page.count('data-testid="downvoted-answer"') == 20
    assert "The newest 20 of 22." in page
    link = '<a href="/admin/agent/turn/?feedback=down">All 22 in the turns list</a>'
    assert link in page
    listed = staff_client.get("/admin/agent/turn/?feedback=down").context["cl"].result_count
    assert listed == 22
    week = staff_client.get("/admin/agent/conversation/unanswered/?days=7").context
    assert staff_client.get(week["downvoted_url"]).context["cl"].result_count == 22
    chinese = staff_client.get(
        "/admin/agent/conversation/unanswered/", HTTP_ACCEPT_LANGUAGE="zh-CN"
    ).content.decode()
    assert "博客未能回答的问题共 1,003 个，这里是最新的 500 个" in chinese


def test_a_down_voted_answer_shows_what_was_voted_down_as_plain_text(staff_client):
    # The card showed the question and the comment; what the visitor judged took a click.
    answer = "**HNSW** is a graph index.\n\n- It has `m` links.\n\nSource: [pgvector](/articles/x/)"
    ask("What is HNSW?", minutes=1, vote="down", answer=answer)

    html = staff_client.get("/admin/agent/conversation/unanswered/").content.decode()
    shown = html.split('data-testid="downvoted-answer"')[1].split("</blockquote>")[0]

    assert "HNSW is a graph index. It has m links. Source: pgvector" in shown
    assert "**" not in shown and "](" not in shown


def test_a_down_voted_answer_with_code_and_a_table_shows_no_fences_or_table_rules(staff_client):
    # The backlog read "`sql CREATE INDEX … ` | setting | default | |---|---|---| | m | 16 |".
    answer = (
        "Create it:\n\n```sql\nCREATE INDEX i ON t USING hnsw (e);\n```\n\n"
        "| setting | default |\n|---|:---:|\n| m | 16 |\n"
    )
    ask("How do I create the index?", minutes=1, vote="down", answer=answer)

    html = staff_client.get("/admin/agent/conversation/unanswered/").content.decode()
    shown = html.split('data-testid="downvoted-answer"')[1].split("</blockquote>")[0]

    assert "Create it: CREATE INDEX i ON t USING hnsw (e); setting · default m · 16" in shown
    assert "```" not in shown and "---" not in shown and "sql" not in shown


def test_the_unanswered_page_shows_the_period_asked_for(staff_client):
    # "What could readers not get answered this week?": the page held every question ever asked.
    now = timezone.now()
    ask("How do I keep bees on a roof?", minutes=0, at=now - timedelta(days=20))
    ask("How do I brew kombucha?", minutes=0, at=now - timedelta(hours=1))
    ask("Why is the sky blue?", minutes=0, at=now - timedelta(days=20), vote="down",
        answer="It scatters.")  # fmt: skip

    week = staff_client.get("/admin/agent/conversation/unanswered/?days=7").content.decode()
    everything = staff_client.get("/admin/agent/conversation/unanswered/").content.decode()
    odd = staff_client.get("/admin/agent/conversation/unanswered/?days=8").content.decode()

    assert "How do I brew kombucha?" in week and "How do I keep bees" not in week
    assert "Why is the sky blue?" not in week  # the down-voted list keeps to the period too
    assert 'href="?days=7" aria-current="page"' in week
    assert "How do I keep bees" in everything and "Why is the sky blue?" in everything
    assert 'href="?" aria-current="page"' in everything
    assert "How do I keep bees" in odd  # a period the page does not offer: all of it


def test_small_talk_is_neither_answered_nor_a_missed_question(staff_client):
    # "thanks!" cites nothing under any model; it used to top the "write this next" list.
    ask("thanks!", minutes=1, small_talk=True, answer="You're welcome!")
    ask("你好", minutes=2, small_talk=True, answer="你好！")
    ask("What is the capital of France?", minutes=3)

    assert list(turn_unanswered().values_list("user_message", flat=True)) == [
        "What is the capital of France?"
    ]
    assert [group.question for group in turn_unanswered_groups()] == [
        "What is the capital of France?"
    ]
    page = staff_client.get("/admin/agent/conversation/unanswered/").content.decode()
    assert "capital of France" in page and "thanks!" not in page


def popular_group_with_an_odd_newest_message(at: datetime) -> None:
    for minutes, question in enumerate(["How do I tune HNSW?", "how to tune hnsw",
                                        "tune HNSW how?", "How do I tune HNSW?"]):  # fmt: skip
        ask(question, minutes=minutes, at=at)
    # The newest, an odd one that still groups with them (trigram similarity >= 0.5).
    ask("How do I tune HNSW??? asap!!!", minutes=9, at=at)


def shown_questions(html: str) -> list[str]:
    parts = html.split('class="dc-question__text">')[1:]
    return [part.split("</p>")[0].removeprefix("<bdi>").removesuffix("</bdi>") for part in parts]


WRITE_LINK = "/admin/blog/article/add/?title=How+do+I+tune+HNSW%3F"


def test_a_group_is_named_by_its_most_asked_wording_not_its_newest(staff_client):
    # One odd newest message renamed a popular group, and became the article form's title.
    popular_group_with_an_odd_newest_message(T0)
    [group] = turn_unanswered_groups()

    assert group.count == 5 and group.last_asked == T0 + timedelta(minutes=9)
    assert group.question == "How do I tune HNSW?"  # three of five, as first typed
    html = staff_client.get("/admin/agent/conversation/unanswered/").content.decode()
    assert shown_questions(html) == ["How do I tune HNSW?"]
    assert f'href="{WRITE_LINK}"' in html


def test_the_dashboard_names_the_group_as_the_unanswered_page_does(staff_client):
    popular_group_with_an_odd_newest_message(timezone.now() - timedelta(hours=1))

    html = staff_client.get("/admin/agent/conversation/dashboard/?days=7").content.decode()

    assert shown_questions(html) == ["How do I tune HNSW?"]
    assert f'href="{WRITE_LINK}"' in html


def test_wordings_asked_equally_often_name_the_group_by_the_earliest():
    # The same words in another order: one group (the same trigrams), two wordings, once each.
    ask("tuning HNSW recall?", minutes=1)
    ask("HNSW recall tuning", minutes=2)

    [group] = turn_unanswered_groups()

    assert group.count == 2 and group.question == "tuning HNSW recall?"
