"""What the fifth first-run walk found in the admin, fixed: checked with Django's client."""

import asyncio
import importlib
import re
from types import SimpleNamespace

import httpx
import openai
import pytest
from django.utils import translation
from django.utils.html import escape

from agent import ratelimit
from agent.error_text import error_text
from agent.exceptions import ModelError, TokenBudgetSpent, ToolFailure, ToolNotFound
from agent.llm.openai_compat import _visitor_message
from agent.loop import Limits, TurnResult, run_turn
from agent.tool import Tool
from agent.tools._visitor import visitor_address
from tests.agent.admin.factories import make_conversation, make_turn
from tests.agent.admin.test_chinese import visible_text
from tests.agent.test_loop import USER, DetailIn, ScriptedModel, Sink, Step, make_tools, search_call

pytestmark = pytest.mark.django_db

CHINESE = {"accept-language": "zh-CN,zh;q=0.9"}


def cell(html: str, column: str) -> str:
    """The text of the first row's cell in a changelist column (class field-<column>)."""
    match = re.search(rf'<td class="field-{column}[^"]*">(.*?)</td>', html, flags=re.S)
    assert match, column
    return re.sub(r"<[^>]+>", "", match.group(1)).strip()


def offline_turn(conversation, **fields):
    return make_turn(conversation, model="offline-extractive", offline=True, input_tokens=0,
                     output_tokens=0, **fields)  # fmt: skip


def test_offline_turns_read_no_tokens_not_zero_in_the_lists_and_the_transcript(staff_client):
    # A first run's every conversation and turn read "0" tokens, and its transcript
    # "0 in · 0 out": the offline model counts none, which is not a turn that cost nothing.
    conversation = make_conversation()
    offline_turn(conversation)

    conversations = staff_client.get("/admin/agent/conversation/").content.decode()
    turns = staff_client.get("/admin/agent/turn/").content.decode()
    transcript = staff_client.get(f"/admin/agent/conversation/{conversation.pk}/change/")
    html = transcript.content.decode()
    assert cell(conversations, "tokens") == "—"
    assert cell(turns, "tokens") == "—"
    assert "The offline model counts no tokens." in conversations
    assert re.search(r'data-testid="token-total">\s*<span[^>]*>—</span>', html)
    assert "0 in · 0 out" not in html and "none: offline model" in html
    chinese = staff_client.get(f"/admin/agent/conversation/{conversation.pk}/change/",
                               headers=CHINESE).content.decode()  # fmt: skip
    assert "无：离线模型" in chinese and "离线模型不计令牌。" in chinese


def test_a_model_that_counts_tokens_still_shows_its_counts(staff_client):
    conversation = make_conversation()
    offline_turn(conversation)
    make_turn(conversation, input_tokens=1200, output_tokens=34)

    conversations = staff_client.get("/admin/agent/conversation/").content.decode()
    html = staff_client.get(f"/admin/agent/conversation/{conversation.pk}/change/").content
    assert cell(conversations, "tokens") == "1,234"
    assert "1,200 in · 34 out" in html.decode()


# --- Stored errors in the reviewer's language ------------------------------------------------

HAN = re.compile(r"[\u4e00-\u9fff]")


def failing_tools(not_found: Exception) -> list:
    """The loop tests' tools, and get_article_detail raising what the real one raises."""
    tools = make_tools(delays={"sleepy": 5})

    async def detail(params):
        raise not_found

    return [tools[0], Tool("get_article_detail", "Read one article.", DetailIn, detail, str)]


async def _ended_turns(not_found: Exception) -> list[TurnResult]:
    """Turns the real loop ends as the walk's did: failed calls, a cap, the step limit, a budget."""
    calls = [
        ("c1", "search_web", '{"q": "x"}'),
        ("c2", "get_article_detail", '{"article_id": "seven"}'),
        ("c3", "get_article_detail", '"seven"'),
        ("c4", "get_article_detail", '{"article_id": 99}'),
        search_call("c5", "sleepy"),
        search_call("c6", "boom"),
    ]
    limits = Limits(max_steps=2, tool_timeout=0.05, max_tool_calls=5)
    tools = failing_tools(not_found)
    failed = await run_turn(
        messages=USER, model=ScriptedModel(Step(calls=calls)), tools=tools, limits=limits,
        emit=Sink(),
    )  # fmt: skip

    async def spent(tokens: int) -> bool:
        return False

    over_budget = await run_turn(
        messages=USER, model=ScriptedModel(Step(text=["x"])), tools=tools, limits=limits,
        emit=Sink(), budget=spent,
    )  # fmt: skip
    return [failed, over_budget, *[await _day_spent(refusal) for refusal in _day_refusals()]]


def _day_refusals() -> list:
    """The refusals of the day's budgets (an IPv6 visitor has all three)."""
    budgets = ratelimit._budgets(conversation_id=None, client_ip="2001:db8::1")
    return [refusal for *_, refusal in budgets if refusal.reason in ratelimit.DAY_BUDGETS]


async def _day_spent(refusal) -> TurnResult:
    """A turn a day's budget cut, as TurnBudget.grant cuts it."""

    async def spent(tokens: int) -> bool:
        raise TokenBudgetSpent(refusal.message, refusal.retry_after, refusal.reason)

    return await run_turn(
        messages=USER, model=ScriptedModel(Step(text=["x"])), tools=[], limits=Limits(),
        emit=Sink(), budget=spent,
    )  # fmt: skip


