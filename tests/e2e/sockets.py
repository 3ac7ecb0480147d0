"""A scripted chat server for panel tests: the page's /ws/chat/ is answered by the test.

Each test says only how it answers a frame; routing, JSON and the frames of a whole turn
are written once here.
"""

import json
import re
import time
from collections.abc import Callable

CHAT_SOCKET = re.compile(r"/ws/chat/$")
CONVERSATION = "22222222-2222-4222-8222-222222222222"


class ScriptedSocket:
    """One socket the panel opened, seen from the server's side."""

    def __init__(self, ws, number: int) -> None:
        self.ws, self.number = ws, number

    def send(self, frame: dict) -> None:
        self.ws.send(json.dumps(frame))

    def start(self, turn: int = 1, conversation_id: str = CONVERSATION) -> None:
        self.send({"type": "start", "conversation_id": conversation_id, "turn": turn})

    def text(self, content: str) -> None:
        self.send({"type": "text", "content": content})

    def done(self, conversation_id: str = CONVERSATION) -> None:
        self.send({"type": "done", "conversation_id": conversation_id, "steps": 1, "usage": {}})

    def answer(self, *parts: str, turn: int = 1) -> None:
        """A whole turn: start, one text frame per part, done."""
        self.start(turn)
        for part in parts:
            self.text(part)
        self.done()

    def error(self, code: str, message: str = "x", **extra: object) -> None:
        self.send({"type": "error", "code": code, "message": message, "articles": [], **extra})

    def close(self) -> None:
        self.ws.close()


class ChatRoute:
    """Every socket the page opens is answered by `on_frame(socket, frame)`; `on_open(socket)`,
    if given, sees each socket first (one it closes at once is a server refusing it)."""

    def __init__(
        self,
        page,
        on_frame: Callable[[ScriptedSocket, dict], None],
        on_open: Callable[[ScriptedSocket], None] | None = None,
    ) -> None:
        self.page = page
        self.on_frame = on_frame
        self.on_open = on_open
        self.sockets: list[ScriptedSocket] = []
        self.received: list[tuple[int, dict]] = []  # (socket number, frame), in order
        page.route_web_socket(CHAT_SOCKET, self._opened)

    @property
    def frames(self) -> list[dict]:
        return [frame for _, frame in self.received]

    def of_type(self, kind: str) -> list[dict]:
        return [frame for frame in self.frames if frame["type"] == kind]

    def wait_for_sockets(self, count: int, timeout: float = 10) -> None:
        """Let the page run until it has opened `count` sockets (or `timeout` passes)."""
        deadline = time.monotonic() + timeout
        while len(self.sockets) < count and time.monotonic() < deadline:
            self.page.wait_for_timeout(50)  # Playwright's handlers run while the page waits

    def _opened(self, ws) -> None:
        socket = ScriptedSocket(ws, len(self.sockets) + 1)
        self.sockets.append(socket)

        def on_message(raw: str) -> None:
            frame = json.loads(raw)
            self.received.append((socket.number, frame))
            self.on_frame(socket, frame)

        ws.on_message(on_message)
        if self.on_open:
            self.on_open(socket)
