"""Readers who describe their situation: the sentence that says what goes wrong is the topic."""

import re

import pytest

from agent.answered import is_decline
from agent.llm.offline_ask import the_ask
from agent.llm.offline_symptom import clauses, is_symptom, symptom_start, without_set_up
from tests.agent.llm.test_offline_ask import STEPS, VECTORS, _ask, _hit


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


def test_a_sentence_parts_at_commas_and_at_conjunctions_that_start_a_clause():
    assert clauses(["We run Django behind a proxy and users say it hangs, every time."]) == [
        "We run Django behind a proxy",
        "and users say it hangs",
        "every time.",
    ]
    assert clauses(["我们升级到 17 之后，编译不过了。"]) == ["我们升级到 17 之后", "编译不过了。"]


def test_the_scene_is_the_readers_set_up_not_what_they_say_goes_wrong():
    # "What's going on?" says too little, so the story is the question; its set-up names are
    # excused, the names in what goes wrong are not.
    told = the_ask(
        "I'm trying to run the loop inside a Celery worker, but Trio just hangs. What's going on?"
    )
    assert "Celery" in told.scene.split()
    assert "Trio" not in told.scene.split()
    assert the_ask("Our DiskANN index keeps returning nothing. Any idea why?").scene == ""


@pytest.mark.asyncio
async def test_a_story_whose_trouble_names_what_no_article_does_is_declined():
    # The hit shares the story's nouns (pgvector, index, filter), not its problem: DiskANN.
    # As the reader's scene, "DiskANN" was excused and the pgvector article quoted.
    result = await _ask(
        "We filter our pgvector queries by language, and since we moved to DiskANN the "
        "index keeps returning fewer results than asked for. Any idea why?",
        [_hit(VECTORS, 0.8)],
    )
    assert is_decline(result.answer)
    assert "DiskANN" in result.answer
    assert result.citations == []


@pytest.mark.asyncio
async def test_a_set_up_name_still_does_not_decline_the_story():
    result = await _ask(
        "We run a small Flask site, and our bot keeps calling tools forever. Any idea why?",
        [_hit(STEPS, 0.8)],
    )
    assert not is_decline(result.answer)
    assert [c["url"] for c in result.citations] == ["/articles/steps/"]


def test_a_story_without_the_readers_set_up_keeps_what_goes_wrong():
    about_reader = re.compile(r"\b(?:we|our)\b", re.IGNORECASE)
    told = ["We run a small Flask site, and our bot keeps calling the search tool forever."]
    assert (
        without_set_up(told, about_reader) == "and our bot keeps calling the search tool forever."
    )
    # Nothing goes wrong, or nothing is set-up: no story to tell apart.
    assert without_set_up(["We run a small Flask site."], about_reader) == ""
    assert without_set_up(["The bot keeps calling tools."], about_reader) == ""


def test_a_short_ask_after_a_story_is_the_story_without_its_set_up():
    # "Any idea why?" says too little: it is read with what goes wrong, and the set-up
    # ("a small Flask site") is the scene, whose names are excused.
    ask = the_ask(
        "We run a small Flask site, and our bot keeps calling tools forever. Any idea why?"
    )
    assert ask.question == "and our bot keeps calling tools forever. Any idea why?"
    assert "Flask" in ask.scene.split()
    # A scene with no symptom in it is still read whole (pass 45).
    told = "We run a public demo. Our chatbot burned through our bill. What should we have done?"
    assert the_ask(told).question == told


@pytest.mark.asyncio
async def test_a_story_whose_set_up_misses_is_answered_by_what_goes_wrong():
    # The whole message (with "Flask", a word the blog never uses) fell under the bar; the
    # story without its set-up finds the step-limits article.
    story = "and our bot keeps calling tools forever. Any idea why?"
    result = await _ask(
        "We run a small Flask site, and our bot keeps calling tools forever. Any idea why?",
        [],
        found={story: [_hit(STEPS, 0.8)]},
    )
    assert not is_decline(result.answer)
    assert [c["url"] for c in result.citations] == ["/articles/steps/"]


def test_a_run_of_spaces_is_a_clause_break_from_its_start_only():
    # Tried from each of its spaces, a run of 3,940 spaces took 1.7 s per read of the story
    # and 16.7 s of a worker's CPU per turn; from its start only, a read takes 2 ms. No match
    # may begin inside the run.
    from agent.llm.offline_symptom import _CLAUSE

    assert _CLAUSE.search("We run Django" + " " * 5 + "and it hangs").start() == len(
        "We run Django"
    )
    assert (
        _CLAUSE.search("We run Django" + " " * 5 + "and it hangs", len("We run Django") + 2) is None
    )
