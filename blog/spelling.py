"""A reader's typos, read as the words the blog writes.

"whats teh diference between sse and websockets" has two words the blog never uses, so the
relevance bar read it as a question about something the blog does not cover, and declined it.
A typo is one edit (a letter dropped, added, changed, or two swapped) away from the word meant:

- a word of five letters or more that the blog never uses and everyday English does not know
  ("diference", "embeding") becomes the one-edit word the blog uses most ("difference");
- a shorter word becomes a stop word only by two swapped letters ("teh", "adn", "hwo"), and
  is then dropped like one: a short unknown word is far more often a name ("jit", "ttl") than
  a slip, and one edit would turn half of them into a stop word;
- a word of four letters that is no stop word's slip becomes the blog's word with one letter
  more ("limt" "limit", "tokn" "token") or two letters swapped back ("tsak" "task"); a
  three-letter word stays as written.

A word the large list holds is read as a blog word only when that word is a hundred times as
common ("serach" "search", not "parsec" "parse"). What was read as what goes back to the
reader: each search hit lists it (`read_as`), and the offline model reads the question so.

A word everyday English knows (the wordfreq list, blog.commonness) is left as written:
"Jaeger" or "Claude" are names, and the bar must see them as words the blog never uses. Only
the full-text terms are corrected; the embedding reads the question as written.

Words are stemmed in Python by the Snowball English stemmer, the algorithm PostgreSQL's
`english_stem` runs (a test checks they agree on the blog's words): stemming a word's few hundred
variants in the database cost a round trip on every search naming a word the everyday list does
not hold ("pgvector", "embeddings"), more than the search's own full-text half.
"""

from __future__ import annotations

import functools
import string
import threading
from collections.abc import Mapping

import snowballstemmer

from blog.commonness import RARE, zipf

MIN_LENGTH = 5  # a shorter unknown word is corrected to a stop word by a swap, or
SHORT_LENGTH = 4  # from this length by a dropped or swapped letter ("limt" "limit")
SLIP_GAP = 2.0  # zipf: the word meant is a hundred times as common as a listed slip
# A longer word is no slip: the blog's longest words are class names of about 27 letters. A
# word has about 54 variants per letter, each stemmed at its length, so the cost grows with the
# square of it: one made-up word of 490 letters, a query weighing 4 of the address's 60
# searches a minute, took 12 CPU-seconds (a chat message the same, searched with it).
MAX_LENGTH = 32
SHORT_RARE = 3.5  # a short word this rare may be a slip ("teh" 3.0, "the" 7.7)
NAMED = 2.0  # zipf in the large list: a word at least this common is meant as written
MIN_CHUNKS = 2  # the word meant appears in at least this many chunks
MAX_SUSPECTS = 3  # words looked at per question: the rest are left as written
# PostgreSQL's English stop words of three and four letters: what a short slip can mean.
SHORT_STOP_WORDS = frozenset(
    "you him his she her hers its they them what which who whom this that am are was were been "
    "have has had does did the and but if for with from into down out off over then once here "
    "when why how all any both each few more most some such nor not only own same than too very "
    "can will just don now".split()
)


def corrected(terms: list[str], frequency: Mapping[str, int]) -> list[str]:
    """`terms` (query_terms output) with typos replaced, or dropped when they meant a stop word.

    `frequency` is the vocabulary's document frequency per lexeme (blog.relevance). No
    database round trip; a few milliseconds only when a term looks like a typo.
    """
    return applied(terms, typo_fixes(terms, frequency))


def typo_fixes(
    terms: list[str], frequency: Mapping[str, int], as_typed: frozenset[str] = frozenset()
) -> dict[str, str]:
    """Each typo among `terms` and the word it is read as ("" for a stop word's slip); the
    terms `as_typed` (the acronyms the reader typed in capitals) are none."""
    # A question has a slip or two; a query of sixty made-up words cost 1.1 s of variants.
    unknown = [
        t
        for t in terms
        if t not in as_typed and _suspect(t) and stem(t) not in frequency and not _named(t)
    ][:MAX_SUSPECTS]
    fixes = {term: _best(term, variants(term), frequency) for term in unknown}
    return {term: fix for term, fix in fixes.items() if fix != term}


