"""Evidence that a search hit answers the question, and one calibrated relevance from it.

Cosine similarity alone cannot tell an out-of-scope question from an in-scope one: with e5-small
almost every pair of texts scores 0.8-0.9. What an out-of-scope question has is vocabulary the
blog never uses ("Kubernetes", "Aurora", "语音"). So each hit carries three numbers:

- `similarity`: cosine similarity of the article's best chunk to the question;
- `coverage`: how much of the question the article's matching chunks contain, each query term
  weighted by its inverse document frequency (rare terms say more than common ones);
- `known`: the same share measured against the whole blog: a question whose key terms appear
  nowhere in the blog is asking about something the blog does not cover. An everyday word
  the blog happens not to use ("spend", "phone") is not a key term (blog.commonness).
- `margin`: how far the article's similarity leads the next article in its language (0 when
  another one leads).

`relevance` is a logistic function of those three (coefficients fitted on the tuning half of
bench/answer_eval.jsonl by bench/_relevance_fit.py; see the README). A cross-language question
shares no words with its article, so for an article in the other language coverage and known
also count the question's terms through their translations in the blog's glossary
(blog.glossary: "spool file" covers a Chinese article holding 暂存文件).
"""

from __future__ import annotations

import math
import re
import threading
from dataclasses import dataclass
from functools import cache

from django.db import connection

from blog.colloquial import lone_character
from blog.commonness import unknown_weight

_CJK = re.compile(r"^[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]{2}$")
_NUMBER = re.compile(r"[\d.,]+")
CJK_KNOWN_WEIGHT = 0.25  # see weighted_terms; chosen on the tuning half
# Function words PostgreSQL's English stop list keeps: indefinite pronouns, prepositions,
# conjunctions and sentence adverbs. They never name a topic, so one the blog happens not to
# use ("someone", "everybody", "onto") says nothing about the question being off-topic.
FUNCTION_WORDS = (
    "someone somebody anyone anybody everyone everybody nobody something anything everything"
    " nothing somewhere anywhere everywhere nowhere somehow anyhow onto upon toward within"
    " without via whatever whenever wherever whoever whichever however unless whether although"
    " though else also even still already really rather maybe perhaps anyway ever never yet"
    " besides instead otherwise hence thus therefore meanwhile beforehand afterwards"
).split()
# The same words as the index's English stemmer spells them (a test checks the two agree).
FUNCTION_LEXEMES = frozenset(
    "someon somebodi anyon anybodi everyon everybodi nobodi someth anyth everyth noth somewher"
    " anywher everywher nowher somehow anyhow onto upon toward within without via whatev whenev"
    " wherev whoever whichev howev unless whether although though els also even still alreadi"
    " realli rather mayb perhap anyway ever never yet besid instead otherwis henc thus therefor"
    " meanwhil beforehand afterward".split()
)
_CJK_CHAR = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
# What changes when chunks change: a reindex writes new rows (the newest id moves), unpublishing
# deletes rows (the table's delete counter moves once the deleting session reports its
# statistics, within seconds). Reading both costs a few microseconds; a rebuild (ts_stat over
# every chunk) takes about a second at 100k chunks, so it happens only when one of them moved.
# The visible articles move too when a post scheduled for later goes live (its chunks were
# written when it was saved) or a public one is rescheduled or withdrawn: no chunk changes then.
# Two values follow them exactly: the counter the articles' triggers move on every write that
# changes an article's status or date (migration 0013, committed with the write), and the date
# of the next scheduled post, which moves the moment the clock passes it. Counting the visible
# articles on every search instead cost 0.6–0.95 ms of the server's CPU at 10,000 articles.
CHANGE_KEY_SQL = (
    "SELECT (SELECT max(id) FROM blog_chunk), pg_stat_get_tuples_deleted('blog_chunk'::regclass), "
    "(SELECT changes FROM blog_visibility_changes), "
    "(SELECT min(blog_article.published_at) FROM blog_article WHERE {scheduled})"
)
# Only the chunks of articles visitors may read: those of a post scheduled for later are in the
# index, and counted in the vocabulary their words were "known" to every search (see _build).
VISIBLE_CHUNKS = (
    "FROM blog_chunk JOIN blog_article ON blog_article.id = blog_chunk.article_id WHERE {published}"
)


@cache
def change_key_sql() -> str:
    """CHANGE_KEY_SQL with the scheduled rule written in (once: every search sends it)."""
    from blog.search_sql import scheduled_sql_inline

    return CHANGE_KEY_SQL.format(scheduled=scheduled_sql_inline())


