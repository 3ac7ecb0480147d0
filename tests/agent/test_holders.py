"""A turn lock's token names its process; only a process of the same machine boot and pid
namespace is judged, and only the kernel's word that its pid is gone takes a lock off."""

import os
import signal
import subprocess
import sys

from agent import holders


def _child() -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])  # noqa: S603


def _token(pid: int, space: str = holders.SPACE) -> str:
    return f"{'a' * 32}.{space}.{pid}"


def test_a_token_names_this_process():
    token = holders.holder_token()
    assert token.split(".")[1:] == [holders.SPACE, str(os.getpid())]
    assert not holders.holder_gone(token)


def test_a_killed_process_is_gone_reaped_or_not():
    child = _child()
    assert not holders.holder_gone(_token(child.pid))  # it runs
    child.send_signal(signal.SIGKILL)
    os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # dead, not reaped: a zombie
    assert holders.holder_gone(_token(child.pid))
    child.wait()
    assert holders.holder_gone(_token(child.pid))


def test_a_holder_of_another_host_or_namespace_is_left_to_its_lease():
    child = _child()
    child.kill()
    child.wait()
    assert not holders.holder_gone(_token(child.pid, space="0123456789ab"))
    assert not holders.holder_gone("a" * 32)  # a token of before, or of a machine with no /proc
    assert not holders.holder_gone(_token(1))  # init runs (and is not ours to signal)
