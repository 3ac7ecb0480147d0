"""A Chinese question's similarity to English chunks, with its glossary terms in English.

e5-small scores a Chinese question against the English passage that answers it at 0.80-0.84,
where a question and its passage in one language score 0.85-0.90: the bar then declines
it (docs/answer-quality.md, "Sixty-second pass"). Written with the glossary's English for the
terms it holds ("一次 runaway 的 agent loop 会让 token spend grow 多快？"), the question
comes nearer its English article (median +0.020 on the tuning halves' declined ones) than an
out-of-scope Chinese question comes to its nearest English article (+0.007): the terms that
make it out of scope (微信, 分区表, Celery) are not the glossary's and stay as they were.
"""

from __future__ import annotations

import logging

from django.conf import settings
from pgvector.django import CosineDistance

from blog.embeddings import Embedder, EmbeddingError
from blog.glossary_file import translated
from blog.models import Chunk

logger = logging.getLogger(__name__)


def translated_similarities(
    query: str, rows: list[dict], *, language: str, languages: tuple, embedder: Embedder
) -> dict[int, float]:
    """Chunk id -> the translated question's cosine similarity, for the rows in English.

    Empty for an English question, a blog in one language, the glossary switched off, or a
    question the glossary holds no term of.
    """
    if language != "zh" or len(languages) < 2 or not settings.SEARCH_GLOSSARY:
        return {}
    ids = {row["id"] for row in rows if row["language"] and row["language"] != language}
    written = translated(query)
    if not ids or written == query:
        return {}
    try:
        vector = embedder.embed_query(written)
    except EmbeddingError:
        # The question itself was embedded; the evidence is then the question's alone.
        logger.warning("the translated question could not be embedded", exc_info=True)
        return {}
    distances = Chunk.objects.filter(id__in=ids).annotate(
        distance=CosineDistance("embedding", vector)
    )
    return {
        chunk_id: 1.0 - distance for chunk_id, distance in distances.values_list("id", "distance")
    }