@cache
def visible_chunks_sql() -> str:
    """VISIBLE_CHUNKS with the published rule written in: the vocabulary's rows, and those a
    lookup of what the blog writes may read (blog.compounds)."""
    from blog.search_sql import published_sql_inline

    return VISIBLE_CHUNKS.format(published=published_sql_inline())


# The query's lexemes as the index spells them (blog.search_sql sends it with the lists).
QUERY_LEXEMES_SQL = "SELECT array(SELECT lexeme FROM unnest(to_tsvector('english', %s)))"

# Refitted on all three tuning halves (bench/_relevance_fit.py) and kept because a wrong
# citation costs more than a decline: an answer that cites the wrong article is worse than
# "I couldn't find it" (docs/answer-quality.md, "Thirteenth pass").
WEIGHTS = {"bias": -60.88, "similarity": 59.43, "coverage": 5.53, "known": 6.36, "cross": 3.98}
# An English question singles out a Chinese article when the article's similarity is at least
# this high and leads every other Chinese article's by at least this margin (chosen on the
# tuning halves, the middle of the range that declined no more: 0.015-0.03 and 0.80-0.82).
SINGLED_OUT_MARGIN = 0.02
SINGLED_OUT_SIMILARITY = 0.81


@dataclass(frozen=True)
class Evidence:
    similarity: float
    coverage: float
    known: float
    cross: bool = False  # the article is in another language than the question
    margin: float = 0.0  # similarity lead over the next article in the same language
    question_language: str = "en"


def relevance(evidence: Evidence) -> float:
    """The calibrated probability-like relevance in 0-1."""
    known = 1.0 if singled_out(evidence) else evidence.known
    z = (
        WEIGHTS["bias"]
        + WEIGHTS["similarity"] * evidence.similarity
        + WEIGHTS["coverage"] * evidence.coverage
        + WEIGHTS["known"] * known
        # A question shares no terms with an article in another language, so its coverage
        # is near 0 there however good the match: the bonus stands in for that coverage.
        + WEIGHTS["cross"] * evidence.cross
    )
    return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))


def singled_out(evidence: Evidence) -> bool:
    """An English question that points at one Chinese article above all the others.

    Its words are then counted as known: the blog writes them, in Chinese ("dashboard" is
    "仪表盘" there), so an unknown English word says nothing about such a question being
    off-topic. Out-of-scope English questions resemble every Chinese article about equally
    (on the tuning halves none led the next by 0.02 at a similarity of 0.81). Not for a
    Chinese question about an English article: unknown Chinese words already count a quarter
    (CJK_KNOWN_WEIGHT), and out-of-scope Chinese questions single out an English article as
    often as in-scope ones do.
    """
    return (
        evidence.cross
        and evidence.question_language == "en"
        and evidence.margin >= SINGLED_OUT_MARGIN
        and evidence.similarity >= SINGLED_OUT_SIMILARITY
    )


