"""The cluster's nginx caps open connections per visitor address, as each web process does for
its direct peers (nginx itself is exempt there, so without this one visitor could hold every
connection through the proxy). Loopback, the machine itself, is not counted."""

import resource
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import pytest

from docent.cluster import nginx_conf, nginx_prepare
from testing_support.live_server import free_port

pytestmark = pytest.mark.skipif(
    not shutil.which("nginx", path="/usr/sbin:/usr/bin:/sbin"), reason="nginx is not installed"
)
PER_ADDRESS = 3
REQUEST_BURST = 5


class Holding(threading.Thread):
    """A stand-in web process: holds `/hold` requests open, answers anything else at once.
    `heads` keeps the head of every request nginx passed on."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.held: list[socket.socket] = []
        self.heads: list[bytes] = []

    def run(self) -> None:
        while True:
            try:
                peer, _ = self.listener.accept()
            except OSError:
                return
            head = peer.recv(65536)
            self.heads.append(head)
            if b"/hold" in head:
                self.held.append(peer)
            else:
                with peer:
                    peer.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")


@pytest.fixture
def proxy(tmp_path: Path):
    with running_proxy(
        tmp_path, host="127.0.0.1", per_address=PER_ADDRESS, request_burst=REQUEST_BURST
    ) as started:
        yield started


@contextmanager
def running_proxy(
    tmp_path: Path,
    *,
    host: str,
    open_files: int = 0,
    web_port: int = 0,
    stderr: IO | None = None,
    **limits,
) -> Iterator[tuple[int, Holding]]:
    """The cluster's nginx on `host`, in front of a stand-in web process; its port and the
    stand-in. `open_files`: nginx starts at that soft limit of open files (as Linux starts
    most processes at 1,024), its hard limit kept. `web_port`: a real web process's port, in
    front of which nginx runs instead. `stderr`: where nginx's error log goes (the console's)."""
    upstream = Holding()
    upstream.start()
    prefix, port = tmp_path / "nginx", free_port()
    nginx_prepare(prefix)
    conf = prefix / "nginx.conf"
    conf.write_text(
        nginx_conf(
            prefix=prefix, web_ports=[web_port or upstream.port], host=host, port=port, **limits
        )
    )
    nginx = shutil.which("nginx", path="/usr/sbin:/usr/bin:/sbin")
    command = [nginx, "-p", str(prefix), "-c", str(conf), "-e", "stderr", "-g", "daemon off;"]
    process = subprocess.Popen(  # noqa: S603
        command, preexec_fn=_soft_open_files(open_files), stderr=stderr
    )
    try:
        _wait_listening(host, port)
        yield port, upstream
    finally:
        process.terminate()
        process.wait(timeout=10)
        upstream.listener.close()
        for held in upstream.held:
            held.close()


def _soft_open_files(soft: int):
    if not soft:
        return None

    def limit() -> None:
        resource.setrlimit(
            resource.RLIMIT_NOFILE, (soft, resource.getrlimit(resource.RLIMIT_NOFILE)[1])
        )

    return limit


def _wait_listening(host: str, port: int) -> None:
    for _ in range(200):
        try:
            socket.create_connection((host, port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("nginx did not start")


def held_wait(upstream: Holding, count: int) -> None:
    """Wait until the stand-in holds `count` requests: nginx counts each by then."""
    for _ in range(600):
        if len(upstream.held) >= count:
            return
        time.sleep(0.05)
    raise RuntimeError(f"the stand-in holds {len(upstream.held)} of {count} requests")


def _request(port: int, source: str, path: str) -> socket.socket:
    connection = socket.create_connection(("127.0.0.1", port), source_address=(source, 0))
    connection.sendall(f"GET {path} HTTP/1.1\r\nHost: docent\r\n\r\n".encode())
    return connection


def status_read(connection: socket.socket) -> int:
    connection.settimeout(30)
    return int(connection.recv(4096).split(b" ")[1])


def test_one_visitor_address_cannot_hold_more_than_its_share_through_the_proxy(proxy):
    port, upstream = proxy
    held = [_request(port, "127.0.0.2", "/hold") for _ in range(PER_ADDRESS)]
    held_wait(upstream, PER_ADDRESS)

    over = _request(port, "127.0.0.2", "/ok")
    other_visitor = _request(port, "127.0.0.3", "/ok")

    assert status_read(over) == 429
    assert status_read(other_visitor) == 200
    for connection in (*held, over, other_visitor):
        connection.close()


def test_the_machine_itself_is_not_counted(proxy):
    port, upstream = proxy
    held = [_request(port, "127.0.0.1", "/hold") for _ in range(PER_ADDRESS + 2)]
    held_wait(upstream, PER_ADDRESS + 2)

    assert status_read(_request(port, "127.0.0.1", "/ok")) == 200
    for connection in held:
        connection.close()


def test_a_cap_beyond_nginxs_range_gives_a_configuration_nginx_accepts(tmp_path: Path):
    checked = _nginx_test(
        tmp_path,
        host="127.0.0.1",
        per_address=100_000_000,  # what the benches' live servers set for "no cap"
    )
    assert checked.returncode == 0, checked.stderr


@pytest.mark.parametrize("host", ["::1", "::", "0.0.0.0"])  # noqa: S104 - only nginx -t
def test_any_host_gives_a_configuration_nginx_accepts(tmp_path: Path, host: str):
    # HOST=:: wrote `listen :::8000`, which nginx refuses: the cluster could not serve IPv6.
    checked = _nginx_test(tmp_path, host=host)
    assert checked.returncode == 0, checked.stderr


def _nginx_test(tmp_path: Path, *, host: str, **limits: int) -> subprocess.CompletedProcess:
    """`nginx -t` of the cluster's configuration, listening on `host`."""
    prefix = tmp_path / "nginx"
    nginx_prepare(prefix)
    conf = prefix / "nginx.conf"
    conf.write_text(
        nginx_conf(prefix=prefix, web_ports=[free_port()], host=host, port=free_port(), **limits)
    )
    nginx = shutil.which("nginx", path="/usr/sbin:/usr/bin:/sbin")
    command = [nginx, "-t", "-p", str(prefix), "-c", str(conf), "-e", "stderr"]
    return subprocess.run(command, capture_output=True, text=True)  # noqa: S603


def test_one_visitor_address_past_its_request_burst_is_refused_by_the_proxy(proxy):
    # Answered 429 by nginx itself: a flood of requests never reaches a web process.
    port, _ = proxy

    def asked(source: str) -> int:
        with _request(port, source, "/ok") as connection:
            return status_read(connection)

    statuses = [asked("127.0.0.4") for _ in range(3 * REQUEST_BURST)]

    assert statuses[:REQUEST_BURST] == [200] * REQUEST_BURST
    assert statuses[-REQUEST_BURST:] == [429] * REQUEST_BURST
    assert asked("127.0.0.5") == 200  # another visitor
    assert [asked("127.0.0.1") for _ in range(3 * REQUEST_BURST)] == [200] * (3 * REQUEST_BURST)
