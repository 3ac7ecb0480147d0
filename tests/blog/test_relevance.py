import math

import pytest
from django.db import connection

from blog.commonness import lexeme_words, unknown_weight
from blog.relevance import (
    FUNCTION_LEXEMES,
    FUNCTION_WORDS,
    Evidence,
    Vocabulary,
    coverage,
    relevance,
    weighted_terms,
)
from blog.search import article_search, article_search_vector
from tests.blog.test_search import VectorBook, titles, unit

pytestmark = pytest.mark.django_db


def _vocab(frequency: dict[str, int], chunks: int = 100) -> Vocabulary:
    vocab = Vocabulary()
    vocab.frequency, vocab.chunks = frequency, chunks
    return vocab


def test_relevance_rises_with_each_piece_of_evidence_in_a_fixed_order():
    base = Evidence(similarity=0.84, coverage=0.2, known=0.6)
    ladder = [
        base,
        Evidence(similarity=0.84, coverage=0.2, known=1.0),
        Evidence(similarity=0.84, coverage=0.2, known=0.6, cross=True),
        Evidence(similarity=0.84, coverage=1.0, known=0.6),
        Evidence(similarity=0.90, coverage=0.2, known=1.0),
    ]

    values = [relevance(evidence) for evidence in ladder]

    assert values == sorted(values) and len(set(values)) == len(values)
    assert all(0.0 <= value <= 1.0 for value in values)


def test_a_close_vector_with_words_the_blog_never_uses_stays_below_the_bar(settings):
    bar = settings.SEARCH_MIN_RELEVANCE
    in_scope = Evidence(similarity=0.86, coverage=0.7, known=1.0)
    unknown_words = Evidence(similarity=0.86, coverage=0.0, known=0.3)
    cross_language = Evidence(similarity=0.86, coverage=0.0, known=1.0, cross=True)

    assert relevance(in_scope) > bar > relevance(unknown_words)
    assert relevance(cross_language) > bar


def test_known_counts_an_unknown_latin_term_fully_and_an_unknown_chinese_bigram_a_little():
    vocab = _vocab({"pgvector": 10, "index": 30, "窗口": 2, "限流": 1})

    _, known_latin = weighted_terms(["pgvector", "kubernetes"], vocab)
    _, known_cjk = weighted_terms(["窗口", "语音"], vocab)
    _, all_known = weighted_terms(["pgvector", "index"], vocab)

    assert all_known == 1.0
    assert known_latin < 0.6 < known_cjk < 1.0


def test_a_chinese_bigram_across_a_word_boundary_is_not_an_unknown_word():
    vocab = _vocab({"窗口": 2, "限流": 1})

    weights, known = weighted_terms(["窗口", "口限", "限流"], vocab)

    assert "口限" not in weights and known == 1.0


def test_a_function_word_the_blog_never_uses_is_not_an_unknown_word():
    vocab = _vocab({"pgvector": 10, "index": 30})

    weights, known = weighted_terms(["someon", "pgvector", "index"], vocab)
    _, off_topic = weighted_terms(["kubernet", "pgvector", "index"], vocab)

    assert "someon" not in weights and known == 1.0
    assert off_topic < 0.6


def test_an_unknown_everyday_word_counts_less_against_the_question_than_an_unknown_rare_one():
    vocab = _vocab({"session": 10, "token": 20, "budget": 5})
    lexemes = ["session", "token", "budget"]

    _, everyday = weighted_terms([*lexemes, "spend"], vocab, spelled={"spend": ["spend"]})
    _, rare = weighted_terms([*lexemes, "kubernet"], vocab, spelled={"kubernet": ["kubernetes"]})
    _, untraced = weighted_terms([*lexemes, "spend"], vocab)

    assert rare == untraced < 0.8 < everyday < 1.0


def test_everyday_frequency_decides_how_much_an_unknown_word_counts():
    assert unknown_weight(["kubernetes"]) == 1.0 and unknown_weight(["tiktoken"]) == 1.0
    assert unknown_weight(["day"]) == 0.0 and unknown_weight(["the"]) == 0.0
    assert 0.0 < unknown_weight(["visitor"]) < 1.0
    assert unknown_weight([]) == 1.0  # a lexeme not traced to a word counts fully


def test_each_lexeme_is_traced_to_the_words_it_stems_from():
    words = ["which", "eviction", "policies", "suit", "redis"]
    lexemes = ["evict", "polici", "suit", "redi"]

    assert lexeme_words(lexemes, words) == {
        "evict": ["eviction"],
        "polici": ["policies"],
        "suit": ["suit"],
        "redi": ["redis"],
    }


