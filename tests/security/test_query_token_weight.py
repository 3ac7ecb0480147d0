"""A search weighs what the local model reads, counted by its own tokenizer.

A search spends one of the address's allowance per 32 tokens of its query, and the tokens were
estimated without the tokenizer: an ASCII word as a token per four letters. Letters no language
spells are a token per one or two to the model's vocabulary: 120 of them ("qxzqxz…") were
estimated at 31 tokens and weighed as a question, where the model read 125, the most a query
is embedded for. Through a live server: 118 ms of CPU per such search against 28 ms for a
question, all sixty a minute of them allowed; now it weighs 4, as 125 tokens of prose do.
"""

import httpx
import pytest

pytestmark = pytest.mark.django_db(transaction=True)

NONSENSE = "qxz" * 40  # 120 letters: 31 tokens by the estimate, 125 to the model
QUESTION = "how does pgvector work?"  # 13 tokens: one search's weight


def searches(server, address: str, query: str, times: int) -> list[int]:
    """`times` searches for `query` from `address` (behind the server's trusted proxy)."""
    with httpx.Client(base_url=server.url, timeout=60) as client:
        return [
            client.get(
                "/api/search", params={"q": query}, headers={"X-Forwarded-For": address}
            ).status_code
            for _ in range(times)
        ]


def test_a_query_of_letters_no_language_spells_weighs_its_tokens(serve):
    server = serve(
        "query-token-weight", DJANGO_TRUSTED_PROXIES="1", SEARCH_REQUESTS_PER_MINUTE_PER_IP="4"
    )

    nonsense = searches(server, "192.0.2.10", NONSENSE, 2)
    questions = searches(server, "192.0.2.11", QUESTION, 5)

    assert nonsense == [200, 429]  # before: [200, 200], each weighed as a question
    assert questions == [200] * 4 + [429]  # a question still weighs one


def test_the_weight_is_the_models_count_and_never_below_the_estimate():
    from agent.ratelimit import embedding_weight, query_tokens_estimate
    from blog.embeddings import engine_text, query_token_count

    assert query_token_count(NONSENSE) == 125
    assert embedding_weight(NONSENSE, 60) == 4
    assert embedding_weight(QUESTION, 60) == 1
    # "㌚" is one character typed and five read: the estimate's NFKC count still stands.
    assert query_tokens_estimate("㌚" * 31) >= len(engine_text("㌚" * 31))
