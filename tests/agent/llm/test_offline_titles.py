"""The hit whose title names what a question asks about (offline_titles)."""

from agent.llm.offline_titles import title_named, title_names

PGVECTOR = {"article_id": 1, "title": "pgvector and HNSW indexes", "relevance": 0.88}
PRIMER_ZH = {"article_id": 2, "title": "文本嵌入入门", "relevance": 0.57}
OBSERVABILITY_ZH = {"article_id": 3, "title": "智能体的可观测性与审计", "relevance": 0.83}
LOOP = {"article_id": 4, "title": "Anatomy of the agent loop", "relevance": 0.57}
TOOLS = {"article_id": 5, "title": "What a tool-driven agent is", "relevance": 0.6}
LIMITS = {"article_id": 6, "title": "Why step limits matter", "relevance": 0.9}


def test_an_english_question_finds_the_chinese_article_its_title_translates():
    # "embeddings" is 嵌入 in the glossary; the pgvector article held the question's words.
    assert title_named("How do text embeddings work?", [PGVECTOR, PRIMER_ZH]) is PRIMER_ZH


def test_a_chinese_question_finds_the_english_article_its_title_translates():
    # 智能体循环 is "agent loop": the observability article's title holds 智能体 alone.
    hits = [OBSERVABILITY_ZH, LOOP]

    assert title_named("智能体循环的每一步做什么？", hits) is LOOP


def test_a_title_naming_only_some_of_the_question_s_terms_moves_nothing():
    # "tool" is in the tool-driven article's title; "cap", "call" and "turn" are in none.
    assert title_named("What is the cap on tool calls per turn?", [LIMITS, TOOLS]) is None


def test_a_top_hit_whose_title_names_as_much_of_the_question_stays():
    # "pgvector" has no glossary line, but the top hit's title names it as the primer's
    # names "embeddings".
    hits = [PGVECTOR, PRIMER_ZH]

    assert title_named("How does pgvector store embeddings?", hits) is None


def test_a_top_hit_already_named_by_the_question_stays():
    assert title_named("什么是步数限制？", [LIMITS, LOOP]) is None


def test_a_question_with_no_glossary_term_moves_nothing():
    assert title_named("Who won the 1998 World Cup?", [PGVECTOR, PRIMER_ZH]) is None


def test_a_title_names_a_subject_through_the_glossary():
    assert title_names("步数限制", "Why step limits matter")
    assert title_names("text embeddings", "文本嵌入入门")
    assert not title_names("步数限制", "Rate limits and token budgets for public chatbots")
    assert not title_names("weather", "Why step limits matter")
