"""The question's words in the blog's other language, from the glossary (offline_bridge)."""

from agent.llm.offline_bridge import question_terms, translated_terms, translations


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


def test_a_line_with_a_word_that_names_no_topic_is_left_out():
    # "time out" is read as "time" alone ("out" names no topic): "超时" is "timeout" and
    # "deadline", never the "time" of "The first time a tool runs".
    assert "time" not in translated_terms("工具超时以后会怎样？")


def test_each_translation_knows_the_question_words_it_stands_for():
    found = translations("Which chatbot is more accurate?")

    assert {"聊天", "机器"} <= found.keys()
    assert {found["聊天"], found["机器"]} == {("chatbot",)}
