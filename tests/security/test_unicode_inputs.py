"""Unicode a visitor can type, over each way in: an answer or a clear refusal, never a 500.

Each question goes over the WebSocket and over SSE. A turn that starts is saved with the
question exactly as typed, and the admin pages that show it render. The lone surrogates and
NUL the edge refuses are in test_text_hygiene.py; here is everything else a keyboard or a
script can send: controls, noncharacters, marks, ZWJ emoji, compatibility forms, overrides.
Found here: 3,990 combining marks on one letter drew a column of ink over the admin's header
and the other visitors' rows (agent/templatetags/visitor_text.py now shows at most four); and a
question typed in fullwidth letters, as Chinese keyboards in fullwidth mode type them, was
declined where the same question in ASCII was answered (blog/language.py folds them); so was
a question in Traditional Chinese about a Simplified article (blog/script.py folds it).
"""

import json
import unicodedata

import httpx
import pytest
from django.contrib.auth import get_user_model
from websockets.sync.client import connect

from agent.models import Turn
from agent.templatetags.visitor_text import MAX_MARKS
from tests.security.clients import admin_signed_in, published_indexed, sse_post

pytestmark = pytest.mark.django_db(transaction=True)

QUESTIONS = {
    "c0 and an ANSI escape": "why cap \x01\x07\x08\x1b[31m steps\x7f?",
    "c1 controls": "why cap \x85\x9b\x9f steps?",
    "noncharacters": "why cap \ufffe\uffff\ufdd0\U0001fffe steps?",
    "3,990 marks on one letter": "a" + "\u0301" * 3990,
    "ZWJ emoji": "👩\u200d👩\u200d👧\u200d👦 " * 300,
    "fullwidth": "ｗｈｙ ｃａｐ ｔｈｅ ａｇｅｎｔ＇ｓ ｓｔｅｐｓ？",
    "overrides and isolates": "why \u202ecap\u202c the \u2066steps",
    "astral at the cap": "𝕏" * 3999,
    "tag characters": "why \U000e0041\U000e0042 cap",
}
# Nothing in them shows on screen: each started a turn that stood as a blank row in the admin.
INVISIBLE = {
    "zero-width only": "\u200b\u200c\u200d\u2060\ufeff",
    "marks alone": "\u0e47" * 50,
    "tag characters alone": "\U000e0041\U000e0042\U000e007f",
    "blank letters": "\u3164\u2800 \u115f",
}
# Raw query strings for /api/search: bytes that are not UTF-8 (overlong, CESU surrogate, past
# U+10FFFF), controls and marks. NUL is a 400 at the edge (test_probing.py).
SEARCHES = [
    "%ff%fe",
    "%c0%af",
    "%ed%a0%80",
    "%f4%90%80%80",
    "%ef%bf%be",
    "%01%1b%7f%c2%85",
    "%e2%80%ae",
    "a" + "%cc%81" * 480,
    "%f0%9f%91%a9%e2%80%8d%f0%9f%91%a9",
]


def longest_mark_run(html: str) -> int:
    longest = run = 0
    for char in html:
        run = run + 1 if unicodedata.category(char) in {"Mn", "Me"} else 0
        longest = max(longest, run)
    return longest


def ask_over_websocket(server, question: str) -> list[dict]:
    with connect(server.ws_url, additional_headers={"Origin": server.url}) as socket:
        socket.send(json.dumps({"type": "message", "content": question}))
        received = [json.loads(socket.recv(timeout=60))]
        while received[-1]["type"] not in {"done", "error"}:
            received.append(json.loads(socket.recv(timeout=60)))
    return received


def ask_over_sse(server, question: str) -> list[dict]:
    response, events = sse_post(server, {"content": question})
    assert response.status_code == 200
    return events


def test_every_question_is_answered_saved_as_typed_and_shown_in_the_admin(serve):
    server = serve("unicode-questions")
    get_user_model().objects.create_superuser("editor", "e@example.com", "a-long-password")
    admin = admin_signed_in(server, username="editor", password="a-long-password")
    outcomes = {}

    for name, question in QUESTIONS.items():
        for transport, ask in [("ws", ask_over_websocket), ("sse", ask_over_sse)]:
            before = Turn.objects.count()
            received = ask(server, question)
            turn = Turn.objects.get(conversation_id=received[0]["conversation_id"])
            pages = [
                f"/admin/agent/conversation/{turn.conversation_id}/change/",
                f"/admin/agent/turn/{turn.pk}/change/",
            ]
            shown = [admin.get(path) for path in pages]
            outcomes[name, transport] = (
                received[-1]["type"],
                Turn.objects.count() - before,
                turn.user_message == question.strip(),
                [page.status_code for page in shown],
                max(longest_mark_run(page.text) for page in shown) <= MAX_MARKS,
            )

    lists = [admin.get(path) for path in ["/admin/agent/conversation/", "/admin/agent/turn/"]]
    lists.append(admin.get("/admin/agent/conversation/unanswered/"))
    expected = ("done", 1, True, [200, 200], True)
    assert outcomes == {key: expected for key in outcomes}
    assert [(page.status_code, longest_mark_run(page.text)) for page in lists] == [
        (200, MAX_MARKS)
    ] * 3  # the tower of 3,990 is in all three, cut to four
    assert "Traceback" not in server.output()


