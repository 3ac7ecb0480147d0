"""Questions the blog could not answer, grouped by similar wording."""

from __future__ import annotations

import hashlib
import logging
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from uuid import UUID

from django.core.cache import cache
from django.db.models import Exists, OuterRef, Q, QuerySet

from agent.answered import FINISHED
from agent.models import ToolCall, Turn
from agent.tools.search_knowledge_base import SEARCH_REFUSED
from blog.models import Article

logger = logging.getLogger(__name__)

SEARCH_TOOL = "search_knowledge_base"

# The one rule for "the blog did not answer": finished, declined or cited nothing, and not
# small talk (a visitor's "thanks!" or "hi" asked nothing, so nothing was missed).
UNANSWERED = Q(status__in=FINISHED, answered=False, small_talk=False)


def turn_unanswered(*, queryset: QuerySet[Turn] | None = None) -> QuerySet[Turn]:
    """Finished turns the blog did not answer: they declined or cited nothing (any model)."""
    queryset = Turn.objects.all() if queryset is None else queryset
    return queryset.filter(UNANSWERED)


def turn_unanswered_count(*, since: datetime | None = None, while_indexing: bool = True) -> int:
    """How many questions turn_unanswered_groups would group, were there no limit: a busy
    blog's page said "500 questions the blog could not answer", its limit, of 2,800."""
    return _unanswered_in(since=since, while_indexing=while_indexing).count()


def _unanswered_in(*, since: datetime | None, while_indexing: bool) -> QuerySet[Turn]:
    turns = turn_unanswered()
    if since is not None:
        turns = turns.filter(started_at__gte=since)
    if not while_indexing:
        turns = turns.filter(index_incomplete=False)
    return turns


def turn_downvoted(*, limit: int = 200, since: datetime | None = None) -> QuerySet[Turn]:
    """Answers visitors voted down, newest first: the other half of the review backlog
    (`since`: only turns asked from then on, as the dashboard counts its down-votes)."""
    return (
        _downvoted_in(since=since)
        .only("conversation_id", "index", "user_message", "answer", "feedback_comment",
              "feedback_at", "started_at")
        .order_by("-feedback_at", "-started_at")[:limit]
    )  # fmt: skip


def turn_downvoted_count(*, since: datetime | None = None) -> int:
    """How many answers visitors voted down (since `since`), beyond those the page shows."""
    return _downvoted_in(since=since).count()


def _downvoted_in(*, since: datetime | None) -> QuerySet[Turn]:
    turns = Turn.objects.filter(vote=Turn.Vote.DOWN)
    return turns if since is None else turns.filter(started_at__gte=since)


@dataclass
class UnansweredGroup:
    question: str
    last_asked: datetime
    count: int = 0
    variants: list[str] = field(default_factory=list)
    examples: list[tuple[UUID, int]] = field(default_factory=list)
    # Normalised wording -> (times asked, first asked, its first form as typed): names the group.
    wordings: dict[str, tuple[int, datetime, str]] = field(default_factory=dict, repr=False)
    # Turns whose search failed (timed out, raised): a fault to look into, not a missing article.
    search_failed: int = 0
    # Turns whose search the search limit refused (too many searches from one address).
    search_refused: int = 0
    # Turns asked while some article was not indexed yet: ask again before writing anything.
    while_indexing: int = 0
    # (title, url) of articles indexed after the group was last asked that the search now
    # finds for it: one may answer it, so the editor asks again before writing another.
    indexed_since: list[tuple[str, str]] = field(default_factory=list)

    @property
    def conversations(self) -> int:
        return len({conversation_id for conversation_id, _ in self.examples})


_NOT_WORD = re.compile(r"[\W_]+")
# Chinese runs straight into Latin words ("安装pgvector"); split them so the words can match.
_SCRIPT_BOUNDARY = re.compile(r"(?<=[\u3400-\u9fff])(?=[a-z0-9])|(?<=[a-z0-9])(?=[\u3400-\u9fff])")