def applied(terms: list[str], fixes: dict[str, str]) -> list[str]:
    """`terms` with `fixes` made, each term once, a dropped slip left out."""
    if not fixes:
        return terms
    return list(dict.fromkeys(fix for term in terms if (fix := fixes.get(term, term))))


def _suspect(term: str) -> bool:
    if not (term.isascii() and term.isalpha() and 3 <= len(term) <= MAX_LENGTH):
        return False
    # "teh" is common enough on the web to be in the everyday list, just.
    return zipf(term) < (RARE if len(term) >= MIN_LENGTH else SHORT_RARE)


def _named(term: str) -> bool:
    """A listed name or rare word, meant as written. The large list knows those the everyday
    one leaves out ("shard" 3.0, "pinecone" 2.1, "jwt" 2.0); a slip is rarer there
    ("diference" 1.6, "serach" 1.2). Asked last: reading the list costs ~30 MB."""
    return len(term) >= MIN_LENGTH and _rare_word(term) >= NAMED


@functools.lru_cache(maxsize=100_000)  # bounded: every unknown word a visitor types is a key
def _rare_word(word: str) -> float:
    from wordfreq import zipf_frequency  # ~30 MB, read on the first typo only

    return zipf_frequency(word, "en", wordlist="large")


def variants(word: str) -> list[str]:
    """Words one edit away that keep the first letter: a reader rarely slips on it, and
    without it "shard" was read as "hard"."""
    if len(word) < MIN_LENGTH:  # "hte": a short word's swap may take the first letter
        return _swaps([(word[:i], word[i:]) for i in range(len(word) + 1)])
    splits = [(word[:i], word[i:]) for i in range(1, len(word) + 1)]
    swaps = _swaps(splits)
    letters = string.ascii_lowercase
    deletes = [a + b[1:] for a, b in splits if b]
    changes = [a + c + b[1:] for a, b in splits if b for c in letters if c != b[0]]
    return list(dict.fromkeys(deletes + swaps + changes + _inserts(splits)))


def _short_variants(word: str) -> list[str]:
    """A four-letter word's slips that fast typing makes: a letter dropped ("limt", "tokn")
    or two swapped ("tsak"). Not a letter changed or added: one of those turns most
    four-letter names into some other word ("vllm" "vlm"?, "jwts" "jets")."""
    splits = [(word[:i], word[i:]) for i in range(1, len(word) + 1)]
    return list(dict.fromkeys(_swaps(splits) + _inserts(splits)))


def _inserts(splits: list[tuple[str, str]]) -> list[str]:
    return [a + c + b for a, b in splits for c in string.ascii_lowercase]


def _swaps(splits: list[tuple[str, str]]) -> list[str]:
    return [a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1 and b[0] != b[1]]


_local = threading.local()  # a Snowball stemmer keeps the word it works on: one per thread


def stem(word: str) -> str:
    """The English stemmer's lexeme for a lower-case word, as PostgreSQL's index spells it."""
    stemmer = getattr(_local, "stemmer", None)
    if stemmer is None:
        stemmer = _local.stemmer = snowballstemmer.stemmer("english")
    return stemmer.stemWord(word)


def _best(term: str, variants: list[str], frequency: Mapping[str, int]) -> str:
    """The word meant: "" for a stop word, the term itself when nothing is one edit away."""
    if len(term) < MIN_LENGTH:
        if any(v in SHORT_STOP_WORDS for v in variants):
            return ""
        if len(term) < SHORT_LENGTH:  # "jit", "ttl": a three-letter word is a name
            return term
        variants = _short_variants(term)
    scored = [
        (frequency[lexeme], zipf(variant), variant)
        for variant in variants
        if frequency.get(lexeme := stem(variant), 0) >= MIN_CHUNKS
    ]
    best = max(scored)[2] if scored else term
    return best if best == term or _slip_of(term, best) else term


def _slip_of(term: str, word: str) -> bool:
    """Is `term` a slip for `word` rather than a rarer word of its own? A word the large list
    does not hold is; one it holds ("parsec" 1.95, one letter from "parse" 2.98) only when
    `word` is at least a hundred times as common ("serach" 1.2, "search" 5.0): people type a
    slip far less often than the word they meant."""
    listed = _rare_word(term)
    return listed == 0 or zipf(word) - listed >= SLIP_GAP