def test_function_words_are_spelled_as_the_index_stems_them():
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT array(SELECT lexeme FROM unnest(to_tsvector('english', %s)))",
            [" ".join(FUNCTION_WORDS)],
        )
        stemmed = set(cursor.fetchone()[0])

    assert stemmed == FUNCTION_LEXEMES


def test_coverage_weights_rare_terms_more_than_common_ones():
    vocab = _vocab({"rare": 1, "common": 90})
    weights, _ = weighted_terms(["rare", "common"], vocab)

    assert coverage(weights, {"rare"}) > 0.5 > coverage(weights, {"common"}) > 0
    assert coverage(weights, set()) == 0.0 and coverage(weights, {"rare", "common"}) == 1.0


def test_hits_below_the_bar_are_dropped_unless_everything_is_asked_for(make_article, add_chunk):
    add_chunk(make_article(title="Good"), "Tuning the pgvector index for recall.", unit((0, 1.0)))
    add_chunk(make_article(title="Off"), "Baking bread at home.", unit((1, 1.0)))
    book = VectorBook({"pgvector index recall": unit((0, 1.0))})

    kept = article_search(query="pgvector index recall", limit=5, embedder=book)
    everything = article_search(
        query="pgvector index recall", limit=5, embedder=book, min_relevance=0
    )

    assert titles(kept) == ["Good"]
    assert titles(everything) == ["Good", "Off"]
    good, off = everything
    assert good.similarity == pytest.approx(1.0) and good.coverage == pytest.approx(1.0)
    assert off.similarity == pytest.approx(0.0) and good.relevance > 0.5 > off.relevance


def test_a_question_whose_key_terms_the_blog_never_uses_finds_nothing(make_article, add_chunk):
    add_chunk(make_article(title="Good"), "Tuning the pgvector index for recall.", unit((0, 1.0)))
    # The same vector as the article: only the vocabulary can tell the two questions apart.
    # (Rare words: an everyday one the blog never uses, like "charts", counts less.)
    book = VectorBook(
        {"kubernetes kustomize kubectl": unit((0, 1.0)), "pgvector recall": unit((0, 1.0))}
    )

    assert article_search(query="kubernetes kustomize kubectl", limit=5, embedder=book) == []
    (hit,) = article_search(
        query="kubernetes kustomize kubectl", limit=5, embedder=book, min_relevance=0
    )
    assert hit.known == 0.0 and hit.coverage == 0.0 and hit.similarity == pytest.approx(1.0)
    assert titles(article_search(query="pgvector recall", limit=5, embedder=book)) == ["Good"]


def test_a_close_question_with_a_function_word_the_blog_never_uses_clears_the_bar(
    make_article, add_chunk
):
    add_chunk(make_article(title="Good"), "Tuning the pgvector index for recall.", unit((0, 1.0)))
    near = unit((0, 0.9), (1, math.sqrt(1 - 0.81)))  # cosine 0.9 to the article
    book = VectorBook(
        {"can someone tune pgvector recall": near, "kubernetes pgvector recall": near}
    )

    assert titles(article_search(query="can someone tune pgvector recall", embedder=book)) == [
        "Good"
    ]
    assert article_search(query="kubernetes pgvector recall", embedder=book) == []


def _bilingual(make_article, add_chunk):
    """Three English articles matching an English question in words and vectors, and one
    Chinese article whose vector is the best Chinese one but behind all three English."""
    for n, title in enumerate(["Alpha", "Beta", "Gamma"]):
        article = make_article(title=title, slug=title.lower())
        chunk = add_chunk(
            article, "Pgvector recall and the HNSW index.", unit((0, 1.0), (n + 1, 0.2 * (n + 1)))
        )
        chunk.language = "en"
        chunk.save()
    article = make_article(title="向量索引", slug="vector-index-zh")
    chunk = add_chunk(article, "向量索引的召回率。", unit((0, 1.0), (9, 0.9)))
    chunk.language = "zh"
    chunk.save()
    return VectorBook({"pgvector recall": unit((0, 1.0))})


def test_each_article_language_gets_its_own_vector_list(make_article, add_chunk, settings):
    book = _bilingual(make_article, add_chunk)
    ask = {"query": "pgvector recall", "limit": 4, "embedder": book, "min_relevance": 0}

    settings.SEARCH_VECTOR_PER_LANGUAGE = False
    single = article_search_vector(**ask)
    settings.SEARCH_VECTOR_PER_LANGUAGE = True
    per_language = article_search_vector(**ask)

    assert [hit.score for hit in single] == sorted((hit.score for hit in single), reverse=True)
    zh_single = next(hit for hit in single if hit.language == "zh")
    zh_split = next(hit for hit in per_language if hit.language == "zh")
    # One list: the Chinese article is 4th of 4; its own list: it is that list's first.
    assert zh_single.score == pytest.approx(1 / 64, abs=1e-6)
    assert zh_split.score == pytest.approx(1 / 61, abs=1e-6)