def test_a_question_with_nothing_visible_is_refused_as_empty_and_starts_no_turn(serve):
    server = serve("unicode-invisible")
    refused = {}

    for name, question in INVISIBLE.items():
        for transport, ask in [("ws", ask_over_websocket), ("sse", ask_over_sse)]:
            [event] = ask(server, question)
            refused[name, transport] = (event["type"], event.get("code"), event.get("message"))

    empty = ("error", "bad_request", "The message is empty. Type a question first.")
    assert refused == dict.fromkeys(refused, empty)
    assert Turn.objects.count() == 0


# Chat bodies as raw bytes: overlong "/", a CESU-encoded surrogate, a byte past U+10FFFF.
BODIES = [
    b'{"content": "\xc0\xaf"}',
    b'{"content": "\xed\xa0\x80"}',
    b'{"content": "\xf4\x90\x80\x80"}',
]


def test_bytes_that_are_not_utf8_get_json_answers_or_a_clear_400(serve):
    server = serve("unicode-bytes")

    with httpx.Client(base_url=server.url, timeout=60) as client:
        answers = {query: client.get(f"/api/search?q={query}") for query in SEARCHES}
    refused = [sse_post(server, body)[0] for body in BODIES]

    assert {query: answer.status_code for query, answer in answers.items()} == dict.fromkeys(
        SEARCHES, 200
    )
    assert all(isinstance(answer.json(), list) for answer in answers.values())
    assert [(r.status_code, r.json()["detail"]) for r in refused] == [
        (400, "The request is not valid UTF-8.")
    ] * len(BODIES)
    assert Turn.objects.count() == 0
    assert "Traceback" not in server.output()


def test_a_feedback_comment_of_marks_and_controls_is_saved_and_shown_cut_short(serve):
    server = serve("unicode-feedback")
    get_user_model().objects.create_superuser("editor", "e@example.com", "a-long-password")
    comment = "bad\x1b[2J\x85 " + "e" + "\u0301" * 990
    with httpx.Client(base_url=server.url, timeout=60) as visitor:
        response = visitor.post(
            "/api/chat", json={"content": "why cap steps"}, headers={"Origin": server.url}
        )
        conversation_id = json.loads(response.text.split("\n\n")[0].removeprefix("data: "))[
            "conversation_id"
        ]
        voted = visitor.post(
            f"/api/conversations/{conversation_id}/turns/1/feedback",
            json={"vote": "down", "comment": comment},
            headers={"Origin": server.url, "Referer": server.url + "/"},
        )
    admin = admin_signed_in(server, username="editor", password="a-long-password")
    transcript = admin.get(f"/admin/agent/conversation/{conversation_id}/change/")
    downvoted = admin.get("/admin/agent/conversation/unanswered/")

    assert voted.status_code == 200, voted.text
    assert Turn.objects.get().feedback_comment == comment
    assert (transcript.status_code, longest_mark_run(transcript.text)) == (200, MAX_MARKS)
    assert (downvoted.status_code, longest_mark_run(downvoted.text)) == (200, MAX_MARKS)
    assert 'title="986 more combining marks' in transcript.text


def test_a_question_in_fullwidth_letters_is_answered_as_the_same_in_ascii(serve):
    published_indexed(
        title="Zebra tokens",
        slug="zebra-tokens",
        summary="What zebra tokens are.",
        body="## Zebra tokens\n\nZebra tokens are a rare kind of session credential.\n",
    )
    server = serve("unicode-fullwidth")
    asked = {}

    for question in ["What are zebra tokens?", "Ｗｈａｔ ａｒｅ ｚｅｂｒａ ｔｏｋｅｎｓ？"]:
        received = ask_over_websocket(server, question)
        cited = [e["url"] for e in received if e["type"] == "citation"]
        with httpx.Client(base_url=server.url, timeout=60) as client:
            hits = client.get("/api/search", params={"q": question}).json()
        asked[question] = (received[-1]["answered"], cited, [hit["url"] for hit in hits])

    assert (
        list(asked.values())
        == [(True, ["/articles/zebra-tokens/"], ["/articles/zebra-tokens/"])] * 2
    )


def test_a_question_in_traditional_chinese_is_answered_as_its_simplified_twin(serve):
    published_indexed(
        title="斑马令牌",
        slug="zebra-tokens-zh",
        summary="斑马令牌是什么。",
        body="## 斑马令牌\n\n斑马令牌是一种少见的会话凭证，由服务器在登录时签发。\n",
    )
    server = serve("unicode-traditional")
    asked = {}

    for question in ["斑马令牌是什么？", "斑馬令牌是什麼？"]:
        received = ask_over_websocket(server, question)
        cited = [e["url"] for e in received if e["type"] == "citation"]
        text = "".join(e["content"] for e in received if e["type"] == "text")
        with httpx.Client(base_url=server.url, timeout=60) as client:
            hits = client.get("/api/search", params={"q": question}).json()
        asked[question] = (received[-1]["answered"], cited, [hit["url"] for hit in hits])
        # The quote as the article wrote it, whichever script the question was in.
        assert "斑马令牌是一种少见的会话凭证" in text

    assert (
        list(asked.values())
        == [(True, ["/articles/zebra-tokens-zh/"], ["/articles/zebra-tokens-zh/"])] * 2
    )
