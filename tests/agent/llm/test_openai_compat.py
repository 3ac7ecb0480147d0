"""OpenAICompatModel over real HTTP against the scripted OpenAI-compatible server."""

import asyncio
import contextlib
import socket
import time

import pytest

from agent.exceptions import ModelError
from agent.llm.base import ArgumentsDelta, ModelTurn, Retried, TextDelta, ToolCall, Usage, Waiting
from agent.llm.openai_compat import CALL_FRAMING, OpenAICompatModel
from testing_support.model_server import (
    Comment,
    ScriptedOpenAIServer,
    ScriptedResponse,
    error_response,
    text_response,
    tool_call_response,
)

MESSAGES = [{"role": "user", "content": "What is an agent loop?"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "search_knowledge_base",
            "description": "Search.",
            "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
        },
    }
]


@pytest.fixture
def server():
    with ScriptedOpenAIServer() as scripted:
        yield scripted


@pytest.fixture
async def model(server):
    chat = OpenAICompatModel(base_url=server.base_url, api_key="", model="scripted-model")
    chat.retry_base_delay = 0.01
    yield chat
    await chat.aclose()  # the aiohttp session is bound to this test's loop


async def collect(model, tools=None) -> tuple[list[str], ModelTurn]:
    deltas, turns = [], []
    async for item in model.stream(MESSAGES, tools):
        if not isinstance(item, ArgumentsDelta | Waiting):
            (deltas if isinstance(item, TextDelta) else turns).append(item)
    assert len(turns) == 1
    return [d.text for d in deltas], turns[0]


@pytest.mark.asyncio
async def test_text_streams_as_deltas_and_the_request_is_a_streaming_chat_completion(server, model):
    server.enqueue(text_response(["Hel", "lo", "!"], usage=(12, 3)))
    deltas, turn = await collect(model)
    assert "".join(deltas) == "Hello!"  # a block's tokens are one delta
    assert turn == ModelTurn("Hello!", [], Usage(12, 3))
    body = server.requests[0]
    assert body["model"] == "scripted-model" and body["messages"] == MESSAGES
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert "tools" not in body and "max_completion_tokens" not in body  # the server's limit
    assert server.request_headers[0]["authorization"] == "Bearer not-needed"


@pytest.mark.asyncio
async def test_an_output_cap_is_sent_as_max_completion_tokens(server):
    """The cap bounds what one call can be billed for, thinking included: the loop charges a
    stopped call this much, so the endpoint must be told it."""
    chat = OpenAICompatModel(
        base_url=server.base_url, api_key="", model="scripted-model", max_output_tokens=2048
    )
    server.enqueue(text_response(["Hi"]))
    try:
        await collect(chat)
    finally:
        await chat.aclose()

    assert server.requests[0]["max_completion_tokens"] == 2048


@pytest.mark.asyncio
async def test_tool_call_arguments_split_across_many_chunks_are_joined(server, model):
    arguments = '{"query": "how do agent loops end", "limit": 5}'
    server.enqueue(tool_call_response([("call_1", "search_knowledge_base", arguments)], split=3))
    deltas, turn = await collect(model, TOOLS)
    assert deltas == [] and turn.text == ""
    assert turn.tool_calls == [ToolCall("call_1", "search_knowledge_base", arguments)]
    assert server.requests[0]["tools"] == TOOLS


@pytest.mark.asyncio
async def test_tool_call_arguments_are_yielded_as_they_arrive_for_the_budget(server, model):
    arguments = '{"query": "how do agent loops end"}'
    server.enqueue(tool_call_response([("call_1", "search_knowledge_base", arguments)], split=7))
    items = [item async for item in model.stream(MESSAGES, TOOLS)]
    pieces = [item.text for item in items if isinstance(item, ArgumentsDelta)]
    # The call's framing, its id and its name are counted too.
    head = CALL_FRAMING + "call_1search_knowledge_base"
    assert pieces == [head, *(arguments[i : i + 7] for i in range(0, len(arguments), 7))]
    assert isinstance(items[-1], ModelTurn) and items[-1].tool_calls[0].arguments == arguments


@pytest.mark.asyncio
async def test_two_tool_calls_in_one_response(server, model):
    calls = [("call_a", "search_knowledge_base", '{"query": "a"}'), ("call_b", "x", "{}")]
    server.enqueue(tool_call_response(calls, split=4))
    _, turn = await collect(model, TOOLS)
    assert turn.tool_calls == [ToolCall(*call) for call in calls]


