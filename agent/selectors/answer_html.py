"""Answers' Markdown as reviewers read it, rendered once per answer and kept in the cache."""

from __future__ import annotations

import hashlib
import logging

from django.conf import settings
from django.core.cache import cache
from django.utils.translation import gettext

from blog.rendering import RENDERER, answer_to_html

logger = logging.getLogger(__name__)


def turn_answer_html(*, answer: str) -> str:
    """An answer's Markdown as reviewers read it: sanitized as articles are, its links shown
    as the chat panel shows them (the label is the panel's own string)."""
    return answer_to_html(answer, external_label=gettext("opens another site"))


def _key(answer: str) -> str:
    # The external links' label as translated now (a new translation is a new entry), and the
    # renderer's fingerprint, its code.
    label = gettext("opens another site")
    digest = hashlib.sha256(f"{label}\0{answer}".encode()).hexdigest()
    return f"agent:answer-html:{RENDERER}:{digest}"


def turn_answers_html(*, answers: list[str]) -> list[str]:
    """turn_answer_html of each answer, in order, rendered once for all views and workers.

    A transcript rendered every answer's Markdown on each view: with 100 answers of tables,
    code and lists the rendering alone took about 0.7 s a view (docs/assistant.md). Answers
    never change once finished, and the key names the text itself, so an entry is never
    stale. One round trip reads them all; when the cache fails the answers are rendered as
    before and the page is served.
    """
    keys = [_key(answer) for answer in answers]
    try:
        found = cache.get_many(set(keys))
    except Exception as exc:  # noqa: BLE001 - a cache outage must not take the transcript down
        logger.warning("the rendered-answer cache could not be read: %r", exc)
        return [turn_answer_html(answer=answer) for answer in answers]
    rendered = {key: turn_answer_html(answer=a) for key, a in zip(keys, answers, strict=True)
                if key not in found}  # fmt: skip
    if rendered:
        try:
            cache.set_many(rendered, timeout=settings.BLOG_BODY_HTML_SECONDS)
        except Exception as exc:  # noqa: BLE001
            logger.warning("the rendered-answer cache could not be written: %r", exc)
    return [found[key] if key in found else rendered[key] for key in keys]