# Filler that makes two wordings of one question look different ("is there a post about").
_FILLER = frozenset(
    "a an the is are was be do does did you your i me my we our can could would should "
    "there any some about on in of for to with it this that have has post posts article "
    "articles blog write written cover covered please tell know".split()
)


# The most of a question its group is judged by. A question may be 4,000 characters and NFKC
# grows some characters eighteenfold ("ﷺ"): 500 stored questions of 4,000 random Chinese
# characters, each its own group of 4,000 trigrams, took 51 CPU-seconds per page load.
GROUPED_CHARS = 200


def _normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text[:GROUPED_CHARS])[:GROUPED_CHARS]
    words = _NOT_WORD.sub(" ", text.casefold())
    words = _SCRIPT_BOUNDARY.sub(" ", words).split()
    return " ".join([word for word in words if word not in _FILLER] or words)


def _trigrams(text: str) -> frozenset[str]:
    # pg_trgm's recipe: each word padded with two spaces before and one after.
    return frozenset(
        padded[i : i + 3]
        for word in text.split()
        for padded in [f"  {word} "]
        for i in range(len(padded) - 2)
    )


UNANSWERED_GROUPED = 500  # the newest questions the Unanswered page groups


def turn_unanswered_groups(
    *,
    limit: int = UNANSWERED_GROUPED,
    threshold: float = 0.5,
    since: datetime | None = None,
    while_indexing: bool = True,
    new_since: bool = True,
) -> list[UnansweredGroup]:
    """Group the last `limit` unanswered questions by trigram similarity, biggest first
    (`while_indexing=False`: without those asked while the index was incomplete;
    `new_since=False`: without searching for the articles indexed since, a page that does
    not show them)."""
    turns = _unanswered_in(since=since, while_indexing=while_indexing)
    # A search the model sent bad arguments never ran: not the search failing.
    searches = ToolCall.objects.filter(turn=OuterRef("pk"), name=SEARCH_TOOL).filter(
        ToolCall.OUTCOMES["error"]
    )
    # The search limit refusing a search is the visitor's rate, not a fault to look into.
    refused = Q(error__startswith=SEARCH_REFUSED)
    rows = (
        turns.annotate(
            search_failed=Exists(searches.exclude(refused)),
            search_refused=Exists(searches.filter(refused)),
        )
        .order_by("-started_at")
        .values_list(
            "user_message", "started_at", "conversation_id", "index", "search_failed",
            "search_refused", "index_incomplete",
        )[:limit]
    )  # fmt: skip
    groups: list[tuple[frozenset[str], UnansweredGroup]] = []
    for row in rows:
        _group_add(groups, row, threshold)
    for _, group in groups:
        group.question = _representative(group)
    # Stable sort: equal counts keep newest-first order.
    ordered = sorted((group for _, group in groups), key=lambda group: -group.count)
    if new_since:
        _indexed_since(ordered)
    return ordered


INDEXED_SINCE_SHOWN = 2  # articles named per group
INDEXED_SINCE_SEARCHED = 20  # groups searched again, the most asked first (about 40 ms each)


def _indexed_since(groups: list[UnansweredGroup]) -> None:
    """Name, on the most asked groups, articles indexed after the group was last asked that
    the search now finds for it (above the relevance bar).

    Only a search says whether a new article is about the question: listing whatever was
    published since named a Kubernetes article under "Is there a post about async Rust?".
    An edit that was re-indexed counts too: it may have added the answer.
    """
    from blog.search import article_search  # loads the embedder: only when there is a group

    if not groups:
        return
    oldest = min(group.last_asked for group in groups)
    recent = dict(
        Article.objects.published().filter(indexed_at__gt=oldest).values_list("id", "indexed_at")
    )
    wanted = [
        group
        for group in groups[:INDEXED_SINCE_SEARCHED]
        if any(indexed_at > group.last_asked for indexed_at in recent.values())
    ]
    if not wanted:
        return
    # The part it is grouped by: embedding a 4,000-character question costs seconds.
    questions = [group.question[:GROUPED_CHARS] for group in wanted]
    found = _found(questions, index=max(recent.values()), search=article_search)
    for group, question in zip(wanted, questions, strict=True):
        group.indexed_since = [
            (title, url)
            for article_id, title, url in found[question]
            if article_id in recent and recent[article_id] > group.last_asked
        ][:INDEXED_SINCE_SHOWN]


