"""The first run's indexing counter, on a terminal and in a log file."""

import io
import os
import sys

from blog.tasks import _first_run_count


def count_to_three(monkeypatch, stream) -> None:
    monkeypatch.setattr(sys, "stderr", stream)
    for done in range(4):  # nothing done yet, then each article
        _first_run_count(done, 3)


def read_all(reader: int) -> str:
    """Everything a closed pty holds: one read may return only the first write (CI saw '0/3')."""
    chunks = []
    try:
        while chunk := os.read(reader, 4096):
            chunks.append(chunk)
    except OSError:  # Linux reports EIO once the writer's side is closed and drained
        pass
    finally:
        os.close(reader)
    return b"".join(chunks).decode()


def test_in_a_log_file_each_count_is_a_line_of_its_own(monkeypatch):
    """With `\\r` the counts ran together, and the next log line was glued to the last one."""
    log = io.StringIO()
    count_to_three(monkeypatch, log)

    assert "\r" not in log.getvalue()
    assert log.getvalue().splitlines() == [
        f"Indexing demo articles, first run only: {n}/3" for n in range(4)
    ]


def test_on_a_terminal_the_counter_redraws_one_line(monkeypatch):
    reader, writer = os.openpty()  # a real terminal
    with open(writer, "w", closefd=True) as terminal:
        count_to_three(monkeypatch, terminal)
    written = read_all(reader)

    counts = "".join(f"\rIndexing demo articles, first run only: {n}/3" for n in range(4))
    assert written == counts + "\r\n"  # the terminal turns the final \n into \r\n
