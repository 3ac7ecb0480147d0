"""Readers who describe their situation: the sentence that says what goes wrong is the topic."""

import pytest

from agent.llm.offline_ask import the_ask
from agent.llm.offline_symptom import is_symptom, symptom_start


@pytest.mark.parametrize(
    "sentence",
    [
        "My agent keeps searching for nearly the same thing again and again.",
        "The reply shows up all at once instead of word by word.",
        "The stop button does nothing until the answer has finished.",
        "The search tool sometimes hangs forever.",
        "Retrieval got noticeably worse after we rewrote the code.",
        "我们的智能体有时候会反复用同样的关键词搜索。",
        "结果停止按钮好像不起作用了，任务一直在跑。",
        "按会话限流根本拦不住。",
    ],
)
def test_a_sentence_that_says_what_goes_wrong_is_a_symptom(sentence):
    assert is_symptom(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "The bill for one question was huge.",
        "We run Django behind nginx.",
        "我们用的是 PostgreSQL 自带的全文检索。",
    ],
)
def test_a_sentence_that_sets_the_scene_or_adds_to_it_is_no_symptom(sentence):
    assert not is_symptom(sentence)


def test_the_story_starts_at_the_last_symptom_before_the_sentence_pointed_to():
    parts = ["We use Django.", "The bot never answers.", "The bill was huge.", "Why?"]
    assert symptom_start(parts, 2) == 1
    assert symptom_start(["We use Django.", "The bill was huge.", "Why?"], 1) == 1


def test_an_ask_that_points_back_is_read_with_the_symptom_not_only_the_nearest_sentence():
    # "it" is the runaway loop, not the bill: read with the bill alone, the answer quoted the
    # article's story of one large bill instead of how loops run away.
    message = (
        "My agent keeps searching for nearly the same thing again and again and never "
        "answers. The bill for one question was huge. How can I put a stop to it?"
    )
    assert the_ask(message).question == message
    # The sentences about the reader before the one pointed to were their scene; one that
    # says what goes wrong is the story the ask is about.
    told = the_ask("We use Django. Our bot loops forever. Our logs are long. How do I stop that?")
    assert told.question == "Our logs are long. How do I stop that?"  # no symptom: as before
    stuck = the_ask("We use Django. Our bot keeps looping. Our logs are long. How do I stop it?")
    assert stuck.question == "Our bot keeps looping. Our logs are long. How do I stop it?"
    assert "Django" in stuck.scene.split()