def test_full_text_that_cannot_see_an_article_does_not_sink_it(make_article, add_chunk, settings):
    book = _bilingual(make_article, add_chunk)
    ask = {"query": "pgvector recall", "limit": 4, "embedder": book, "min_relevance": 0}

    settings.SEARCH_FUSION_ALPHA = 0.0  # plain RRF sums: two lists beat one
    plain = {hit.title: hit.score for hit in article_search(**ask)}
    settings.SEARCH_FUSION_ALPHA = 1.0  # divided by the lists that could have found it
    fair = {hit.title: hit.score for hit in article_search(**ask)}

    assert plain["向量索引"] < plain["Gamma"]
    assert fair["向量索引"] == pytest.approx(1 / 61, abs=1e-6)  # English words cannot match it
    assert fair["向量索引"] > fair["Beta"]


def test_an_english_question_that_singles_out_a_chinese_article_counts_its_words_as_known(
    settings,
):
    bar = settings.SEARCH_MIN_RELEVANCE
    # The English words of a question about a Chinese article are unknown to the blog, which
    # writes them in Chinese ("dashboard" is "仪表盘" there).
    ask = {"similarity": 0.85, "coverage": 0.1, "known": 0.45, "cross": True}

    singled_out = Evidence(**ask, margin=0.03, question_language="en")
    one_of_many = Evidence(**ask, margin=0.005, question_language="en")
    weak = Evidence(**{**ask, "similarity": 0.80}, margin=0.03, question_language="en")
    chinese_question = Evidence(**ask, margin=0.03, question_language="zh")

    assert relevance(singled_out) > bar
    assert max(map(relevance, [one_of_many, weak, chinese_question])) < bar


def test_search_passes_the_chinese_article_an_english_question_singles_out(make_article, add_chunk):
    near, far = unit((0, 0.86), (1, math.sqrt(1 - 0.86**2))), unit((0, 0.80), (2, 0.6))
    close_second = unit((0, 0.855), (3, math.sqrt(1 - 0.855**2)))
    for slug, title, vector in [("dashboards", "延迟看板", near), ("vectors", "向量索引", far)]:
        chunk = add_chunk(make_article(title=title, slug=slug), "。", vector)
        chunk.language = "zh"
        chunk.save()
    book = VectorBook({"why chart latency dashboards": unit((0, 1.0))})

    hits = article_search(query="why chart latency dashboards", embedder=book)

    assert titles(hits) == ["延迟看板"] and hits[0].margin == pytest.approx(0.06, abs=1e-3)
    chunk = add_chunk(make_article(title="看板设计", slug="zh-close"), "。", close_second)
    chunk.language = "zh"
    chunk.save()
    assert article_search(query="why chart latency dashboards", embedder=book) == []


def test_a_question_with_no_word_the_index_can_read_finds_nothing(make_article, add_chunk):
    add_chunk(make_article(title="Good"), "Tuning the pgvector index for recall.", unit((0, 1.0)))
    book = VectorBook({"😀": unit((0, 1.0)), "\u202e" * 10: unit((0, 1.0))})

    assert article_search(query="😀", embedder=book) == []
    assert article_search(query="\u202e" * 10, embedder=book) == []
    (hit,) = article_search(query="😀", embedder=book, min_relevance=0)
    assert hit.known == 0.0 and hit.similarity == pytest.approx(1.0)


def test_a_number_alone_names_nothing_the_blog_knows():
    """ "谢谢 9" searched as "9" matched every chunk holding a 9, and quoted one at 0.96."""
    vocab = _vocab({"9": 3, "60": 2, "rrf": 4})

    _, number = weighted_terms(["9"], vocab)
    _, numbers = weighted_terms(["9", "60"], vocab)
    _, with_a_word = weighted_terms(["rrf", "60"], vocab)

    assert number == numbers == 0.0
    assert with_a_word == 1.0


def test_a_file_name_the_blog_writes_counts_as_known_in_the_question(make_article, add_chunk):
    # "Apps aren't loaded yet from my asgi.py": its "py" counted as a rare word the blog never
    # uses and the Channels article was declined (known 0.77, relevance 0.36).
    text = "ASGI apps: load the apps first in asgi.py, then the routing."
    add_chunk(make_article(title="Channels", slug="channels"), text, unit((0, 1)))
    book = VectorBook(
        {"load apps in asgi.py": unit((0, 1.0)), "load apps in main.py": unit((0, 1.0))}
    )

    (named,) = article_search(query="load apps in asgi.py", embedder=book, min_relevance=0)
    (other,) = article_search(query="load apps in main.py", embedder=book, min_relevance=0)

    assert named.known == 1.0 and named.coverage == 1.0
    assert other.known < 0.7
