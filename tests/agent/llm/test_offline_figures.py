"""Which questions ask for a figure, and which facts give the one asked for."""

import pytest

from agent.llm.offline_figures import asks_for_figure, asks_price, frame_terms, gives_figure


@pytest.mark.parametrize(
    ("text", "question", "gives"),
    [
        # A period: only a fact naming it answers.
        ("60 questions per day", "How many questions can a session ask in a day?", True),
        ("6 questions per minute", "How many questions can a session ask in a day?", False),
        ("每天 60 个问题", "每个会话每天最多能问多少个问题？", True),
        ("日志里记录了 3 次重试", "每个会话每天最多能问多少个问题？", False),
        # "a second question" is an ordinal, not a period.
        ("It costs 4,000 tokens.", "How many tokens does a second question cost?", True),
        # "how many … per minute" asks for a count, not a duration.
        ("6 questions per minute", "How many questions per minute may I send?", True),
        # A version of the thing named, and only of it.
        ("pgvector 0.8 added iterative scans", "Which pgvector version added them?", True),
        ("Since Channels 4 Daphne is separate", "Which Redis version does it need?", False),
        ("Requires Python 3.12", "什么版本的 Python 才行？", True),
        # Items already named, counted again, are no figure.
        (
            "They keep the first group happy and the other two cheap.",
            "What's the rate limit?",
            False,
        ),
        ("Allowance: 30 questions per 10 minutes", "What's the per-IP limit?", True),
        # "How much slower?" asks how two things compare: a count of something else is no answer.
        ("把“全文检索”切成“全文”“文检”“检索”三个片段", "二元切分比 zhparser 慢多少？", False),
        ("二元切分的查询比 zhparser 慢 3 倍", "二元切分比 zhparser 慢多少？", True),
        ("HNSW answers in 2 ms, IVFFlat in 5 ms.", "How much faster is HNSW than IVFFlat?", True),
        ("IVFFlat splits the rows into 100 lists.", "How much faster is HNSW than IVFFlat?", False),
    ],
)
def test_a_fact_gives_the_figure_the_question_asks_for(text, question, gives):
    assert asks_for_figure(question)
    assert gives_figure(text, question) is gives


def test_superlatives_ask_for_a_figure():
    assert asks_for_figure("What is the largest number of dimensions a column can store?")
    assert not asks_for_figure("Why is the largest article split into chunks?")


@pytest.mark.parametrize(
    "question",
    ["What's the step limit?", "what is the daily token budget?", "What's the rate limit?",
     "what is the chunk size", "What is Docent's tool timeout?"],
)  # fmt: skip
def test_the_value_of_a_named_limit_is_a_figure(question):
    # "A step limit is also a sensor." answered "what's the step limit?" as a definition.
    assert asks_for_figure(question)


@pytest.mark.parametrize(
    "question", ["What is a step limit?", "what are token budgets?", "what is a rate limit"]
)
def test_what_a_limit_is_is_no_figure(question):
    assert not asks_for_figure(question)


def test_a_figure_must_count_what_how_many_asks_about():
    links = "- m (default 16): the maximum number of links per node per layer."

    assert not gives_figure(links, "How much maintenance_work_mem does the HNSW build need?")
    assert gives_figure(links, "How many links per node does HNSW keep by default?")
    assert not gives_figure("60 questions per day", "how many tokens per day can a session use?")
    # "how much does it cost" names nothing counted: any figure may answer.
    assert gives_figure("It costs 4,000 tokens.", "How much does a second question cost?")


@pytest.mark.parametrize(
    "question",
    [
        "Is counting how many messages each visitor sends enough to keep the bill down?",
        "Does the loop stop no matter how long a tool takes?",
        "Is limiting how many tools run at once worth it?",
    ],
)
def test_how_many_inside_a_yes_no_question_asks_no_figure(question):
    assert not asks_for_figure(question)
    assert asks_for_figure("I want to know how many messages a visitor may send")


def test_the_words_of_how_often_frame_a_figure_they_are_not_its_topic():
    assert frame_terms("How often should I feed the starter?") == {"often"}
    assert frame_terms("How long does the first token take?") == {"long"}
    # Not a figure asked for: the word stays a word of the question.
    assert frame_terms("Does it work no matter how long the article is?") == set()


@pytest.mark.parametrize(
    "question",
    [
        "how much does 3 million tokens a day actually cost us, roughly?",
        "What does a million tokens cost with the model this blog runs on?",
        "what does that work out to in dollars per visitor?",
        "跑一个月大概要花多少钱？",
    ],
)
def test_a_price_asked_for_is_given_only_by_a_price(question):
    """A token budget ("40,000 tokens") was quoted for what the tokens cost."""
    assert asks_for_figure(question)
    assert not gives_figure("Per-session daily budget: 40,000 tokens.", question)
    assert gives_figure("A million input tokens cost $0.15 at list price.", question)
    assert gives_figure("每月大约 30 元。", question)


def test_what_something_costs_in_model_calls_is_no_price():
    question = "How does the cost per answer of a tool-driven agent compare with a plain model?"
    assert gives_figure("Usually two to four model calls plus tool time.", question)
    assert not asks_for_figure(question)


@pytest.mark.parametrize(
    "question",
    [
        "Why cap model calls, is it to save money?",
        "Does the article discuss pricing?",
        "价格会影响选择吗？",
        "what does 8k tokens of context cost in latency?",
        "一个问题大概花费多少 token？",
        "How do the step cap and the token budget together bound what one question can cost?",
    ],
)
def test_naming_money_or_cost_without_asking_an_amount_of_it_asks_no_price(question):
    assert not asks_price(question)


def test_a_few_said_in_passing_asks_for_no_figure():
    # "开了好几个 worker" (several workers) and "十几次" (a dozen or so times) tell the situation;
    # "几个" alone asks how many.
    assert not asks_for_figure("上线以后开了好几个 worker 进程，channel layer 应该换成什么？")
    assert not asks_for_figure("同一个词被搜了十几次，是哪里出了问题？")
    assert not asks_for_figure("这几个参数分别是什么意思？")
    assert not asks_for_figure("哪几个参数最重要？")
    assert asks_for_figure("上线以后应该开几个 worker 进程？")


def test_what_a_setting_is_set_to_asks_for_its_value():
    assert asks_for_figure("What's ef_search set to by default?")
    assert asks_for_figure("what is m by default?")
    assert asks_for_figure("What’s hnsw.ef_search set to?")
    assert not asks_for_figure("What is ef_search?")
    assert not asks_for_figure("What is logged by default?")
    assert not asks_for_figure("What's enabled by default?")
