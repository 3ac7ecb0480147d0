import pytest

from agent.llm.offline_swap import asked_language, swapped_subject


@pytest.mark.parametrize(
    ("question", "subject"),
    [
        ("what about the step limit?", "the step limit"),
        ("How about HNSW?", "HNSW"),
        ("ok, and what about the audit log of tool calls?", "the audit log of tool calls"),
        ("and cancelling a turn?", "cancelling a turn"),
        ("那取消呢？", "取消"),
        ("还有步数上限呢", "步数上限"),
        ("那 Kafka 怎么样？", "Kafka"),
    ],
)
def test_a_follow_up_that_swaps_the_subject_names_it(question, subject):
    assert swapped_subject(question) == subject


@pytest.mark.parametrize(
    "question",
    [
        "And what is it set to out of the box?",  # a question of its own, on the same subject
        "and if one of those calls fails, do the others come back?",
        "what about its default?",  # the earlier subject, pointed at
        "and that one?",
        "那个呢？",
        "那它和总耗时比，哪个影响更大？",
        "and in Chinese?",  # the same answer in a language, not a new subject
        "英文呢？",
        "那单次模型调用呢？超时以后怎么处理？",  # a second question after it
        "What is HNSW?",
    ],
)
def test_anything_else_swaps_no_subject(question):
    assert swapped_subject(question) == ""


@pytest.mark.parametrize(
    ("question", "code"),
    [
        ("and in Chinese?", "zh"),
        ("can you say that in English please?", "en"),
        ("用中文说一下", "zh"),
        ("英文呢？", "en"),
        ("Chinese full-text search?", ""),  # a subject, not a language for the answer
        ("中文分词呢？", ""),
        ("and in Chinese, which extension?", ""),
    ],
)
def test_a_follow_up_asking_for_another_language_names_it(question, code):
    assert asked_language(question) == code
