"""The bidi control characters, named once for the site's pages and the admin's visitor text."""

# The explicit embeddings, overrides and isolates (LRE..RLO, LRI..PDI): invisible, and obeyed
# past the end of the words that carry them. The implicit marks (ALM, LRM, RLM) only lean the
# characters next to them. Both as the inside of a regex character class.
BIDI_EXPLICIT = "\u202a-\u202e\u2066-\u2069"
BIDI_MARKS = "\u061c\u200e\u200f"