@pytest.mark.asyncio
async def test_text_and_a_tool_call_in_one_response(server, model):
    call = ("call_1", "search_knowledge_base", '{"query": "loops"}')
    server.enqueue(tool_call_response([call], text=["Let me ", "check."], split=5))
    deltas, turn = await collect(model, TOOLS)
    assert "".join(deltas) == "Let me check."
    assert turn.text == "Let me check." and turn.tool_calls == [ToolCall(*call)]


@pytest.mark.asyncio
async def test_missing_usage_chunk_gives_no_usage(server, model):
    server.enqueue(text_response(["ok"], usage=None))
    _, turn = await collect(model)
    assert turn.usage is None and turn.text == "ok"


@pytest.mark.asyncio
async def test_a_500_is_retried_then_succeeds(server, model):
    server.enqueue(error_response(500), text_response(["fine"]))
    deltas, _ = await collect(model)
    assert deltas == ["fine"] and len(server.requests) == 2


@pytest.mark.asyncio
async def test_persistent_500s_make_a_bounded_number_of_requests_then_model_error(server, model):
    server.enqueue(*[error_response(500, message="upstream says sk-secret")] * 5)
    with pytest.raises(ModelError) as caught:
        await collect(model)
    assert len(server.requests) == 3  # the first try and max_retries=2
    assert "HTTP 500" in str(caught.value) and "sk-secret" not in str(caught.value)


@pytest.mark.asyncio
async def test_a_400_is_not_retried(server, model):
    server.enqueue(error_response(400), text_response(["never"]))
    with pytest.raises(ModelError):
        await collect(model)
    assert len(server.requests) == 1


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("status", "reason"), [(404, "not_found"), (400, "http_4xx"), (422, "http_4xx")]
)
async def test_a_missing_model_is_told_apart_from_a_refused_question(server, model, status, reason):
    # A content filter's or a context limit's 400 refuses one visitor's question: it was read
    # as the site's setup, the panel offered no retry and the visitor was told of settings.
    server.enqueue(error_response(status))
    with pytest.raises(ModelError) as caught:
        await collect(model)
    assert caught.value.reason == reason


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("status", "setting"),
    [(401, "OPENAI_API_KEY"), (404, "AGENT_MODEL and OPENAI_BASE_URL"), (400, None)],
)
async def test_a_refusal_of_the_sites_settings_names_the_setting_in_the_log(
    server, model, caplog, status, setting
):
    # The reader is told only that the assistant is unavailable; the log named no setting.
    server.enqueue(error_response(status, message="scripted refusal"))
    with pytest.raises(ModelError):
        await collect(model)
    [line] = [r.getMessage() for r in caplog.records if "not tried again" in r.getMessage()]
    assert "scripted refusal" in line
    if setting:
        assert line.endswith(f"; check {setting} (readers are told the assistant is unavailable)")
    else:
        assert line.endswith("not tried again")  # one question refused: no setting is wrong


@pytest.mark.asyncio
async def test_429_retry_after_is_honoured(server, model):
    server.enqueue(error_response(429, retry_after=0.3), text_response(["ok"]))
    started = time.monotonic()
    deltas, _ = await collect(model)
    assert deltas == ["ok"] and len(server.requests) == 2
    assert time.monotonic() - started >= 0.3  # the 0.01 s backoff would be far shorter


@pytest.mark.asyncio
async def test_retry_after_is_capped(server, model):
    model.retry_max_delay = 0.05
    server.enqueue(error_response(503, retry_after=120), text_response(["ok"]))
    started = time.monotonic()
    await collect(model)
    assert time.monotonic() - started < 2


