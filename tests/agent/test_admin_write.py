"""The "Write an article about this" link: the question as the article form's title."""

from urllib.parse import parse_qs, urlsplit

from agent.templatetags.admin_write import write_about_url


def title_of(question: str) -> str:
    return parse_qs(urlsplit(write_about_url(question)).query)["title"][0]


def test_lines_and_tabs_still_part_words_once_hidden_characters_are_dropped():
    assert title_of("Why\ndoes\tit\r\nfail \u2066 here\u2069?") == "Why does it fail here?"


def test_chinese_and_emoji_stay():
    assert title_of("怎么用 pgvector？🚀") == "怎么用 pgvector？🚀"


def test_blank_letters_and_ignorable_marks_go_while_korean_and_accents_stay():
    # A Hangul filler, a variation selector and the combining grapheme joiner show nothing;
    # Hangul syllables and a combining accent on a letter are text.
    question = "pg\u3164vector \ufe0f한국어\u034f café cafe\u0301"
    assert title_of(question) == "pgvector 한국어 café cafe\u0301"
