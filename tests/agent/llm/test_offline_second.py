"""Which runner-up article joins a two-part answer (offline_second)."""

from agent.llm.offline_second import Second, second_article

QUESTION = "What happens when the model calls an unknown tool? Does the turn crash?"
ASKED = {"model", "call", "unknown", "tool", "turn", "crash"}
WANTED = dict.fromkeys(ASKED, 1.0)
LOOP = {"title": "The agent loop", "body": "Unknown tools get an error.", "language": "en"}


def runner_up(language: str, body: str = "轮次崩溃时记为 interrupted。") -> Second:
    other = {"title": "取消与超时", "body": body, "language": language}
    return second_article(
        question=QUESTION,
        sources=[LOOP, other],
        # The first article shares "tool" and "unknown", the runner-up "turn" and "crash".
        facts=[(0, {"tool", "unknown"}), (1, {"turn", "crash"})],
        asked=ASKED,
        wanted=WANTED,
    )


def test_a_runner_up_in_the_other_language_does_not_join_on_shared_words():
    # Its words meet the question's only through the glossary ("crash" 崩溃, "turn" 轮次):
    # the English loop article answers the English question, and the Chinese one is no part.
    assert runner_up("zh") == Second()


def test_a_runner_up_in_the_question_s_language_still_joins_on_shared_words():
    assert runner_up("en") == Second(1)


def test_a_runner_up_in_the_other_language_still_joins_for_a_name_only_it_mentions():
    named = second_article(
        question="Does the turn crash, and what does asyncio.shield do?",
        sources=[LOOP, {"body": "asyncio.shield 让保存不被取消。", "language": "zh"}],
        facts=[(0, {"turn"}), (1, set())],
        asked={"turn", "crash", "asyncio.shield"},
        wanted={"turn": 1.0, "crash": 1.0, "asyncio.shield": 1.0},
    )
    assert named == Second(1, ("asyncio.shield",))
