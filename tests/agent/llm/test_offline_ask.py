"""Long chatty questions: the sentences that ask are answered; the scene is no topic."""

import pytest

from agent.answered import is_decline
from agent.llm.offline import OfflineModel
from agent.llm.offline_ask import the_ask
from agent.loop import Limits, run_turn
from agent.prompts import build_messages
from agent.tool import Tool
from tests.agent.llm.tool_inputs import DetailIn, SearchIn

STEPS = {
    "article_id": 1,
    "title": "Why step limits matter",
    "url": "/articles/steps/",
    "summary": "An agent that can call tools can also call them forever.",
    "body": """An agent that can call tools can also call them forever.

## Choose a hard cap

A hard cap on model calls per turn stops a runaway loop before it costs anything.
Five model calls per turn is enough for almost every question a reader asks.
""",
}
VECTORS = {
    "article_id": 2,
    "title": "pgvector and HNSW indexes",
    "url": "/articles/pgvector/",
    "summary": "Storing embeddings in PostgreSQL with pgvector and tuning HNSW.",
    "body": """Use pgvector to keep embeddings next to the rows they describe, in PostgreSQL.

## How HNSW works

With a filter on the language column, the HNSW index returns its results first and the
filter is applied afterwards, so the index may give fewer results than asked for.
HNSW results are not exact, because the search visits a small part of the graph.
""",
}
ARTICLES = {a["article_id"]: a for a in (STEPS, VECTORS)}


@pytest.mark.parametrize(
    ("message", "ask"),
    [
        # The ask has words of its own: the scene before it is left out.
        (
            "I'm building a site with Django. What's a sensible cap on model calls per turn?",
            "What's a sensible cap on model calls per turn?",
        ),
        # "that" points back: the ask is read with the sentence it points to.
        (
            "I'm building a Django site. I keep reading that the bot can loop forever calling "
            "tools. How do I stop that from happening?",
            "I keep reading that the bot can loop forever calling tools. How do I stop that "
            "from happening?",
        ),
        # Too few words of its own ("What should we have done?"): read with the whole scene.
        (
            "We run a public demo. Our chatbot burned through our bill. What should we have done?",
            "We run a public demo. Our chatbot burned through our bill. What should we have done?",
        ),
        # What follows the ask adds to it: the reader asks, then says why.
        (
            "We use Django. Should my streaming task catch CancelledError? I want the text kept.",
            "Should my streaming task catch CancelledError? I want the text kept.",
        ),
        # A request without a question mark asks too.
        (
            "I write Go for a living. Tell me how a tool-driven agent differs from a chat model.",
            "Tell me how a tool-driven agent differs from a chat model.",
        ),
        (
            "我在公司用 pgvector 做向量检索。顺便问一下，北京哪里的烤鸭好吃？",
            "顺便问一下，北京哪里的烤鸭好吃？",
        ),
        (
            "我做了个智能体，模型老是调用同一个工具。这种情况怎么防止？",
            "我做了个智能体，模型老是调用同一个工具。 这种情况怎么防止？",
        ),
        (
            "我们组在做语义搜索。我想知道查询前缀有什么用。",
            "我想知道查询前缀有什么用。",
        ),
    ],
)
def test_a_long_message_is_answered_by_the_sentences_that_ask(message, ask):
    assert the_ask(message).question == ask


@pytest.mark.parametrize(
    "message",
    [
        "How do I cap the steps?",  # one sentence
        "What is RRF? And how is k chosen?",  # every sentence asks
        "I use pgvector at work and I love it.",  # nothing asks: left to the usual answer
        "How does asyncio.gather order its results?",  # a dotted name is no sentence end
    ],
)
def test_a_message_that_is_all_ask_or_no_ask_is_left_whole(message):
    assert the_ask(message).question == message
    assert the_ask(message).scene == ""


def test_the_scene_gives_the_names_the_ask_does_not_use():
    ask = the_ask("We run Django and MySQL. How does MySQL store vectors?")
    assert "Django" in ask.scene.split()
    assert "MySQL" not in ask.scene.split()  # the ask names it: it must still be found


def test_only_a_scene_about_the_reader_gives_its_names():
    # A pasted error speaks of no one: its names stay the question's.
    error = "redis.exceptions.ConnectionError: Error 111. What does the rate limiter do then?"
    assert "redis.exceptions.ConnectionError" not in the_ask(error).scene.split()
    assert "Redis" in the_ask("Our app uses Redis. What does the rate limiter do?").scene.split()


def test_an_ask_with_no_words_of_its_own_reads_the_sentence_before_it():
    # "why??" asks about the sentence before it: its words are the question's, not a scene
    # whose names are excused (which answered this with an article on another subject).
    ask = the_ask("I filter my vector query by language and get 3 rows back. why??")
    assert ask.question.startswith("I filter my vector query") and ask.scene == ""


def test_a_pasted_passage_an_ask_points_back_to_is_read_whole():
    # "this" is the whole error, not its last line ("Connection refused."): searched alone,
    # that line found an article on streaming for a question no article answers.
    message = (
        "redis.exceptions.ConnectionError: Error 111 connecting to redis:6379. Connection "
        "refused. -- when this happens does the rate limiter let requests through?"
    )
    assert the_ask(message).question == message
    # A sentence about the reader ends the passage: their project stays a scene.
    told = the_ask("We use Django. The bot loops forever. How do I stop that?")
    assert told.question == "The bot loops forever. How do I stop that?"
    assert "Django" in told.scene.split()


