"""Small talk: a whole message that only greets, thanks or says goodbye asks nothing."""

import pytest

from agent.small_talk import SMALL_TALK_MAX_CHARS, is_small_talk


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


def test_a_long_message_is_never_small_talk():
    assert not is_small_talk("bye " * (SMALL_TALK_MAX_CHARS // 4 + 1))
