"""The security suite: every attack is made for real against daphne (tests/live_server.py).

Fixtures start real processes: `serve` a daphne on the test database, `redis_url` Debian's
redis-server on a free port in a temp dir (for the rules that must hold across workers).
"""

import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
import redis
from channels.db import database_sync_to_async
from django.db import connection

from testing_support.live_server import LiveServer, database_url, free_port
from testing_support.model_server import ScriptedOpenAIServer

PROD_KEY = "s" * 30 + "-security-suite-secret-0123456789abcdef"


@pytest.fixture
def serve(request, tmp_path: Path) -> Iterator[Callable[..., LiveServer]]:
    """Start `manage.py serve` subprocesses on the test database; all stopped at the end."""
    test = request.node.name.removeprefix("test_")[:60]
    with ExitStack() as stack:

        def start(name: str, **env: str) -> LiveServer:
            url = database_url(connection.settings_dict["NAME"])
            spool = tmp_path / f"spool-{name}"
            return stack.enter_context(LiveServer(f"security-{test}-{name}", url, env, spool))

        yield start


@pytest.fixture
def scripted() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as server:
        yield server


def model_env(scripted: ScriptedOpenAIServer) -> dict[str, str]:
    return {"OPENAI_BASE_URL": scripted.base_url, "OPENAI_API_KEY": "test-key"}


BUDGET_LEFT = 3000  # the tokens the address has left today in `ask_near_the_budget`


async def ask_near_the_budget(
    serve: Callable, scripted: ScriptedOpenAIServer, name: str, reply, question: str
) -> tuple[list[dict], int]:
    """`question` over a WebSocket to a live server whose model sends `reply`, with
    BUDGET_LEFT tokens left for the address (an answer reserves 200 before it starts).

    Returns the turn's events and the tokens its saved record was charged; the server has
    stopped by then, so the save has landed.
    """
    from agent.models import Turn
    from tests.security.clients import ws_ask, ws_open

    scripted.enqueue(reply)
    server = serve(
        name,
        AGENT_TOKENS_PER_IP_PER_DAY=str(BUDGET_LEFT),
        AGENT_TOKENS_PER_ANSWER="200",
        **model_env(scripted),
    )
    socket = await ws_open(server)
    events = await ws_ask(socket, question)
    await socket.close()
    server.stop()
    saved = await database_sync_to_async(list)(Turn.objects.all())
    return events, sum(turn.input_tokens + turn.output_tokens for turn in saved)


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    """A real redis-server on a free port, its files in a temp dir, stopped afterwards."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server; .ci/run does)")
    port = free_port()
    directory = tmp_path / "redis"
    directory.mkdir()
    command = [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(directory)]
    command += ["--save", "", "--appendonly", "no", "--protected-mode", "yes"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"redis://127.0.0.1:{port}/0"
    client = redis.Redis.from_url(url)
    deadline = time.monotonic() + 20
    while True:
        try:
            client.ping()
            break
        except redis.ConnectionError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                raise RuntimeError("redis-server did not start") from None
            time.sleep(0.05)
    try:
        yield url
    finally:
        client.close()
        process.terminate()
        process.wait(timeout=10)


ROUTED_NETWORK = "2001:db8:7::/48"  # documentation addresses, routed here by `routed_network`


@pytest.fixture
def routed_network() -> Iterator[str]:
    """ROUTED_NETWORK routed to loopback for the test's length, so a socket can connect from
    any address in it (clients.connect_from) and a server sees real IPv6 peers of one /48.
    Root only: skipped elsewhere."""
    ip = shutil.which("ip")
    if not sys.platform.startswith("linux") or ip is None:
        pytest.skip("needs Linux's ip(8) to route a test /48 to loopback")
    route = [ip, "-6", "route", "add", "local", ROUTED_NETWORK, "dev", "lo"]
    added = subprocess.run(route, capture_output=True, text=True, check=False)  # noqa: S603
    if added.returncode != 0 and "File exists" not in added.stderr:
        pytest.skip(f"cannot route {ROUTED_NETWORK} to loopback: {added.stderr.strip()}")
    try:
        yield ROUTED_NETWORK
    finally:
        if added.returncode == 0:
            route[3] = "del"
            subprocess.run(route, capture_output=True, check=False)  # noqa: S603


@pytest.fixture
def serve_any(tmp_path: Path) -> Iterator[Callable[..., LiveServer]]:
    """Like `serve`, listening on every address (IPv6 too) instead of 127.0.0.1 alone."""
    with ExitStack() as stack:

        def start(name: str, **env: str) -> LiveServer:
            url = database_url(connection.settings_dict["NAME"])
            command = [sys.executable, "manage.py", "serve", "--no-prepare", "--host", "::"]
            command += ["--port", "{port}"]
            spool = tmp_path / f"spool-{name}"
            server = LiveServer(f"security-{name}", url, env, spool, command=command)
            return stack.enter_context(server)

        yield start
