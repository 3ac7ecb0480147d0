"""The costliest request an anonymous visitor could make: a long search in Chinese.

The local embedding model read every token of a query, and its cost grows faster than the
tokens: 500 Chinese characters (about 500 tokens, the API's cap) took 2.5 s of CPU per
/api/search, and a chat question of 3,990 did the same in its search; the same length in
English (about 100 tokens) took 0.4 s. Now only the first EMBEDDING_QUERY_MAX_TOKENS (128) are
embedded: 0.5 s for either (measured with /proc on this machine; the evals' longest question
is 52 tokens, so answers are unchanged). The test shows the cut without timing it: two long
queries that differ only after their first 200 characters are the same query to the model.
"""

import httpx
import pytest
from channels.db import database_sync_to_async

from tests.security.clients import published_indexed

pytestmark = pytest.mark.django_db(transaction=True)

HEAD = "智能体的循环为什么要限制步数，每一步调用一次模型，工具的结果再交给模型。" * 6  # 222 chars
TAILS = ["向量检索与全文检索的融合排序" * 20, "会话的令牌预算与速率限制" * 20]


@database_sync_to_async
def publish_indexed() -> None:
    for slug, body in [
        ("agent-steps", "## 步数\n\n智能体的循环每一步调用一次模型，步数上限防止无限循环。\n"),
        ("hybrid-search", "## 检索\n\n向量检索与全文检索用 RRF 融合排序，结果更稳。\n"),
    ]:
        published_indexed(title=slug, slug=slug, summary=slug, body=body)


async def test_a_long_query_is_embedded_only_as_far_as_its_first_tokens(serve):
    await publish_indexed()
    server = serve("query-cost")

    similarity = []
    async with httpx.AsyncClient(base_url=server.url, timeout=60) as client:
        for tail in TAILS:
            query = (HEAD + tail)[:500]
            response = await client.get("/api/search", params={"q": query, "all": "true"})
            assert response.status_code == 200, response.text
            similarity.append({h["article_id"]: h["similarity"] for h in response.json()})

    assert len(similarity[0]) == 2 and similarity[0].keys() == similarity[1].keys()
    assert similarity[0] == similarity[1]  # the tails, past 128 tokens, were not read
