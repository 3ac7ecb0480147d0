"""Matching terms of the offline model: what a question and a fact have in common."""

from agent.llm.offline_text import terms


def test_contractions_carry_no_topic_and_a_possessive_keeps_its_noun():
    assert terms("Why can't PostgreSQL's parser split it? They’re sure it isn't") == {
        "postgresql",
        "parser",
        "split",
        "sure",
    }


def test_how_a_question_is_framed_is_not_what_it_is_about():
    # "Streaming is the difference, and it is mostly plumbing." answered "what's the
    # difference between SSE and WebSockets?" on the word "difference" alone.
    assert terms("What's the difference between SSE and WebSockets?") == {"sse", "websocket"}