FOUND_SECONDS = 7 * 24 * 3600  # an entry is never stale (its key names the index): only space


def _found(
    questions: list[str], *, index: datetime, search: Callable[..., list]
) -> dict[str, list[tuple]]:
    """What the search finds for each question, `(article_id, title, url)`, asked once per
    state of the index (`index`: the newest article's indexing) and kept in the cache.

    Each view of the Unanswered page and the dashboard embedded up to 20 questions again:
    12 ms each on an idle machine, 70-200 ms on a loaded one (2,000 conversations: 0.3-2.6 s
    of a dashboard's 0.4-2.8 s). An edit, a new article or a new model re-indexes, and the
    key changes with it.
    """
    stamp = index.isoformat()
    keys = {
        q: "agent:unanswered-found:" + hashlib.sha256(f"{stamp}\0{q}".encode()).hexdigest()
        for q in questions
    }
    try:
        cached = cache.get_many(list(keys.values()))
    except Exception as exc:  # noqa: BLE001 - a cache outage must not take the page down
        logger.warning("the unanswered-search cache could not be read: %r", exc)
        cached = {}
    found: dict[str, list[tuple]] = {}
    fresh: dict[str, list[tuple]] = {}
    for question, key in keys.items():
        if key in cached:
            found[question] = [tuple(hit) for hit in cached[key]]
            continue
        hits = [(hit.article_id, hit.title, hit.url) for hit in search(query=question, limit=5)]
        found[question] = fresh[key] = hits
    if fresh:
        try:
            cache.set_many(fresh, timeout=FOUND_SECONDS)
        except Exception as exc:  # noqa: BLE001
            logger.warning("the unanswered-search cache could not be written: %r", exc)
    return found


def _representative(group: UnansweredGroup) -> str:
    """The wording most visitors used (normalised), as first typed; ties go to the earliest.

    The newest message named the group before, so one odd wording renamed a popular group and
    became the "Write an article about this" title. Counting wordings lets one message rename
    a group only by outnumbering it; the earliest breaks ties because it stays put as more are
    asked, and a group with one wording per visitor keeps the name it started with.
    """
    _times, _first_asked, typed = min(
        group.wordings.values(), key=lambda counted: (-counted[0], counted[1])
    )
    return typed


def _group_add(
    groups: list[tuple[frozenset[str], UnansweredGroup]], row: tuple, threshold: float
) -> None:
    """Count one unanswered turn into the most similar group, or start a new one."""
    message, started_at, conversation_id, index, search_failed, search_refused, incomplete = row
    # Nothing but punctuation or symbols normalises to nothing: grouped as typed, capped too.
    normal = _normalise(message) or message.strip()[:GROUPED_CHARS]
    grams = _trigrams(normal)
    best, best_score = None, threshold
    for key, group in groups:
        shared = len(key & grams)  # the smaller set's size in lookups; no union is built
        union = len(key) + len(grams) - shared
        score = shared / union if union else float(key == grams)
        if score >= best_score:
            best, best_score = group, score
    if best is None:
        best = UnansweredGroup(message.strip(), last_asked=started_at)
        groups.append((grams, best))
    best.count += 1
    best.search_failed += search_failed
    best.search_refused += search_refused
    best.while_indexing += incomplete
    if message.strip() not in best.variants and len(best.variants) < 5:
        best.variants.append(message.strip())
    best.examples.append((conversation_id, index))
    # Newest first: a later row is older, so it becomes the wording's form as first typed.
    times = best.wordings.get(normal, (0,))[0]
    best.wordings[normal] = (times + 1, started_at, message.strip())
