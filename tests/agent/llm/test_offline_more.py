"""Follow-ups that ask about the answer before them: more, why, other, example, code, shorter,
where; each answered from the article the answer quoted, with what it did not quote yet."""

import pytest

from agent.answered import is_decline
from agent.llm.offline import OfflineModel
from agent.llm.offline_more_ask import answer_ask
from agent.loop import Limits, run_turn
from agent.prompts import build_messages
from agent.tool import Tool
from tests.agent.llm.tool_inputs import DetailIn, SearchIn

LOOP = {
    "article_id": 1,
    "title": "Anatomy of the agent loop",
    "url": "/articles/loop/",
    "summary": "Call the model, run its tool calls, append the results in call order, and call "
    "again until it answers.",
    "body": """The agent loop calls the model, runs the tools it asks for, and calls it again.

## Stop conditions

A loop with no exit is a bill with no limit. The loop has three ways to end a turn:

| Condition | Status recorded |
| --- | --- |
| Model replies without tool calls | done |
| Model call budget exhausted | max_steps |
| User presses stop or disconnects | cancelled |

## Append in call order

Tool results are appended to the conversation in the order the calls were issued. There are
two reasons:

- Several providers reject a conversation whose tool messages do not line up with the calls.
- Deterministic ordering makes transcripts reproducible for tests and audits.

## Running tools concurrently

The loop runs independent tool calls concurrently with asyncio.gather in every turn.

```python
results = await asyncio.gather(*(run(call) for call in calls))
```

Three searches that each take 120 ms finish in about 120 ms instead of 360 ms.
Cap the parallel calls at eight for a blog assistant.
Give every tool its own timeout so that one slow call cannot hold up the others.
""",
}
FUSION = {
    "article_id": 2,
    "title": "Hybrid search with reciprocal rank fusion",
    "url": "/articles/rrf/",
    "summary": "Reciprocal rank fusion merges the keyword and vector lists by their ranks.",
    "body": """Reciprocal rank fusion merges the keyword list and the vector list by rank alone.

## The formula

Each document scores the sum of one over sixty plus its rank in each list of the fusion.
A worked example with k = 60:

| Document | Keyword rank | Vector rank |
| --- | --- | --- |
| A | 1 | not found |
| D | 2 | 2 |

D wins, and A comes second although it led the keyword list.
""",
}
ARTICLES = {a["article_id"]: a for a in (LOOP, FUSION)}


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ("tell me more", "more"),
        ("go on", "more"),
        ("还有呢？", "more"),
        ("再多讲一点", "more"),
        ("what are the other ways it can end?", "other"),
        ("and the other parameters?", "other"),
        ("其他的呢？", "other"),
        ("why?", "why"),
        ("why not?", "why"),
        ("为什么？", "why"),
        ("can you give an example?", "example"),
        ("举个例子", "example"),
        ("show me the code for that", "code"),
        ("代码怎么写？", "code"),
        ("in short?", "shorter"),
        ("一句话总结一下", "shorter"),
        ("where does it say that?", "where"),
        ("出处在哪？", "where"),
        ("give me the key numbers", "figures"),
        ("what are the key numbers?", "figures"),
        ("列出关键数字", "figures"),
        ("有哪些关键数据？", "figures"),
    ],
)
def test_an_ask_about_the_answer_is_read_by_what_it_wants(message, kind):
    assert answer_ask(message) == kind


@pytest.mark.parametrize(
    "message",
    [
        "and does it work with MongoDB?",  # a subject of its own: searched as before
        "what does recall mean?",
        "那中文呢？",  # the other language: offline_swap's
        "OK, different question: how does Docent stop cross-site WebSocket hijacking?",
        "why does the loop append results in call order?",
        # A new subject after "the other": searched, not read as an ask about the answer.
        "and the other databases like MongoDB?",
        "what are the other ways to cook rice?",
        "why that Redis?",
        "what are the numbers for HNSW?",  # names its subject
        "数据库怎么选？",
    ],
)
def test_a_follow_up_with_a_subject_of_its_own_is_no_ask_about_the_answer(message):
    assert answer_ask(message) == ""


def _hit(article: dict) -> dict:
    fields = {k: article[k] for k in ("article_id", "title", "url")}
    return {**fields, "rank": 1, "excerpt": article["body"][:600], "relevance": 0.9}


