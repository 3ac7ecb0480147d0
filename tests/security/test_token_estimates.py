"""A turn's holds count text as a model's tokenizer may split it, not as prose splits.

Before each model call a turn must hold what the prompt will cost, and while an answer streams
its words are counted against the hold; both counted a token per three ASCII characters and
one per other character. A byte-level tokenizer (OpenAI's, and most) writes a character it has
no token for as its bytes: a hieroglyph or a mathematical letter (past U+FFFF) is up to four
tokens, and text of punctuation and one-letter words ("a.a.a.", "1 2 3") one per character or
two. A visitor chooses the question's text, and what the model is asked to write.
"""

import pytest

from agent.tokens import ASTRAL_TOKENS, PRIVATE_USE_TOKENS
from testing_support.model_server import text_response
from tests.security.conftest import BUDGET_LEFT, ask_near_the_budget

pytestmark = pytest.mark.django_db(transaction=True)

HIEROGLYPH = "\U00013000"  # EGYPTIAN HIEROGLYPH A001: four bytes of UTF-8, in no vocabulary
PRIVATE_USE = "\ue000"  # a private-use character: three bytes of UTF-8, in no vocabulary
SYSTEM_AND_TOOLS = 1000  # about what the prompt costs around the visitor's question


@pytest.mark.parametrize(
    ("name", "character", "tokens_each"),
    [
        ("astral", HIEROGLYPH, ASTRAL_TOKENS),
        # In the Basic Multilingual Plane, yet no tokenizer has a token for it (nor for a
        # noncharacter): counted one each, 1,400 were sent and billed 5,200 on 3,000 left.
        ("private-use", PRIVATE_USE, PRIVATE_USE_TOKENS),
        # A tokenizer splits letters from digits before it merges anything ("a", "1", "a", ...):
        # a token per character, counted one per three. 1,400 "a1" were billed 3,800.
        ("letters-and-digits", "a1", 1),
    ],
)
async def test_a_question_a_tokenizer_writes_as_bytes_is_held_at_that_cost(
    serve, scripted, name, character, tokens_each
):
    written = character * 1400
    question = "What is this? " + written  # a question of private-use characters alone is empty
    # The endpoint bills the prompt as a byte-level tokenizer reads it (per character).
    billed = SYSTEM_AND_TOOLS + tokens_each * len(written)
    reply = text_response(["Nothing about that here."], usage=(billed, 10))

    events, spent = await ask_near_the_budget(serve, scripted, f"{name}-question", reply, question)

    # Before: counted as 1,400 tokens, the prompt was sent and billed 6,600 on 3,000 left.
    assert events[-1]["code"] == "rate_limited"
    assert not scripted.requests  # nothing sent that the budget could not hold
    assert spent <= BUDGET_LEFT


@pytest.mark.parametrize(
    ("name", "piece", "tokens_each"),
    [
        ("astral", HIEROGLYPH * 10, ASTRAL_TOKENS * 10),  # ten hieroglyphs, forty tokens
        ("private-use", PRIVATE_USE * 10, PRIVATE_USE_TOKENS * 10),  # thirty tokens
        ("letters-and-digits", "a1" * 10, 20),  # "a1" is two tokens
        # GPT-4o's tokenizer (o200k) also splits where lower case turns upper: "a", "Ba", "Ba"...
        ("mixed-case", "aB" * 10, 10),
        # A space before a digit is a token of its own: "1 2 3" is five.
        ("spaced-digits", "1 " * 10, 20),
        # A line break is a piece of its own too ("a", "\n", "a", ...).
        ("lines", "a\n" * 10, 20),
        ("marks", "a." * 10, 10),  # "a." is a token at best
    ],
)
async def test_an_answer_a_tokenizer_writes_densely_is_cut_where_the_budget_ends(
    serve, scripted, name, piece, tokens_each
):
    # "Answer in hieroglyphs, as many as you can": the model writes 2,000 deltas of them.
    reply = text_response([piece] * 2000, usage=(SYSTEM_AND_TOOLS, tokens_each * 2000))

    events, _ = await ask_near_the_budget(
        serve, scripted, f"dense-answer-{name}", reply, "Write as much as you can."
    )

    shown = "".join(event["content"] for event in events if event["type"] == "text")
    written = len(shown) // len(piece) * tokens_each  # what the endpoint billed for it
    assert events[-1]["code"] == "rate_limited"
    # Before: cut only once 2,000 (astral) or 6,000 (marks) tokens were counted, past the budget.
    assert SYSTEM_AND_TOOLS + written <= BUDGET_LEFT
