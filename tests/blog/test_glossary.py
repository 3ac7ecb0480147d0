"""The Chinese-English glossary that lets `known` see across the blog's two languages."""

from blog.glossary import Glossary, glossary, parse

# Lines in CC-CEDICT's format, written for these tests.
LINES = [
    "# a comment line",
    "平均 平均 [ping2 jun1] /average/(math.) mean value/",
    "看板 看板 [kan4 ban3] /billboard/",
    "窗口 窗口 [chuang1 kou3] /window/",
    "窗口期 窗口期 [chuang1 kou3 qi1] /window period/",
    "什么 什么 [shen2 me5] /what?/",
    "窗 窗 [chuang1] /window/",
    "伍 伍 [Wu3] /surname Wu/",
    "某词 某词 [mou3 ci2] /surname Mou/a very long description of something obscure indeed/",
]


def test_a_line_gives_the_english_words_of_its_first_senses_without_remarks():
    entries = parse(LINES)

    assert set(entries["平均"].split()) == {"average", "mean", "value"}
    assert "窗" not in entries  # one character: grammar or too many senses
    assert "某词" not in entries  # a surname and a description say nothing usable


def test_a_text_is_read_longest_word_first_and_question_words_are_left_out():
    book = Glossary(parse(LINES))

    assert book.words("窗口期有多长？看板上看什么") == ["窗口期", "看板"]
    assert book.english("平均窗口") == {"average", "mean", "value", "window"}


def test_the_shipped_dictionary_knows_the_blogs_chinese_words():
    book = glossary()

    assert "average" in book.senses("平均") and "window" in book.senses("窗口")


def test_the_words_of_an_indexed_text_are_found_from_its_bigrams():
    book = Glossary(parse(LINES))

    assert sorted(book.words_made_of({"窗口", "口期", "平均"})) == ["平均", "窗口", "窗口期"]
    assert sorted(book.words_made_of({"窗口", "平均"})) == ["平均", "窗口"]  # no "口期"
