"""API bodies that are not what they say (red team 39, leftovers of 38).

A JSON body that is no object (`[1, 2]`, `7`, `null`, `"hi"`) was read by ninja as `{}`: the
chat answered "The message is empty. Type a question first." to a client that sent no message
at all. It is a 400 now that says what is wrong, as a body that is not JSON is.

A body's declared charset was ignored and the bytes read as UTF-8: `charset=iso-8859-1` text
was refused as "not valid UTF-8", or, when its bytes were UTF-8 too, read as other words than
the client wrote ("Ã©tÃ©" as "été") and answered. JSON on the network is UTF-8 (RFC 8259); any
other charset is refused before the body is read.
"""

import pytest

from agent.models import Turn
from tests.security.clients import sse_post

pytestmark = pytest.mark.django_db(transaction=True)

NOT_OBJECTS = ["[1, 2]", "7", "null", '"What is HNSW?"', '[{"content": "What is HNSW?"}]']


def test_a_body_that_is_no_object_is_refused_as_such(serve):
    server = serve("api-bodies-shapes")

    answers = [sse_post(server, body) for body in NOT_OBJECTS]

    for (response, events), body in zip(answers, NOT_OBJECTS, strict=True):
        assert response.status_code == 400, body
        assert response.json() == {
            "detail": "The request body must be a JSON object.",
            "code": "bad_request",
        }
        assert events == []
    assert Turn.objects.count() == 0


def test_a_charset_other_than_utf8_is_refused(serve):
    server = serve("api-bodies-charsets")
    latin = "Ã©tÃ© HNSW".encode("latin-1")  # valid UTF-8 as well: "été HNSW"
    body = b'{"content": "' + latin + b'"}'

    refused = [
        sse_post(server, body, headers={"Content-Type": f"application/json; charset={name}"})
        for name in ("iso-8859-1", "utf-16", '"windows-1252"')
    ]
    accepted = sse_post(
        server,
        {"content": "What is HNSW?"},
        headers={"Content-Type": 'application/json; charset="UTF-8"'},
    )

    for response, events in refused:
        assert response.status_code == 403
        assert "UTF-8 only" in response.json()["detail"]
        assert events == []
    assert accepted[0].status_code == 200 and accepted[1][-1]["type"] in {"done", "error"}
    assert Turn.objects.filter(user_message__contains="été").count() == 0