class Vocabulary:
    """Document frequency of every lexeme in the index, cached per process.

    Built with PostgreSQL's ts_stat over the full-text column (one scan), rebuilt when the
    chunks or the visible articles change (see CHANGE_KEY_SQL).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key: tuple | None = None
        self.frequency: dict[str, int] = {}
        self.lexicon: list[str] = []  # the lexemes, sorted: a word's start is looked up in it
        self.chunks = 0
        self.languages: tuple[str, ...] = ()

    def invalidate(self) -> None:
        """Rebuild on next use (this process just rewrote chunks, or a test reset the data)."""
        with self._lock:
            self._key = None

    def current(self) -> Vocabulary:
        with connection.cursor() as cursor:
            cursor.execute(change_key_sql())
            return self.at(cursor.fetchone())

    def at(self, change_key: tuple) -> Vocabulary:
        """The vocabulary for a `CHANGE_KEY_SQL` row the caller read; rebuilt if it moved."""
        key = (connection.alias, *change_key)
        with self._lock:
            if key != self._key:
                self._build(key)
        return self

    @property
    def built(self) -> bool:
        return self._key is not None

    def _build(self, key: tuple) -> None:
        # Visible chunks only: a post scheduled for later is indexed when it is saved, and its
        # words counted as the blog's made `/api/search?q=<word>&all=true` say `known: 1` for a
        # word only that post holds (and raised the word's relevance), before it was public.
        visible = visible_chunks_sql()
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT word, ndoc FROM ts_stat(%s)", [f"SELECT blog_chunk.search_vector {visible}"]
            )
            frequency = dict(cursor.fetchall())
            cursor.execute(f"SELECT count(*) {visible}")  # noqa: S608 - constants only
            chunks = cursor.fetchone()[0]
            cursor.execute(f"SELECT DISTINCT blog_chunk.language {visible} ORDER BY 1")  # noqa: S608
            languages = tuple(row[0] for row in cursor.fetchall())
        self.frequency, self.chunks, self.languages = frequency, chunks, languages
        self.lexicon = sorted(frequency)
        self._key = key

    def idf(self, lexeme: str) -> float:
        """Smoothed inverse document frequency; a lexeme the blog never uses gets the most."""
        return math.log((self.chunks + 1) / (self.frequency.get(lexeme, 0) + 0.5))


vocabulary = Vocabulary()


def query_language(query: str) -> str:
    """ "zh" when the question holds Chinese characters, else "en"."""
    return "zh" if any(_CJK_CHAR.match(ch) for ch in query) else "en"


def query_lexemes(lexical_query: str) -> list[str]:
    """The query's lexemes as the index spells them (stemmed, stop words gone)."""
    if not lexical_query.strip():
        return []
    with connection.cursor() as cursor:
        cursor.execute(QUERY_LEXEMES_SQL, [lexical_query])
        return list(cursor.fetchone()[0])


def weighted_terms(
    lexemes: list[str],
    vocab: Vocabulary,
    also_known: set[str] = frozenset(),
    spelled: dict[str, list[str]] | None = None,
) -> tuple[dict[str, float], float]:
    """IDF weight per query lexeme, and the share of that weight the blog knows (`known`).

    `spelled` maps an English lexeme to the question's words it stems from (`lexeme_words`):
    an unknown everyday word ("spend") counts less against the question than an unknown
    rare one ("kubernetes"), by `blog.commonness.unknown_weight`.

    A CJK bigram the blog never uses but whose two characters both sit in bigrams it does use
    ("口限" in "窗口限流") is a word boundary, not an unknown word: it is left out. So is a
    function word the blog never uses (FUNCTION_LEXEMES), and a Chinese character standing
    alone ("A 跟 B": blog.colloquial.lone_character).
    """
    known_chars = {ch for lexeme in lexemes if lexeme in vocab.frequency for ch in lexeme}
    weights: dict[str, float] = {}
    for lexeme in lexemes:
        unknown = lexeme not in vocab.frequency
        if unknown and _CJK.match(lexeme) and set(lexeme) <= known_chars:
            continue
        if unknown and (lexeme in FUNCTION_LEXEMES or lone_character(lexeme)):
            continue
        weights[lexeme] = vocab.idf(lexeme)
    if weights and all(_NUMBER.fullmatch(lexeme) for lexeme in weights):
        # A number alone names no topic: "9" (or "谢谢 9", the thanks no lexeme) matched every
        # chunk holding a 9, at coverage and known 1.0, and cleared the bar at 0.96.
        return weights, 0.0
    total = sum(weights.values())
    unknown = sum(
        weight * _against(lexeme, spelled or {})
        for lexeme, weight in weights.items()
        if lexeme not in vocab.frequency and lexeme not in also_known
    )
    # A question with no word the index can read ("😀", a row of bidi marks, "?") names
    # nothing the blog could know: counted as unknown, it is declined on its vector alone.
    return weights, (1.0 - unknown / total if total else 0.0)


def _against(lexeme: str, spelled: dict[str, list[str]]) -> float:
    """How much an unknown lexeme counts against the question (1: fully).

    An unknown CJK bigram counts a quarter: with few Chinese articles, ordinary Chinese words
    ("增长", "防止") are missing from the blog as often in questions it answers as in those it
    does not. An unknown English word counts by how rare it is in everyday English: "jwt"
    names a technology the blog never wrote about, "spend" does not.
    """
    if _CJK.match(lexeme):
        return CJK_KNOWN_WEIGHT
    return unknown_weight(spelled.get(lexeme, []))


def coverage(weights: dict[str, float], matched: set[str]) -> float:
    """IDF-weighted share of the query's lexemes that `matched` (an article's lexemes) holds."""
    total = sum(weights.values())
    return sum(w for lexeme, w in weights.items() if lexeme in matched) / total if total else 0.0
