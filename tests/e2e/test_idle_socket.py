"""The panel in a real Chromium when the server closes its socket as idle (4010).

The server closes a chat socket its reader left idle (WEBSOCKET_IDLE_SECONDS). The panel
reconnected to every close: an idle tab would have opened a new socket straight away, to be
closed again half an hour later, for ever. On 4010 it says nothing and opens no socket until
the reader asks something, which is answered on a new one.
"""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import CHROMIUM, screenshot
from tests.e2e.sockets import ChatRoute
from tests.e2e.test_chat_panel import ask, open_chat

pytestmark = [pytest.mark.e2e, pytest.mark.django_db]

if not Path(CHROMIUM).exists():
    pytest.skip(f"no {CHROMIUM}: apt-get install chromium (.ci/run does)", allow_module_level=True)

IDLE = 4010


def test_an_idle_close_waits_for_the_reader(site, open_page):
    def on_frame(socket, frame):
        if frame["type"] == "message":
            socket.answer(f"Answer on socket {socket.number}.")

    page = open_page()
    route = ChatRoute(page, on_frame)
    page.goto(site + "/")
    open_chat(page)
    ask(page, "First question")
    expect(page.locator(".chat-answer").last).to_have_text("Answer on socket 1.")

    route.sockets[0].ws.close(code=IDLE, reason="idle")
    # Long enough for the panel's first reconnect (0.25 to 0.5 s after a close) several times.
    page.wait_for_timeout(3000)
    assert len(route.sockets) == 1  # before: a second socket, opened with no one asking
    expect(page.locator(".chat-note--warn")).to_have_count(0)  # no "Reconnecting…"
    assert "Reconnecting" not in page.locator("#chat").inner_text()

    ask(page, "Second question")
    expect(page.locator(".chat-answer").last).to_have_text("Answer on socket 2.")
    assert len(route.sockets) == 2
    screenshot(page, "idle-close")