def test_a_scene_lends_each_name_once_and_a_few_dozen_at_most():
    # Each name costs a pattern: 4,000 characters of distinct words in a scene took 70 ms a
    # planner step, every step of the turn.
    scene = " ".join(f"{n}-x" for n in range(700))
    ask = the_ask(f"my {scene}. how do i fix the pgvector index? we use Django. Django!")
    assert len(ask.scene.split()) <= 40
    told = the_ask("I'm on Django, Django and Django. What does the rate limiter do?")
    assert told.scene.split().count("Django") == 1 and "m" not in told.scene.split()


def test_the_scene_gives_no_words_when_the_message_opens_with_its_ask():
    assert the_ask("How do I cap steps in Django? We use Django 5.").scene == ""


def _hit(article: dict, relevance: float) -> dict:
    fields = {k: article[k] for k in ("article_id", "title", "url")}
    return {**fields, "rank": 1, "excerpt": article["body"][:600], "relevance": relevance}


async def _ask(question: str, hits: list[dict], found: dict[str, list[dict]] | None = None):
    """The turn with a search that finds `found[query]` when given, else `hits`."""

    async def search(params: SearchIn):
        listed = (found or {}).get(params.query, hits if found is None else [])
        return listed or "No relevant content found."

    async def detail(params: DetailIn):
        return ARTICLES[params.article_id]

    tools = [
        Tool("search_knowledge_base", "Search.", SearchIn, search, lambda out: "results"),
        Tool("get_article_detail", "Read.", DetailIn, detail, lambda out: "1 article"),
    ]
    messages = build_messages(history=[], user_message=question, page=None, language="")

    async def emit(event: dict) -> None:
        return None

    return await run_turn(
        messages=messages, model=OfflineModel(), tools=tools, limits=Limits(), emit=emit
    )


@pytest.mark.asyncio
async def test_a_name_in_the_scene_does_not_decline_the_question():
    # The reader's own project ("a Django site") is no topic: it declined with "The articles
    # I found don't mention Django" although the step-limits article answers the ask.
    result = await _ask(
        "Hi! I'm building a small Django site and I want to add a chatbot. I keep reading that "
        "the bot can loop forever calling tools. How do I stop that from happening?",
        [_hit(STEPS, 0.8)],
    )
    assert not is_decline(result.answer)
    assert "Django" not in result.answer
    assert [c["url"] for c in result.citations] == ["/articles/steps/"]


@pytest.mark.asyncio
async def test_a_name_in_the_ask_still_declines_it():
    result = await _ask(
        "We moved our bot to a new host last week. How do I cap model calls in LangGraph?",
        [_hit(STEPS, 0.8)],
    )
    assert is_decline(result.answer)
    assert "LangGraph" in result.answer
    assert result.citations == []


@pytest.mark.asyncio
async def test_an_off_topic_ask_is_not_answered_from_its_scene():
    # The scene names the blog's topics, so the whole message finds the pgvector article; the
    # ask ("a good laptop") is not what it says.
    result = await _ask(
        "I use pgvector and HNSW indexes in PostgreSQL at work every day. Anyway, totally "
        "unrelated: what's a good laptop for programming?",
        [_hit(VECTORS, 0.7)],
    )
    assert is_decline(result.answer)
    assert result.citations == []


ASK = "What's a sensible cap on model calls per turn?"
SCENE = "I run a tiny support bot written in FastAPI. Yesterday it called one tool twenty times."


@pytest.mark.asyncio
async def test_the_ask_is_searched_alone_after_the_whole_message():
    result = await _ask(f"{SCENE} {ASK}", [_hit(STEPS, 0.8)])
    queries = [c.arguments["query"] for c in result.tool_calls if c.name.startswith("search")]
    assert queries == [f"{SCENE} {ASK}", ASK]


@pytest.mark.asyncio
async def test_the_asks_search_answers_when_the_whole_message_finds_nothing():
    # The scene's words outweighed the ask's: the whole message missed the bar.
    result = await _ask(f"{SCENE} {ASK}", [], found={ASK: [_hit(STEPS, 0.8)]})
    assert not is_decline(result.answer)
    assert [c["url"] for c in result.citations] == ["/articles/steps/"]


@pytest.mark.asyncio
async def test_the_whole_messages_search_answers_when_it_finds_something():
    # A scene that names the topic ("behind nginx…") is why the whole message comes first.
    found = {f"{SCENE} {ASK}": [_hit(STEPS, 0.8)], ASK: [_hit(VECTORS, 0.9)]}
    result = await _ask(f"{SCENE} {ASK}", [], found=found)
    assert [c["url"] for c in result.citations] == ["/articles/steps/"]


@pytest.mark.asyncio
async def test_a_message_without_a_scene_is_searched_once():
    result = await _ask(ASK, [_hit(STEPS, 0.8)])
    queries = [c.arguments["query"] for c in result.tool_calls if c.name.startswith("search")]
    assert queries == [ASK]
