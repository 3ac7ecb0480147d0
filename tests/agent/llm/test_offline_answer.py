"""What the offline answer composer quotes from the articles it read."""

from agent.llm.offline_answer import compose_answer

LOOP_ARTICLE = {
    "article_id": 2,
    "title": "Anatomy of the agent loop",
    "url": "/articles/anatomy-of-the-agent-loop/",
    "body": """Every assistant runs on the same small loop. Once you can draw it on a whiteboard
you can debug almost any agent.

## Parsing tool calls

The model can produce invalid JSON or a misspelt tool name. If the name is unknown, return a
tool message saying so rather than raising.
""",
}


def _answer(question: str, article: dict) -> str:
    return compose_answer(question=question, context="", sources=[article], excerpts={}, lang="en")


def test_a_sentence_sharing_only_its_title_words_with_the_question_is_not_what_answers_it():
    # "agent" is in the title: every sentence of the article is about the agent loop, so the
    # whiteboard sentence holding it says nothing about unknown tool names.
    answer = _answer(
        "In the agent loop, what happens if the model calls a tool name that doesn't exist?",
        LOOP_ARTICLE,
    )
    assert "misspelt tool name" in answer
    assert "whiteboard" not in answer


def test_title_words_still_count_when_nothing_else_of_the_question_matches():
    # The question names the article's subject and little else: the article is still the one.
    answer = _answer("Anatomy of an agent?", LOOP_ARTICLE)
    assert "whiteboard" in answer
