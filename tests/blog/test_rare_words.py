"""Rare words a question turns on, and whether the blog uses them in any form."""

from blog.rare_words import in_vocabulary, rare_words, unused_words
from blog.spelling import stem

BLOG = "separate reasons replay cancel error segment InMemoryChannelLayer".lower().split()
FREQUENCY = {stem(word): 3 for word in BLOG}
LEXICON = sorted(FREQUENCY)


def used(translated: frozenset[str] = frozenset()):
    return in_vocabulary(FREQUENCY, LEXICON, translated)


def test_everyday_words_in_any_form_identifiers_and_contractions_are_not_rare():
    question = (
        "Wouldn't replaying the segmenter's output be recomputed with ef_search, asyncio.gather "
        "or pg_trgm in HTTP/2? It shouldn't spend money."
    )
    # "replaying" is "replay", "segmenter" "segment", "recomputed" "compute": everyday words.
    # An identifier or a word with a digit is a name (agent.llm.offline_names), not a word.
    assert rare_words(question) == []
    assert rare_words("Can I count tokens with tiktoken or a Lua script?") == ["tiktoken", "Lua"]


def test_a_rare_word_the_blog_never_uses_is_unused():
    assert unused_words("How do I count tokens with tiktoken?", used()) == ["tiktoken"]


def test_a_slip_of_a_blog_word_the_start_of_a_name_and_a_translation_count_as_used():
    # "seperate" is one edit from "separate"; "InMemory" starts "InMemoryChannelLayer"; the
    # glossary translates "spool", which a Chinese article writes as 暂存.
    assert unused_words("Why keep them seperate?", used()) == []
    assert unused_words("Is InMemory fine in production?", used()) == []
    assert unused_words("What is in the spool?", used()) == ["spool"]
    assert unused_words("What is in the spool?", used(frozenset({stem("spool")}))) == []


def test_a_hyphenated_word_is_used_when_its_rare_parts_are():
    assert unused_words("Is a tiktoken-style count enough?", used()) == ["tiktoken-style"]
    assert unused_words("Is a cross-encoder better?", used()) == ["cross-encoder"]


def test_a_possessive_is_the_word_each_word_counts_once_and_short_bases_are_no_words():
    # "redis" is not "dis", "docker" no everyday "dock"; "tiktoken's" is "tiktoken".
    assert rare_words("How is tiktoken's encoding chosen for Lua or lua or LUA?") == [
        "tiktoken",
        "Lua",
    ]
    assert rare_words("Can redis or docker or cors help?") == ["redis", "docker", "cors"]


def test_a_short_word_is_taken_as_written_not_as_a_slip():
    # One edit from "jwt" is "jet", from "gcp" "gap": short unknown words are names.
    vocabulary = {stem(word): 3 for word in ("jet", "gap")}
    used_here = in_vocabulary(vocabulary, sorted(vocabulary))
    assert unused_words("Does it use jwt on gcp?", used_here) == ["jwt", "gcp"]
