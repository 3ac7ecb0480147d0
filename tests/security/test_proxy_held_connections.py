"""Connections one visitor holds open at the cluster's nginx, without a request nginx counts.

nginx's `limit_conn` counts a connection only once a request's whole head is in: a connection
that has sent nothing, or half a head, is counted nowhere. The cluster's nginx kept Linux's
start-up soft limit of 1,024 open files (no `worker_rlimit_nofile`) with 8,192
`worker_connections`: 1,100 idle connections from one address ran it out of files, and every
visitor's connection waited unanswered (accept4: "Too many open files"). With files enough,
8,300 half-sent heads from one address used up its 8,192 connections ("worker_connections are
not enough"), each held for nginx's default 60 s to finish a head: every visitor refused.
"""

import resource
import shutil
import socket
import time

import pytest

from tests.security.test_proxy_connections import running_proxy, status_read

pytestmark = pytest.mark.skipif(
    not shutil.which("nginx", path="/usr/sbin:/usr/bin:/sbin"), reason="nginx is not installed"
)

HOLDER = "127.0.0.2"
OTHER = "127.0.0.3"
HEAD = b"GET / HTTP/1.1\r\nHost: docent\r\n"  # no blank line: never finished


def _open(port: int, count: int, sent: bytes = b"") -> list[socket.socket]:
    held = []
    for _ in range(count):
        connection = socket.create_connection(("127.0.0.1", port), source_address=(HOLDER, 0))
        if sent:
            connection.sendall(sent)
        held.append(connection)
    return held


def _other_visitor_status(port: int) -> int | None:
    """What another visitor gets for `GET /ok`; None when nginx never answers (10 s)."""
    try:
        with socket.create_connection(("127.0.0.1", port), source_address=(OTHER, 0)) as c:
            c.sendall(b"GET /ok HTTP/1.1\r\nHost: docent\r\n\r\n")
            c.settimeout(10)
            return status_read(c)
    except (OSError, IndexError, ValueError):
        return None


def _own_files(needed: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard < needed:
        pytest.skip(f"needs {needed} open files; the hard limit is {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, needed), hard))


def test_idle_connections_of_one_visitor_do_not_run_nginx_out_of_files(tmp_path):
    _own_files(3000)
    with running_proxy(tmp_path, host="127.0.0.1", open_files=1024) as (port, _):
        held = _open(port, 1100)
        time.sleep(0.5)  # nginx has accepted what it can
        status = _other_visitor_status(port)
        for connection in held:
            connection.close()

    assert status == 200  # before: None, nginx out of files from the 1,021st connection


def test_half_sent_heads_of_one_visitor_do_not_shut_the_others_out(tmp_path):
    count = 9200  # well past the 8,192 connections nginx had
    _own_files(2 * count)
    with running_proxy(tmp_path, host="127.0.0.1") as (port, _):
        held = _open(port, count, HEAD)
        time.sleep(0.5)
        status = _other_visitor_status(port)
        for connection in held:
            connection.close()

    assert status == 200  # before: None, "8192 worker_connections are not enough"


def test_a_head_never_finished_is_closed_after_http_head_seconds(tmp_path, settings):
    settings.HTTP_HEAD_SECONDS = 2  # the web processes' limit, and now nginx's
    with running_proxy(tmp_path, host="127.0.0.1") as (port, _):
        [connection] = _open(port, 1, HEAD)
        connection.settimeout(30)  # half of nginx's own default (60 s)
        try:
            while connection.recv(4096):  # nginx may say 408 first
                pass
            closed = True
        except ConnectionResetError:  # reset_timedout_connection
            closed = True
        except TimeoutError:
            closed = False
        connection.close()

    assert closed  # before: still open after 30 s