async def _ask(
    turns: list[str],
    article: dict = LOOP,
    *,
    answers: list[str] | None = None,
    needs: str = "",
    misses: str = "\0",
):
    """The last of `turns`, after the model answered each one before it (or `answers`); the
    search finds the article only for a query with `needs` in it and `misses` not."""

    async def search(params: SearchIn):
        if needs in params.query and misses not in params.query:
            return [_hit(article)]
        return "No relevant content found."

    async def detail(params: DetailIn):
        return ARTICLES[params.article_id]

    tools = [
        Tool("search_knowledge_base", "Search.", SearchIn, search, lambda out: "results"),
        Tool("get_article_detail", "Read.", DetailIn, detail, lambda out: "1 article"),
    ]
    history: list[dict] = []
    for n, question in enumerate(turns):
        messages = build_messages(history=history, user_message=question, page=None)
        result = await run_turn(
            messages=messages, model=OfflineModel(), tools=tools, limits=Limits(), emit=_discard
        )
        answer = answers[n] if answers and n < len(answers) else result.answer
        history += [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
    return result, history[-3]["content"] if len(history) >= 4 else ""


async def _discard(event: dict) -> None:
    return None


@pytest.mark.asyncio
async def test_the_other_ways_are_the_table_its_lead_announces():
    # "what are the other ways it can end?" quoted one generic sentence; the article's table
    # of endings is what it asks for.
    result, before = await _ask(
        ["How does the agent loop end a turn?", "what are the other ways it can end?"],
        answers=[
            "A loop with no exit is a bill with no limit.\n\nSource: [Anatomy of the agent "
            "loop](/articles/loop/)"
        ],
    )
    assert "max_steps" in result.answer and "cancelled" in result.answer
    assert [c["url"] for c in result.citations] == ["/articles/loop/"]


@pytest.mark.asyncio
async def test_why_quotes_the_reasons_not_the_answer_again():
    first = (
        "Tool results are appended to the conversation in the order the calls were issued.\n\n"
        "Source: [Anatomy of the agent loop](/articles/loop/)"
    )
    result, _ = await _ask(
        ["Should tool results be appended in the order they finish?", "why not?"],
        answers=[first],
    )
    assert "Several providers reject a conversation" in result.answer
    assert "in the order the calls were issued" not in result.answer


@pytest.mark.asyncio
async def test_tell_me_more_adds_what_the_answer_did_not_quote():
    first = (
        "The loop runs independent tool calls concurrently with asyncio.gather in every turn.\n\n"
        "Source: [Anatomy of the agent loop](/articles/loop/)"
    )
    result, _ = await _ask(["How does the loop run tools?", "tell me more"], answers=[first])
    assert not is_decline(result.answer)
    assert "asyncio.gather in every turn" not in result.answer
    assert "120 ms" in result.answer  # the passage right after the quote
    assert [c["url"] for c in result.citations] == ["/articles/loop/"]


@pytest.mark.asyncio
async def test_an_example_is_the_table_announced_as_one_and_the_line_after_it():
    first = (
        "Reciprocal rank fusion merges the keyword list and the vector list by rank alone.\n\n"
        "Source: [Hybrid search with reciprocal rank fusion](/articles/rrf/)"
    )
    result, _ = await _ask(
        ["What is reciprocal rank fusion?", "can you give an example?"], FUSION, answers=[first]
    )
    assert "Document: D" in result.answer and "D wins" in result.answer


@pytest.mark.asyncio
async def test_the_code_is_the_block_in_the_section_quoted():
    first = (
        "The loop runs independent tool calls concurrently with asyncio.gather in every turn.\n\n"
        "Source: [Anatomy of the agent loop](/articles/loop/)"
    )
    result, _ = await _ask(["How does the loop run tools?", "代码怎么写？"], answers=[first])
    assert "```python\nresults = await asyncio.gather" in result.answer  # its language kept
    assert result.answer.endswith("来源：[Anatomy of the agent loop](/articles/loop/)")


@pytest.mark.asyncio
async def test_in_short_is_the_article_summary_and_where_names_the_section():
    first = (
        "The loop runs independent tool calls concurrently with asyncio.gather in every turn.\n\n"
        "Source: [Anatomy of the agent loop](/articles/loop/)"
    )
    short, _ = await _ask(["How does the loop run tools?", "in short?"], answers=[first])
    assert "append the results in call order" in short.answer
    where, _ = await _ask(
        ["How does the loop run tools?", "where does it say that?"], answers=[first]
    )
    assert "“Running tools concurrently”" in where.answer
    assert [c["url"] for c in where.citations] == ["/articles/loop/"]


@pytest.mark.asyncio
async def test_three_turns_read_the_answer_just_before():
    result, _ = await _ask(
        ["Should tool results be appended in the order they finish?", "why not?", "tell me more"],
        answers=[
            "Tool results are appended to the conversation in the order the calls were issued."
            "\n\nSource: [Anatomy of the agent loop](/articles/loop/)",
            "- Several providers reject a conversation whose tool messages do not line up with "
            "the calls.\n- Deterministic ordering makes transcripts reproducible for tests and "
            "audits.\n\nSource: [Anatomy of the agent loop](/articles/loop/)",
        ],
    )
    assert "Several providers" not in result.answer
    assert [c["url"] for c in result.citations] == ["/articles/loop/"]


@pytest.mark.asyncio
async def test_an_answer_citing_nothing_gives_the_ask_nothing_to_point_at():
    # After a decline, "tell me more" has no answer to add to: it is answered as before.
    result, _ = await _ask(
        ["How does the loop run tools?", "tell me more"],
        answers=["I couldn’t find anything about that in this blog’s articles."],
    )
    assert "Running tools concurrently" not in result.answer


@pytest.mark.asyncio
async def test_an_ask_in_many_characters_still_leans_on_the_question_before():
    # "举个代码例子" reads as five two-character terms, too many for "says little": it was
    # searched alone, found nothing and was declined.
    first = (
        "The loop runs independent tool calls concurrently with asyncio.gather in every turn.\n\n"
        "Source: [Anatomy of the agent loop](/articles/loop/)"
    )
    result, _ = await _ask(
        ["How does the loop run tools?", "举个代码例子"], answers=[first], needs="run tools"
    )
    assert "results = await asyncio.gather" in result.answer


@pytest.mark.asyncio
async def test_an_ask_about_the_answer_is_searched_with_the_questions_before_it_alone():
    # "什么是二元切分？ 举个代码例子" fell under the bar on the demo blog (its last four
    # characters are in no article); "什么是二元切分？" alone found the article again.
    first = (
        "The loop runs independent tool calls concurrently with asyncio.gather in every turn.\n\n"
        "Source: [Anatomy of the agent loop](/articles/loop/)"
    )
    result, _ = await _ask(
        ["How does the loop run tools?", "有示例代码吗？"], answers=[first], misses="代码"
    )
    assert "results = await asyncio.gather" in result.answer


@pytest.mark.asyncio
async def test_a_second_ask_in_a_row_is_searched_with_the_question_not_the_first_ask():
    # "… → show me the code → why?" searched "show me the code why?"-ish words and declined.
    result, _ = await _ask(
        ["How does the loop run tools concurrently?", "show me the code", "why?"],
        needs="concurrently",
        misses="code",
    )
    assert not is_decline(result.answer)
    assert [c["url"] for c in result.citations] == ["/articles/loop/"]


@pytest.mark.asyncio
async def test_sum_it_up_in_one_sentence_after_an_answer_is_the_short_version():
    # "一句话总结一下" also reads as "summarize": it gave the article's whole section outline.
    result, _ = await _ask(["How does the agent loop end a turn?", "一句话总结一下"])
    assert LOOP["summary"] in result.answer
    assert "Stop conditions" not in result.answer


@pytest.mark.asyncio
async def test_a_second_tell_me_more_adds_what_neither_answer_quoted():
    # Only the last answer counted as said: the third turn quoted the first answer again.
    first = (
        "The loop runs independent tool calls concurrently with asyncio.gather in every turn.\n\n"
        "Source: [Anatomy of the agent loop](/articles/loop/)"
    )
    turns = ["How does the loop run tools?", "tell me more", "tell me more"]
    second, _ = await _ask(turns[:2], answers=[first])
    third, _ = await _ask(turns, answers=[first, second.answer])

    quoted = [line for line in second.answer.split("\n\n") if not line.startswith("Source")]
    assert "asyncio.gather in every turn" not in third.answer
    assert not any(line in third.answer for line in quoted), (second.answer, third.answer)


@pytest.mark.asyncio
async def test_the_key_numbers_are_the_figures_of_the_article_quoted():
    # "What are the key numbers?" reads as a subject of its own ("key numbers"): searched
    # alone, it quoted another article's sentence holding "number".
    first = (
        "The loop runs independent tool calls concurrently with asyncio.gather in every turn.\n\n"
        "Source: [Anatomy of the agent loop](/articles/loop/)"
    )
    result, _ = await _ask(
        ["How does the loop run tools?", "what are the key numbers?"],
        answers=[first],
        misses="numbers",
    )
    assert "120 ms" in result.answer and "eight" not in result.answer  # digits, not words
    assert "three ways" not in result.answer  # a count of things is no figure asked for
    assert [c["url"] for c in result.citations] == ["/articles/loop/"]


@pytest.mark.asyncio
async def test_the_key_numbers_first_thing_on_a_page_are_the_page_s():
    # "give me the key numbers" on the pgvector page was searched blog-wide and declined.
    page = {k: FUSION[k] for k in ("article_id", "title", "url")}

    async def search(params: SearchIn):
        return "No relevant content found."

    async def detail(params: DetailIn):
        return ARTICLES[params.article_id]

    tools = [
        Tool("search_knowledge_base", "Search.", SearchIn, search, lambda out: "results"),
        Tool("get_article_detail", "Read.", DetailIn, detail, lambda out: "1 article"),
    ]
    for question in ("give me the key numbers", "列出关键数字"):
        messages = build_messages(history=[], user_message=question, page=page)
        result = await run_turn(
            messages=messages, model=OfflineModel(), tools=tools, limits=Limits(), emit=_discard
        )
        assert "Document: D — Keyword rank: 2" in result.answer, result.answer
        assert [c["url"] for c in result.citations] == ["/articles/rrf/"]
