"""A reader's word in another form of a word the blog writes, read as the blog's form.

The English stemmer joins a word's inflections ("fused", "fusing" and "fuses" are all "fuse"),
not the words made from it: "fusion" stays "fusion", "finalised" is "finalis" and "final" is
"final". So "How many candidates should I take from each list before fusing them?" had a word
the blog never uses, counted against the question as a topic the blog does not cover, and
matched no chunk of the fusion article, and the question was declined under the bar.

A term whose lexeme the blog never uses is read as the blog's word when one regular English
alternation of its stem is a lexeme the blog uses in at least MIN_CHUNKS chunks:

- a verb in -ise/-ize and the word it is made from: "finalised" "final", "normalize" "normal";
- a verb in -e and its noun in -ion: "fuse" "fusion", and back: "fusion" "fuse";
- a verb in -d and its noun in -sion: "decide" "decision", "extend" "extension", and back.

Nothing else: no prefix or shared start ("fus" begins "fuss"), no dictionary. Like a typo's
fix (blog.spelling), only the full-text terms change; the question is embedded as typed, and
what was read as what goes back to the reader on each hit (`read_as`).
"""

from __future__ import annotations

from collections.abc import Mapping

from blog.spelling import MIN_CHUNKS, stem

MIN_BASE = 4  # letters a form's base keeps: "us" of "use" is no word


def form_fixes(terms: list[str], frequency: Mapping[str, int]) -> dict[str, str]:
    """term -> the blog's form of it, for each term the blog never uses in its own form."""
    fixes = {}
    for term in terms:
        if not (term.isascii() and term.isalpha()) or stem(term) in frequency:
            continue
        form = _blog_form(stem(term), frequency)
        if form:
            fixes[term] = form
    return fixes


def _blog_form(lexeme: str, frequency: Mapping[str, int]) -> str:
    for form in _alternations(lexeme):
        if len(form) >= MIN_BASE and frequency.get(stem(form), 0) >= MIN_CHUNKS:
            return form
    return ""


def _alternations(lexeme: str) -> list[str]:
    """Words one regular derivation away from a stem, most specific first."""
    forms = []
    if lexeme.endswith(("is", "iz")):
        forms.append(lexeme[:-2])  # finalis: final
    if lexeme.endswith("sion"):
        forms.append(lexeme[:-4] + "de")  # decision: decide
    elif lexeme.endswith("ion"):
        forms.append(lexeme[:-3] + "e")  # fusion: fuse
    if lexeme.endswith("e"):
        forms.append(lexeme[:-1] + "ion")  # fuse: fusion
    if lexeme.endswith("d"):
        forms.append(lexeme[:-1] + "sion")  # decid: decision
    return forms
