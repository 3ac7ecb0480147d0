"""Whether a title names a subject, across languages (offline_titles)."""

from agent.llm.offline_titles import title_names


def test_a_title_names_a_subject_through_the_glossary():
    assert title_names("步数限制", "Why step limits matter")
    assert title_names("text embeddings", "文本嵌入入门")
    assert not title_names("步数限制", "Rate limits and token budgets for public chatbots")
    assert not title_names("weather", "Why step limits matter")


def test_a_glossary_word_inside_a_wider_one_is_named_with_it():
    # 混合检索 is "hybrid search" and holds 检索, "retrieval": the title needs no "retrieval".
    assert title_names("混合检索", "Hybrid search with reciprocal rank fusion")
    assert not title_names("混合检索", "pgvector and HNSW indexes")
