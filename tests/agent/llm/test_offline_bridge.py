"""The question's words in the blog's other language, from the glossary (offline_bridge)."""

from agent.llm.offline_bridge import question_terms, translated_terms


def test_a_chinese_question_gets_the_english_words_of_its_glossary_terms():
    found = translated_terms("工具调用失败了，循环会怎么办？")

    assert {"tool", "call", "fail", "loop"} <= found


def test_a_short_chinese_form_translates_as_its_shortest_english_line():
    # "循环" is listed under "agent loop" as a short form, and is "loop" on a line of its own:
    # the question said "loop", not "agent".
    assert "agent" not in translated_terms("循环会怎么办？")


def test_an_english_question_gets_the_chinese_words_of_its_glossary_terms():
    found = translated_terms("What does the step limit protect against?")

    assert {"步数", "上限"} <= found


def test_words_without_a_glossary_line_translate_to_nothing():
    assert translated_terms("weather today") == frozenset()


def test_question_terms_hold_the_question_and_its_translations():
    assert {"conversation", "对话", "会话"} <= question_terms("Where is the conversation saved?")
