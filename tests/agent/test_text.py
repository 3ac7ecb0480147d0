"""agent.text: what a reader is shown of an answer streamed in pieces."""

from agent.text import ShownPieces, SplitPairs, without_tags


def test_a_run_split_across_pieces_keeps_its_first():
    shown = ShownPieces()
    pieces = ["a\u200b", "\u200c", "\u2060\u200bb", "\u200d", "\u200b"]
    assert [shown.shown(piece) for piece in pieces] == ["a\u200b", "", "b", "\u200d", ""]


def test_presentation_selectors_split_across_pieces_keep_their_first():
    shown = ShownPieces()
    pieces = ["❤\ufe0f", "\ufe0e", "\ufe0f x", "\ufe0f"]
    assert [shown.shown(piece) for piece in pieces] == ["❤\ufe0f", "", " x", "\ufe0f"]


def test_one_invisible_character_between_words_stays():
    shown = ShownPieces()
    assert [shown.shown(piece) for piece in ["👩", "\u200d", "💻", "\u200b", "x"]] == [
        "👩", "\u200d", "💻", "\u200b", "x"
    ]  # fmt: skip


def test_two_kinds_taking_turns_keep_their_first_two():
    marks = "\u200e\u200f" * 64  # bidi marks, a bit each
    spaced = "\u200b\ufe0e\u200c\ufe0e" * 64  # zero-width bits, a selector between each
    assert without_tags(f"a{marks}b{spaced}c") == "a\u200e\u200fb\u200b\ufe0ec"


def test_the_invisible_characters_writing_pairs_stay():
    text = "❤️\u200d🔥 and 👁️\u200d🗨️, a ZWNJ in می\u200cخواهم"
    assert without_tags(text) == text
    pieces = ShownPieces()
    assert "".join(pieces.shown(char) for char in text) == text


def test_a_run_of_two_kinds_split_across_pieces_keeps_its_first_two():
    pieces = ShownPieces()
    shown = [pieces.shown(char) for char in "x" + "\u200e\u200f" * 8 + "y"]
    assert "".join(shown) == "x\u200e\u200fy"


def test_surrogate_halves_in_two_pieces_are_joined():
    pairs = SplitPairs()
    pieces = ["a\ud83d", "\ude00b", "\ud83d", "\udc4d\x00", "\udc4d", "\ud83d"]
    shown = [pairs.joined(piece) for piece in pieces]
    assert shown == ["a", "😀b", "", "👍\ufffd", "\ufffd", ""]
    assert pairs.rest() == "\ufffd"
    assert pairs.rest() == ""
