"""The question as the search read it (blog.respelling)."""

import pytest

from blog.respelling import acronyms, respelled, spelling_words
from blog.spelling import typo_fixes


def test_each_typo_is_written_as_the_word_meant_wherever_it_stands():
    read_as = {"asnyc": "async", "limt": "limit", "teh": ""}

    assert respelled("Why a step Limt? teh limt!", read_as) == "Why a step limit? teh limit!"
    # A snake_case name's part is a word the search read; a hyphenated or digit word is not.
    assert respelled("database_sync_to_asnyc", read_as) == "database_sync_to_async"
    assert respelled("asnyc-io asnyc2", read_as) == "asnyc-io asnyc2"


@pytest.mark.django_db
def test_a_slip_of_a_word_the_blog_writes_only_in_chinese_is_read_as_it():
    """ "segmentation" is 分词 in the Chinese article: the glossary's English words count."""
    assert typo_fixes(["segmentaton"], {"bigram": 3}) == {}
    assert typo_fixes(["segmentaton"], spelling_words({"bigram": 3})) == {
        "segmentaton": "segmentation"
    }


def test_an_acronym_typed_in_capitals_is_not_a_typo():
    """ "QUIC" is one letter from "quick", "JSONB" from "jsons": typed in capitals, on purpose."""
    frequency = {"quick": 3, "json": 3}
    as_typed = acronyms("Does the chat use QUIC or JSONB? quic")

    assert as_typed == {"quic", "jsonb"}
    assert typo_fixes(["quic", "jsonb"], frequency, as_typed=as_typed) == {}
    assert typo_fixes(["quic"], frequency) == {"quic": "quick"}