class Silent:
    """A model whose stream ends without a reply, then one that fails without a word."""

    name, offline = "silent", False
    max_output_tokens = None

    def __init__(self, raises: Exception | None = None) -> None:
        self.raises = raises

    async def stream(self, messages, tools):
        if self.raises:
            raise self.raises
        return
        yield


async def _model_failures() -> list[str]:
    ended = []
    for model in (Silent(), Silent(ModelError(""))):
        result = await run_turn(messages=USER, model=model, tools=[], limits=Limits(), emit=Sink())
        ended.append(result.error)
    return ended


async def _refused_search(monkeypatch) -> str:
    search = importlib.import_module("agent.tools.search_knowledge_base")  # not the Tool

    async def refuse(**kwargs):
        return SimpleNamespace(reason="ip", retry_after=12)

    monkeypatch.setattr(search, "search_allow", refuse)
    visitor_address.set("203.0.113.9")
    with pytest.raises(ToolFailure) as refused:
        await search._allowance_spend("pgvector")
    return refused.value.detail


def stored_errors(monkeypatch) -> list[str]:
    """Every error text the loop, its tools and the model adapter store, each made by the code
    that writes it (a changed wording must fail here, not fall back to English unnoticed)."""
    from agent.tools.get_article_detail import _detail

    with pytest.raises(ToolNotFound) as not_found:
        _detail(2**40)
    turns = asyncio.run(_ended_turns(not_found.value))
    texts = [call.error for turn in turns for call in turn.tool_calls if call.error]
    texts += [turn.error for turn in turns]
    texts += asyncio.run(_model_failures())
    texts.append(asyncio.run(_refused_search(monkeypatch)))
    request = httpx.Request("POST", "http://model.invalid/v1/chat/completions")
    for kind, status in [(openai.AuthenticationError, 401), (openai.RateLimitError, 429),
                         (openai.InternalServerError, 500)]:  # fmt: skip
        response = httpx.Response(status, request=request)
        texts.append(_visitor_message(kind("x", response=response, body=None)))
    timeout, unreachable = openai.APITimeoutError, openai.APIConnectionError
    for failure in [timeout(request=request), unreachable(request=request), ValueError("x")]:
        texts.append(_visitor_message(failure))
    return texts


def test_every_stored_error_reads_in_chinese_in_the_chinese_admin(monkeypatch):
    # The Chinese transcript showed "Not executed: the step limit was reached.", "Error: unknown
    # tool …" and "I reached the limit of 2 steps before finishing the answer. These articles may
    # help:" (a colon followed by nothing) in English: the loop stores them so.
    texts = stored_errors(monkeypatch)
    assert len(set(texts)) == 21  # each kind once: a new one belongs in agent.error_text
    with translation.override("zh-hans"):
        shown = {text: error_text(stored=text) for text in texts}
    untranslated = [text for text, chinese in shown.items() if not HAN.search(chinese)]
    assert untranslated == []
    # Of a bad argument, the field it names; the validator's English is in the call's result.
    [invalid] = [text for text in texts if text.startswith("Error: invalid arguments")]
    assert shown[invalid] == "get_article_detail 的参数无效（article_id）；结果中是模型收到的说明。"
    with translation.override("en"):
        english = [error_text(stored=text) for text in texts]
    assert not any(text.startswith("Error:") or text.endswith(":") for text in english)


def test_an_error_that_is_not_ours_is_shown_as_stored():
    with translation.override("zh-hans"):
        assert error_text(stored="RuntimeError: database is down") == (
            "RuntimeError: database is down"
        )


def test_the_chinese_transcript_and_pages_show_the_stored_errors_in_chinese(staff_client):
    conversation = make_conversation()
    turn = make_turn(
        conversation, status="max_steps", answer="", error_code="max_steps",
        error=f"{STEP_LIMIT} These articles may help:",
        tool_calls=[
            {"name": "search_web", "ok": False, "error": UNKNOWN, "result": UNKNOWN},
            {"step": 2, "ok": False, "executed": False,
             "error": "Not executed: the step limit was reached."},
        ],
    )  # fmt: skip
    pages = [
        f"/admin/agent/conversation/{conversation.pk}/change/",
        f"/admin/agent/turn/{turn.pk}/change/",
        f"/admin/agent/toolcall/{turn.tool_calls.get(step=2).pk}/change/",
    ]
    for url in pages:
        html = staff_client.get(url, headers=CHINESE).content.decode()
        text = visible_text(re.sub(r'<pre class="dc-json">.*?</pre>', "", html, flags=re.S))
        assert "Not executed" not in text and "I reached the limit" not in text, url
        assert "Error: unknown tool" not in text, url
    transcript = staff_client.get(pages[0], headers=CHINESE).content.decode()
    assert "回答写完之前就达到了步数上限（2 次模型调用）。" in transcript
    assert "未执行：已达到步数上限。" in transcript
    assert "未知的工具“search_web”。可用的工具：search_knowledge_base。" in transcript
    assert escape(UNKNOWN) in transcript  # what the model was told stays, as its result


STEP_LIMIT = "I reached the limit of 2 steps before finishing the answer."
UNKNOWN = 'Error: unknown tool "search_web". Available tools: search_knowledge_base.'
