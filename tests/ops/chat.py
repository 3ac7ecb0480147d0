"""One chat turn over real HTTP (SSE at /api/chat), as a browser without WebSockets asks."""

import json

import httpx


def ask(url: str, content: str) -> list[dict]:
    """POST one message on a fresh session; return the turn's events."""
    events = []
    with httpx.Client(base_url=url, timeout=30) as client:
        # A same-origin request, as the site's own page sends it.
        headers = {"Origin": url}
        with client.stream(
            "POST", "/api/chat", json={"content": content}, headers=headers
        ) as response:
            assert response.status_code == 200
            for line in response.iter_lines():
                if line.startswith("data:"):
                    events.append(json.loads(line[5:]))
    assert events and events[-1]["type"] in {"done", "error"}, events
    return events
