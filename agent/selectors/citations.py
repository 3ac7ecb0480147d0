"""Which answers cite an article: what deleting it would leave pointing at a withdrawn page."""

from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import Q

from agent.models import Turn


@dataclass(frozen=True)
class Citing:
    answers: int
    conversations: int


def article_citing(*, article_ids: Iterable[int]) -> Citing:
    """The answers (and their conversations) whose citations name any of these articles.

    A JSONB containment test per article (`citations @> '[{"article_id": 3}]'`).
    """
    ids = list(article_ids)
    if not ids:
        return Citing(answers=0, conversations=0)
    cites_any = Q()
    for article_id in ids:
        cites_any |= Q(citations__contains=[{"article_id": article_id}])
    turns = Turn.objects.filter(cites_any)
    return Citing(
        answers=turns.count(),
        conversations=turns.values("conversation_id").distinct().count(),
    )
