"""The moving window of a socket's frames, and json_parse's refusals (agent/frames.py)."""

import sys

import pytest

from agent.frames import BOM_REFUSED, FrameError, FrameWindow, json_parse


def test_a_window_takes_its_limit_in_any_60_seconds_and_more_once_the_oldest_is_older():
    window = FrameWindow(3)

    assert [window.over(t) for t in (0.0, 10.0, 20.0)] == [False, False, False]
    assert window.over(59.9)  # a fourth within 60 s of the first: refused, not counted
    assert not window.over(60.0)  # the first is 60 s old: this one takes its place
    assert window.over(69.9)  # the window is 10, 20, 60 again
    assert not window.over(70.0)
    assert window.times == [20.0, 60.0, 70.0]


def test_a_window_with_one_frame_is_small():
    # Every chat socket keeps two (the consumer's and the wire's), usually for one or two
    # frames; a deque(maxlen=...) allocated 64 slots at once: 760 bytes each.
    window = FrameWindow(300)
    window.over(0.0)

    assert sys.getsizeof(window) + sys.getsizeof(window.times) < 200


def test_a_body_or_frame_starting_with_a_byte_order_mark_is_refused_with_that_reason():

    for raw in ('\ufeff{"type": "stop"}', '\ufeff{"type": "stop"}'.encode()):
        with pytest.raises(FrameError) as refused:
            json_parse(raw, max_bytes=1000, max_depth=5)
        assert str(refused.value) == BOM_REFUSED  # was "The request is not valid JSON."
    assert json_parse('{"type": "\ufeff"}', max_bytes=1000, max_depth=5) == {"type": "\ufeff"}