@pytest.mark.asyncio
async def test_cancelling_the_consumer_mid_stream_closes_the_connection(server, model):
    server.enqueue(text_response(["first ", "second"], hang_after=2))
    seen = asyncio.Event()

    async def consume():
        async for item in model.stream(MESSAGES, None):
            if isinstance(item, TextDelta):
                seen.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(seen.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await server.wait_disconnected(2)


@pytest.mark.asyncio
async def test_unreachable_endpoint_is_a_model_error():
    with ScriptedOpenAIServer() as gone:
        url = gone.base_url
    chat = OpenAICompatModel(base_url=url, api_key="k", model="m", max_retries=1)
    chat.retry_base_delay = 0.01
    try:
        with pytest.raises(ModelError, match="could not be reached"):
            await collect(chat)
    finally:
        # Left to the garbage collector, its aiohttp session logged `ERROR asyncio: Unclosed
        # client session` (seen once in CI's output, after this test).
        await chat.aclose()


@pytest.mark.asyncio
async def test_a_consumer_that_stops_early_closes_the_connection(server, model):
    server.enqueue(text_response(["first ", "second"], hang_after=2))
    async with contextlib.aclosing(model.stream(MESSAGES, None)) as stream:
        async for item in stream:
            assert item == TextDelta("first ")
            break
    assert await server.wait_disconnected(2)


async def test_an_error_inside_the_stream_is_a_model_error(server, model):
    from testing_support.model_server import ScriptedResponse

    server.enqueue(ScriptedResponse(chunks=[{"error": {"message": "overloaded"}}]))

    with pytest.raises(ModelError, match="reported an error"):
        [item async for item in model.stream(MESSAGES, None)]
    assert len(server.requests) == 1  # output may have been shown: never retried


async def test_a_stream_that_breaks_off_is_a_model_error(server, model):
    response = text_response(["Hel", "lo", " there"])
    response.drop_after = 2
    server.enqueue(response)

    received = []
    with pytest.raises(ModelError, match="broke off"):
        async for item in model.stream(MESSAGES, None):
            received.append(item)
    assert received == [TextDelta("Hel")]


async def test_malformed_json_in_the_stream_is_a_model_error(server, model):
    from testing_support.model_server import ScriptedResponse

    server.enqueue(ScriptedResponse(chunks=["not an object"]))

    with pytest.raises(ModelError):
        [item async for item in model.stream(MESSAGES, None)]


class _Blocks:
    """A response body arriving in the given byte blocks, as a socket may cut it."""

    def __init__(self, *blocks: bytes) -> None:
        self.blocks = blocks

    async def iter_bytes(self):
        for block in self.blocks:
            yield block


async def test_sse_lines_cut_anywhere_by_the_network_are_joined_before_parsing():
    from agent.llm.openai_compat import _blocks

    body = (
        'data: {"choices":[{"index":0,"delta":{"content":"你好"}}]}\r\n\r\n'
        ": a comment\n\n"
        'data: {"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2}}\n\n'
        "data: [DONE]\n\n"
        'data: {"after": "done is ignored"}\n\n'
    ).encode()
    cut = body.index("好".encode()) + 1  # inside a UTF-8 character, inside a line
    blocks = _Blocks(body[:cut], body[cut:-40], body[-40:])
    chunks = [chunk async for block in _blocks(blocks) for chunk in block]

    assert [c.get("usage") for c in chunks] == [None, {"prompt_tokens": 1, "completion_tokens": 2}]
    assert chunks[0]["choices"][0]["delta"]["content"] == "你好"


async def test_a_chunk_orjson_refuses_but_json_allows_still_parses():
    from agent.llm.openai_compat import _blocks

    lone_surrogate = (
        b'data: {"model":"m\\ud83d","choices":[{"index":0,"delta":{"content":"\\ud83d"}}]}\n\n'
    )
    [[chunk]] = [block async for block in _blocks(_Blocks(lone_surrogate))]
    # Parsed, and scrubbed: a lone surrogate can be neither sent as UTF-8 nor stored. The text
    # keeps its half for _assemble, which joins it to the next chunk's (SplitPairs).
    assert chunk["model"] == "m\ufffd"
    assert chunk["choices"][0]["delta"]["content"] == "\ud83d"


async def test_the_stream_is_read_from_aiohttp_without_the_sdks_byte_iterators(
    server, model, monkeypatch
):
    import openai._response

    def unused(*args, **kwargs):
        raise AssertionError("the SDK's byte iterator was used")

    monkeypatch.setattr(openai._response.AsyncAPIResponse, "iter_bytes", unused)
    server.enqueue(text_response(["Hel", "lo"]))

    deltas, _ = await collect(model)

    assert "".join(deltas) == "Hello"


async def test_a_compressed_stream_is_decoded_by_the_sdk():
    import gzip

    body = gzip.compress(
        b'data: {"choices":[{"index":0,"delta":{"content":"Hello"}}]}\n\ndata: [DONE]\n\n'
    )

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = [int(line.split(b":")[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length")]  # fmt: skip
        await reader.readexactly(length[0])
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Encoding: gzip\r\n"
            b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body
        )
        await writer.drain()
        writer.close()

    listener = await asyncio.start_server(answer, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    chat = OpenAICompatModel(base_url=f"http://127.0.0.1:{port}/v1", api_key="", model="m")
    try:
        deltas, _ = await collect(chat)
    finally:
        await chat.aclose()
        listener.close()

    assert deltas == ["Hello"]


async def test_a_stream_that_goes_quiet_mid_answer_times_out_after_its_text(server):
    server.enqueue(text_response(["first ", "second"], hang_after=2))
    # A second, not 0.3 s: on a loaded machine (walk 22's run) the first chunk could miss a
    # 0.3 s wait and be retried. Only a floor on the time: a ceiling is a timed assertion.
    chat = OpenAICompatModel(base_url=server.base_url, api_key="", model="m", timeout=1.0)
    received = []
    started = time.monotonic()
    try:
        with pytest.raises(ModelError, match="timed out"):
            async for item in chat.stream(MESSAGES, None):
                received.append(item)
    finally:
        await chat.aclose()

    assert received == [TextDelta("first ")]
    assert time.monotonic() - started > 0.9
    assert len(server.requests) == 1  # text was shown: never retried


async def test_an_endpoint_that_sends_nothing_is_retried_then_times_out(server):
    server.enqueue(text_response(["never"], hang_after=0), text_response(["never"], hang_after=0))
    chat = OpenAICompatModel(
        base_url=server.base_url, api_key="", model="m", timeout=0.3, max_retries=1
    )
    try:
        with pytest.raises(ModelError, match="timed out"):
            await collect(chat)
    finally:
        await chat.aclose()

    assert len(server.requests) == 2


@pytest.mark.parametrize("http", ["aiohttp", "httpx"])
async def test_a_connection_dropped_after_the_request_is_retried_as_a_paid_attempt(server, http):
    # The endpoint read the whole request, then hung up: it may have worked on the prompt.
    server.enqueue(ScriptedResponse(hang_up=True), text_response(["fine"]))
    chat = OpenAICompatModel(base_url=server.base_url, api_key="", model="m", http=http)
    chat.retry_base_delay = 0.01
    try:
        items = [item async for item in chat.stream(MESSAGES, None)]
    finally:
        await chat.aclose()

    assert len(server.requests) == 2
    assert [type(item) for item in items] == [Retried, Waiting, TextDelta, ModelTurn]


@pytest.mark.parametrize("http", ["aiohttp", "httpx"])
async def test_a_refused_connection_is_retried_unpaid(http):
    with socket.socket() as unused:  # a port with nothing listening: nothing was sent
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    chat = OpenAICompatModel(
        base_url=f"http://127.0.0.1:{port}/v1", api_key="", model="m", http=http
    )
    chat.retry_base_delay = 0.01
    items = []
    try:
        with pytest.raises(ModelError, match="could not be reached"):
            async for item in chat.stream(MESSAGES, None):
                items.append(item)
    finally:
        await chat.aclose()

    assert [type(item) for item in items] == [Waiting, Waiting]  # three attempts, none charged


@pytest.mark.parametrize("http", ["aiohttp", "httpx"])
async def test_a_refused_connection_is_logged_as_refused_not_as_a_timeout(http, caplog):
    with socket.socket() as unused:  # a port with nothing listening
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    chat = OpenAICompatModel(
        base_url=f"http://127.0.0.1:{port}/v1", api_key="", model="m", http=http
    )
    chat.retry_base_delay = 0.01
    try:
        with pytest.raises(ModelError):
            await collect(chat)
    finally:
        await chat.aclose()

    retries = [r.getMessage() for r in caplog.records if "model call failed" in r.getMessage()]
    assert len(retries) == 3  # two retries, then the last attempt's "not tried again"
    assert retries[-1].endswith(", not tried again")
    # Before, through aiohttp: "model call failed (Request timed out.), retry 1 in 0.01s".
    assert not [line for line in retries if "timed out" in line.lower()]


async def test_a_reply_that_ran_out_its_whole_deadline_is_not_tried_again(server):
    # Kept alive by pings and never answering, it was cut at call_seconds and retried twice:
    # 3 x AGENT_MODEL_CALL_SECONDS (15 minutes at the default) before the visitor heard.
    server.enqueue(ScriptedResponse(chunks=[Comment()] * 100, delay=0.05))  # 5 s of pings
    chat = OpenAICompatModel(
        base_url=server.base_url, api_key="", model="m", timeout=0.3, call_seconds=0.6
    )
    started = time.monotonic()
    try:
        with pytest.raises(ModelError, match="timed out") as raised:
            await collect(chat)
    finally:
        await chat.aclose()

    assert raised.value.reason == "deadline"
    assert len(server.requests) == 1 and time.monotonic() - started < 3


async def test_a_slow_steady_stream_longer_than_the_timeout_is_not_cut(server):
    server.enqueue(text_response(["a"] * 10, delay=0.1))  # 1 s in all, 0.1 s apart
    chat = OpenAICompatModel(base_url=server.base_url, api_key="", model="m", timeout=0.35)
    try:
        deltas, _ = await collect(chat)
    finally:
        await chat.aclose()

    assert deltas == ["a"] * 10


def _content_lines(*pieces: str) -> bytes:
    return b"".join(
        b'data: {"choices":[{"index":0,"delta":{"content":"%s"}}]}\n\n' % piece.encode()
        for piece in pieces
    )


async def test_tokens_read_in_one_block_reach_the_loop_as_one_delta():
    from agent.llm.openai_compat import _assemble, _blocks

    body = _Blocks(_content_lines("a", "b", "c"), _content_lines("d") + b"data: [DONE]\n\n")

    items = [item async for item in _assemble(_blocks(body))]

    assert items[:2] == [TextDelta("abc"), TextDelta("d")]
    assert items[2].text == "abcd"


async def test_a_block_read_is_not_kept_while_the_next_one_is_awaited():
    # The reader waits a frame interval or more between reads; with 1,000 streams open, each
    # holding its last block (the bytes, their lines and the parsed chunks) was ~10 KiB a
    # connection.
    from agent.llm.openai_compat import _assemble, _blocks

    more = asyncio.Event()

    class Body:
        async def iter_bytes(self):
            yield _content_lines("first-block")
            await more.wait()
            yield _content_lines("second") + b"data: [DONE]\n\n"

    stream = _assemble(_blocks(Body()))
    assert await anext(stream) == TextDelta("first-block")
    waiting = asyncio.ensure_future(anext(stream))
    await asyncio.sleep(0)  # the reader now waits for the second block

    held = _reachable(stream)
    assert not [o for o in held if isinstance(o, bytes) and b"first-block" in o]
    assert not [o for o in held if isinstance(o, dict) and "choices" in o]
    more.set()
    assert await waiting == TextDelta("second")
    assert (await anext(stream)).text == "first-blocksecond"


def _reachable(root: object, depth: int = 8) -> list[object]:
    """What `root` holds, through generators' frames and containers (not modules or code)."""
    import gc
    import types

    skip = (types.ModuleType, type, types.FunctionType, types.CodeType)
    seen, found, layer = {id(root)}, [], [root]
    for _ in range(depth):
        next_layer = []
        for held in layer:
            for o in gc.get_referents(held):
                if not isinstance(o, skip) and id(o) not in seen:
                    seen.add(id(o))
                    next_layer.append(o)
        found += next_layer
        layer = next_layer
    return found


async def test_a_block_with_a_chunk_orjson_refuses_still_parses_every_chunk():
    from agent.llm.openai_compat import _blocks

    block = _content_lines("ok", "\\ud83d", "fine")  # one orjson call fails: one per line

    [chunks] = [chunks async for chunks in _blocks(_Blocks(block))]

    assert [c["choices"][0]["delta"]["content"] for c in chunks] == ["ok", "\ud83d", "fine"]


async def test_after_a_text_block_the_socket_rests_so_the_next_tokens_come_in_one_read(server):
    # 0.3 s apart (50 ms apart, a first read late by as much on a loaded machine took "ab"),
    # and a pause far longer than the stream: everything after "a" waits in the kernel.
    server.enqueue(text_response(list("abcde"), delay=0.3))
    chat = OpenAICompatModel(base_url=server.base_url, api_key="", model="m", read_pause=3.0)
    try:
        deltas, turn = await collect(chat)
    finally:
        await chat.aclose()

    assert deltas == ["a", "bcde"]  # the first token at once (time to first token), then one read
    assert turn.text == "abcde"


async def test_a_stream_stopped_while_its_socket_rests_leaves_the_model_usable(server):
    # 2 s apart: 50 ms apart, a first read late by as much on a loaded machine took both pieces.
    server.enqueue(text_response(["first ", "second"], delay=2.0))
    server.enqueue(text_response(["again"]))
    chat = OpenAICompatModel(base_url=server.base_url, api_key="", model="m", read_pause=30.0)
    try:
        async with contextlib.aclosing(chat.stream(MESSAGES, None)) as stream:
            assert await anext(stream) == TextDelta("first ")  # the socket now rests 30 s
        deltas, _ = await asyncio.wait_for(collect(chat), 10)
    finally:
        await chat.aclose()

    assert deltas == ["again"]
