"""Scratch: run questions through the real runner with the offline model (not committed)."""

import asyncio
import json
import os

import pytest
from channels.db import database_sync_to_async
from django.core.management import call_command

from agent.runner import runner
from agent.turns import ChatMessage, Visitor

pytestmark = pytest.mark.django_db(transaction=True)


def _seed():
    from blog.indexing import articles_reindex
    from blog.models import Article

    call_command("seed_demo")
    articles_reindex(articles=Article.objects.all()) if False else None
    from blog.indexing import chunk_reindex

    for article in Article.objects.published():
        chunk_reindex(article=article)


async def _ask(question, conversation_id=None, page=""):
    events = []

    async def emit(event):
        events.append(event)

    await runner.run(
        message=ChatMessage(content=question, conversation_id=conversation_id, page=page),
        visitor=Visitor(session_key="eval-session", client_ip="127.0.0.1"),
        emit=emit,
    )
    await runner.saver.drain(timeout=10)
    return events


async def test_scratch(settings):
    settings.AGENT_MESSAGES_PER_MINUTE = 10_000
    settings.AGENT_MESSAGES_PER_MINUTE_PER_IP = 10_000
    settings.AGENT_TOKENS_PER_DAY = 10**9
    await database_sync_to_async(_seed)()
    out = []
    for line in open(os.environ["EVAL_FILE"]):
        item = json.loads(line)
        events = await _ask(item["q"])
        text = "".join(e.get("content", "") for e in events if e["type"] == "text")
        cites = [e["url"] for e in events if e["type"] == "citation"]
        done = events[-1]
        out.append({**item, "answer": text, "cites": cites, "answered": done.get("answered")})
    with open(os.environ["EVAL_OUT"], "w") as f:
        for row in out:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
