"""Visitor feedback in the admin: the transcript, the turn filter and the review backlog."""

import re
from datetime import UTC, datetime, timedelta

import pytest

from tests.agent.admin.factories import make_conversation, make_turn

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


@pytest.fixture
def voted():
    conversation = make_conversation()
    make_turn(conversation, index=1, user_message="Which index suits a small blog?",
              vote="up", started_at=T0)  # fmt: skip
    make_turn(conversation, index=2, user_message="And for a million rows?", vote="down",
              feedback_comment="It quoted the wrong table.", feedback_at=T0,
              started_at=T0 + timedelta(minutes=1))  # fmt: skip
    make_turn(conversation, index=3, user_message="Thanks, what about HNSW?",
              started_at=T0 + timedelta(minutes=2))  # fmt: skip
    return conversation


def test_transcript_shows_the_vote_and_the_comment(staff_client, voted):
    html = staff_client.get(f"/admin/agent/conversation/{voted.pk}/change/").content.decode()

    assert 'data-testid="vote-1">Thumbs up<' in html
    assert 'data-testid="vote-2">Thumbs down<' in html
    assert 'data-testid="vote-3"' not in html
    assert 'data-testid="feedback-2"><bdi>It quoted the wrong table.</bdi><' in html
    # The comment is about the answer, so it follows it (it sat between the question and step 1).
    turn = html[html.index('id="turn-2"') : html.index('id="turn-3"')]
    assert turn.index("dc-event--answer") < turn.index('data-testid="feedback-2"')


def test_the_turn_list_shows_the_comment_under_the_vote(staff_client, voted):
    # The list read "Thumbs down" and nothing of why; the comment was only on the turn's page.
    comment = "Wrong <b>table</b>. " + "It should say HNSW. " * 10
    long = make_turn(voted, index=4, vote="down", feedback_comment=comment,
                     started_at=T0 + timedelta(minutes=3))  # fmt: skip
    make_turn(voted, index=5, feedback_comment="No vote, only words",
              started_at=T0 + timedelta(minutes=4))  # fmt: skip

    html = staff_client.get("/admin/agent/turn/").content.decode()
    cells = re.findall(r'<td class="field-feedback">(.*?)</td>', html, flags=re.S)

    assert cells[:4] == [
        '<div class="dc-vote-comment">“<bdi>No vote, only words</bdi>”</div>',
        'Thumbs down<div class="dc-vote-comment">“<bdi>Wrong &lt;b&gt;table&lt;/b&gt;. It should'
        " say HNSW. It should say HNSW.…</bdi>”</div>",
        "—",  # no vote, no comment: the lists' blank, as their other columns write it
        'Thumbs down<div class="dc-vote-comment">“<bdi>It quoted the wrong table.</bdi>”</div>',
    ]
    assert cells[4] == "Thumbs up"
    page = staff_client.get(f"/admin/agent/turn/{long.pk}/change/").content.decode()
    assert "It should say HNSW. " * 9 in page  # the whole comment on the turn's page


def test_turns_filter_on_the_vote(staff_client, voted):
    def questions(query: str) -> list[str]:
        response = staff_client.get(f"/admin/agent/turn/?{query}")
        return sorted(turn.user_message for turn in response.context["cl"].result_list)

    assert questions("vote__exact=down") == ["And for a million rows?"]
    assert questions("vote__exact=up") == ["Which index suits a small blog?"]
    assert len(questions("")) == 3
    # The filter itself: each vote, a written comment, and the turns nobody voted on.
    assert questions("feedback=down") == ["And for a million rows?"]
    assert questions("feedback=up") == ["Which index suits a small blog?"]
    assert questions("feedback=comment") == ["And for a million rows?"]
    assert questions("feedback=none") == ["Thanks, what about HNSW?"]
    html = staff_client.get("/admin/agent/turn/").content.decode()
    assert "By visitor feedback" in html and "With a comment" in html and "No vote" in html


def test_down_voted_answers_join_the_review_backlog(staff_client, voted):
    declined = make_conversation()
    make_turn(declined, index=1, user_message="Does the chat work offline?", answered=False,
              answer="I couldn't find anything about that in this blog's articles.",
              model="offline-extractive", started_at=T0)  # fmt: skip

    html = staff_client.get("/admin/agent/conversation/unanswered/").content.decode()

    unanswered, downvoted = html.split('<h2 id="downvoted">')
    assert "Does the chat work offline?" in unanswered  # a declined turn
    assert "And for a million rows?" in downvoted
    assert "It quoted the wrong table." in downvoted
    assert f"/admin/agent/conversation/{voted.pk}/change/#turn-2" in downvoted
    assert "Which index suits a small blog?" not in html  # up-voted: nothing to review
