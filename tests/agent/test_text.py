"""agent.text: what a reader is shown of an answer streamed in pieces."""

from agent.text import ShownPieces


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
