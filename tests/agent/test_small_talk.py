"""Small talk: a whole message that only greets, thanks or says goodbye asks nothing."""

import pytest

from agent.small_talk import SMALL_TALK_MAX_CHARS, closing, is_small_talk


@pytest.mark.parametrize(
    "message",
    ["thanks!", "Thank you so much 🙏", "ok, got it, thanks :)", "谢谢", "谢谢你！", "hi",
     "Hello there!", "你好", "hi, thanks!", "bye", "再见～", "  cheers  "],
)  # fmt: skip
def test_greetings_thanks_and_goodbyes_are_small_talk(message):
    assert is_small_talk(message)


@pytest.mark.parametrize(
    "message",
    ["thanks, what is RRF?", "hi, how do I install pgvector?", "你好，什么是向量嵌入？",
     "Why cap the agent's steps?", "RRF?", "thanks for nothing, the answer was wrong", ""],
)  # fmt: skip
def test_a_message_that_asks_anything_is_not(message):
    assert not is_small_talk(message)


@pytest.mark.parametrize(
    ("message", "said"),
    [("ok", "acknowledged"), ("got it", "acknowledged"), ("that's very helpful", "acknowledged"),
     ("明白了", "acknowledged"), ("嗯嗯", "acknowledged"), ("thanks, that helped!", "thanks"),
     ("I appreciate it", "thanks"), ("great answer, thanks", "thanks"), ("收到，谢谢", "thanks"),
     ("thank you so much, this is exactly what I needed", "thanks"), ("bye", "goodbye"),
     ("have a nice day!", "goodbye"), ("ok bye", "goodbye"), ("晚安", "goodbye")],
)  # fmt: skip
def test_what_a_closing_message_does(message, said):
    assert is_small_talk(message) and closing(message) == said


@pytest.mark.parametrize(
    "message",
    ["hi", "你好", "is that ok?", "ok so what is HNSW?", "It's ok", "good enough for prod?",
     "thanks for nothing, the answer was wrong", "that helped, but why five steps?"],
)  # fmt: skip
def test_a_greeting_or_a_question_closes_nothing(message):
    assert closing(message) is None


def test_a_long_message_is_never_small_talk():
    assert not is_small_talk("bye " * (SMALL_TALK_MAX_CHARS // 4 + 1))


@pytest.mark.parametrize(
    ("message", "small_talk"),
    [("嗯" * 79 + "?", False), ("哦 " * 39 + "x", False), ("k" * 79 + "?", False),
     ("好的" * 39 + "?", False), ("嗯" * 80, True), ("ok " * 26, True)],
)  # fmt: skip
def test_a_run_that_fails_at_its_end_is_read_once(message, small_talk):
    # One pattern tried every way of cutting the run into phrases: 24 "嗯" and a "?" took
    # 62 s, and each further character doubled it. This one would never have finished.
    assert is_small_talk(message) is small_talk
