"""The query's words marked in a search page's passage (blog.search_marks)."""

from blog.search_marks import PASSAGE_CHARS, marked_passage, query_terms


def marked(passage: str, query: str) -> list[str]:
    return [text for text, matched in marked_passage(passage, query) if matched]


def test_a_querys_words_mark_the_passages_words_they_begin():
    passage = "HNSW indexes trade memory for recall; an index builds slowly."
    assert marked(passage, "hnsw index") == ["HNSW", "indexes", "index"]
    assert "".join(text for text, _ in marked_passage(passage, "hnsw index")) == passage


def test_common_words_and_word_insides_are_not_marked():
    assert marked("What the reindex does for the index.", "what does the index do") == ["index"]


def test_a_chinese_query_marks_its_two_character_runs():
    assert marked("向量检索把文本变成向量。", "向量检索是什么") == ["向量", "检索", "向量"]


def test_a_latin_word_between_han_characters_is_marked_alone():
    assert marked("像“使用pgvector建索引”这样的写法", "pgvector index") == ["pgvector"]


def test_a_passage_is_cut_to_what_a_card_shows():
    segments = marked_passage("word " * 200, "word")
    assert len("".join(text for text, _ in segments)) == PASSAGE_CHARS
    assert segments[-1][0].endswith("…")


def test_a_query_of_regex_characters_is_read_as_text():
    assert query_terms("(a+)+ [x] ***") == []
    assert marked("use (a+)+ carefully: c++ too", "c++ (a+)+") == []  # no word of two letters
