"""What the offline answer composer quotes from the articles it read."""

from agent.llm.offline_answer import compose_answer
from agent.llm.offline_figure_pick import _figure_instead
from agent.llm.offline_text import Fact

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


TIMEOUTS_ARTICLE = {
    "article_id": 14,
    "title": "取消与超时",
    "url": "/articles/cancellation-and-timeouts-zh/",
    "language": "zh",
    "body": """每一轮回答都可以被打断。

## 超时

| 对象 | 超时 | 超时后的处理 |
|---|---|---|
| 单次模型调用 | 60 秒收不到新数据，或整段流超过 300 秒 | 仍失败则结束本轮 |
""",
}
PARSING_ARTICLE = {
    "article_id": 5,
    "title": "Parsing model replies",
    "url": "/articles/parsing-model-replies/",
    "language": "en",
    "body": """Treat the model's reply as untrusted data before you act on it.

A call that fails validation is fed back to the model as data, not raised.
""",
}


def test_a_figure_the_lead_article_lacks_is_taken_from_another_article_read():
    # The English article leads (the search ranked it first; the Chinese one cannot contest
    # it on shared words) and states no duration; the article read beside it gives the one
    # asked for, in a row about the question.
    answer = compose_answer(
        question="How long does Docent wait on a model stream that stops sending data before "
        "treating the call as failed?",
        context="",
        sources=[PARSING_ARTICLE, TIMEOUTS_ARTICLE],
        excerpts={},
        lang="en",
        own="Docent",
    )
    assert "60 秒收不到新数据" in answer
    assert "取消与超时" in answer
    assert "don’t give that figure" not in answer


def test_no_article_read_giving_the_figure_is_still_a_decline():
    answer = compose_answer(
        question="How many bytes does a model stream fragment hold before the loop treats it "
        "as failed?",
        context="",
        sources=[PARSING_ARTICLE],
        excerpts={},
        lang="en",
    )
    assert "don’t give that figure" in answer


def test_a_product_the_blog_never_names_set_beside_the_subject_does_not_decline():
    # "ChatGPT" is a word no article uses (the search's unknown words), but the question
    # asks about the loop's tool calls, naming ChatGPT only to compare.
    answer = compose_answer(
        question="Like ChatGPT, does the loop feed a tool name that is unknown back to the model?",
        context="",
        sources=[LOOP_ARTICLE],
        excerpts={},
        lang="en",
        unknown=("chatgpt",),
    )
    assert "misspelt tool name" in answer
    # Asked about alone, it is what the question is about: declined.
    alone = compose_answer(
        question="Does ChatGPT feed an unknown tool name back to the model?",
        context="",
        sources=[LOOP_ARTICLE],
        excerpts={},
        lang="en",
        unknown=("chatgpt",),
    )
    assert "don’t mention “chatgpt”" in alone or "don’t mention “ChatGPT”" in alone


LIMITS_ARTICLE = {
    "article_id": 9,
    "title": "Rate limits for public chatbots",
    "url": "/articles/rate-limits/",
    "language": "en",
    "body": """For IPv6 clients, limit on the /64 prefix rather than the full address.

A rejected request should get status 429 and a Retry-After header.
""",
}
STREAMING_ARTICLE = {
    "article_id": 4,
    "title": "Pushing text to the browser",
    "url": "/articles/pushing-text/",
    "language": "en",
    "body": """Re-sending the whole answer so far on every update turns an O(n) stream of
tokens into O(n²) bytes.

A stream sends each token as it is made. A long answer takes seconds; its first token takes
milliseconds. The stream ends with the answer's last token.
""",
}


def test_one_shared_word_does_not_hold_the_lead_against_a_fact_sharing_three():
    # The search ranked the rate-limit article first; its only match is "full", which it
    # writes once and so weighs the most. The article read beside it writes "answer",
    # "stream" and "token" often, so each weighs little, but one fact shares all three.
    answer = compose_answer(
        question="Why stream tokens instead of waiting for the full answer?",
        context="",
        sources=[LIMITS_ARTICLE, STREAMING_ARTICLE],
        excerpts={},
        lang="en",
    )
    assert "Re-sending the whole answer" in answer
    assert "Pushing text to the browser" in answer
    assert "IPv6" not in answer


def test_a_fact_writing_the_number_before_what_how_many_counts_gives_the_figure():
    # The weights the blog gave this question: "allow" and "per" are rare on it and outweigh
    # "model calls", which it writes everywhere. The sentence they match gives no figure, and
    # the one that does ("5 model calls") shares little else of the question: it states the
    # very count asked, so it answers (it was declined as "don't give that figure").
    question = "How many model calls does the agent allow per turn?"
    wanted = {"turn": 0.14, "allow": 1.0, "agent": 0.17, "call": 0.02, "model": 0.03, "per": 0.5}
    allowing = Fact("Five leaves headroom without allowing an expensive spiral.", "sentence", "", 1)
    capped = Fact("Docent caps each user turn at 5 model calls.", "sentence", "", 0)
    costs = Fact("Each model turn adds 1,500 tokens.", "sentence", "", 2)
    pool = [(0, capped), (0, allowing)]
    assert [f.text for _, f in _figure_instead(pool, [(0, allowing)], wanted, question)] == [
        capped.text
    ]
    # As weak a fact with a number before another noun ("1,500 tokens") counts no model calls,
    # nor does "(5 calls)": calls of any kind.
    assert _figure_instead([(0, costs), (0, allowing)], [(0, allowing)], wanted, question) == []
    calls = Fact("Each turn ends at the budget (5 calls).", "sentence", "", 3)
    assert _figure_instead([(0, calls), (0, allowing)], [(0, allowing)], wanted, question) == []


def test_a_count_of_the_thing_asked_about_something_else_gives_no_figure():
    # "eight thousand characters" is an answer's size, not a chunk's: it shares no word of the
    # question but the thing counted.
    question = "How many characters should each chunk hold?"
    wanted = {"character": 0.5, "chunk": 1.0, "hold": 0.3}
    held = Fact("Chunks hold one idea each.", "sentence", "", 0)
    size = Fact("An answer of eight thousand characters ships eight million.", "sentence", "", 1)
    assert _figure_instead([(0, held), (0, size)], [(0, held)], wanted, question) == []


STATES_ARTICLE = {
    "article_id": 14,
    "title": "Cancelled and interrupted turns",
    "url": "/articles/cancelled-and-interrupted/",
    "summary": "A turn can end before its answer, and how it ended says why.",
    "body": """A turn can end before its answer, and how it ended says why.

## Two statuses

When the reader presses stop the turn is recorded as cancelled. A turn cut off by a restart
is recorded as interrupted.

Telling cancelled from interrupted matters: many cancelled turns mean slow answers, many
interrupted turns mean a crashing deployment.
""",
}


def test_a_comparison_of_two_subjects_is_not_explained_by_the_article_titled_after_both():
    # "cancelled vs interrupted?" read as one subject to define, and the article titled after
    # both answered with its opening, which weighs neither against the other.
    for question in (
        "cancelled vs interrupted?",
        "What's the difference between cancelled and interrupted?",
    ):
        answer = _answer(question, STATES_ARTICLE)
        assert "Telling cancelled from interrupted" in answer, answer
        assert "how it ended says why" not in answer
