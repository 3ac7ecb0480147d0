"""ChatModel over any OpenAI-compatible Chat Completions endpoint, streaming."""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import socket
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import openai
import orjson

from agent.exceptions import ModelError
from agent.llm.base import (
    ArgumentsDelta,
    ModelTurn,
    ReasoningDelta,
    Retried,
    TextDelta,
    ToolCall,
    Usage,
    Waiting,
)
from agent.llm.idle import IdleTimeout
from agent.llm.pacing import ReadPacer
from agent.text import SplitPairs, text_scrub
from ops.logs import log_text
from ops.metrics import model_retry_count
from ops.tracing import chat_retry_note

logger = logging.getLogger(__name__)

RETRYABLE_STATUS = frozenset({408, 409, 429})
# A delta of a read block holds about this many characters (~20 tokens): at 50-100 tokens a
# second a 50 ms block is one delta, and a burst still reaches the budget check in steps.
DELTA_CHARS = 64
# The most tokens one call's usage may report; more is not a count (five steps' worth must still
# fit the token columns' 32-bit integers).
MAX_REPORTED_TOKENS = 10_000_000
# Where servers stream a reasoning model's thinking: DeepSeek, vLLM and LiteLLM say
# `reasoning_content`, Ollama, OpenRouter and newer vLLM `reasoning`.
REASONING_FIELDS = ("reasoning_content", "reasoning")
# What a model writes around each tool call whatever its name and arguments, counted as the
# text a Hermes-style chat template (Qwen, and others served by vLLM or Ollama) makes it write:
# about 11 tokens by the loop's estimate, as a real tokenizer counts that framing and the
# call's JSON keys.
CALL_FRAMING = "<tool_call></tool_call>"
# The longest line of an event stream read: a chunk is a few hundred bytes, and one that
# carries a whole tool call (as some servers send it) is within a turn's token budget, whose
# largest, AGENT_TOKENS_PER_CONVERSATION's 60,000, is about 240 kB of text.
MAX_LINE_BYTES = 1 << 20


class OpenAICompatModel:
    """Streams Chat Completions; retries 429/5xx/connection errors before any output."""

    offline = False
    retry_base_delay = 0.5  # seconds, doubled per retry when the server gives no Retry-After
    retry_max_delay = 5.0  # cap, also applied to Retry-After: a visitor is waiting

    def __init__(
        self,
        *,
        base_url: str | None,
        api_key: str | None,
        model: str,
        timeout: float = 60.0,
        call_seconds: float | None = None,
        max_retries: int = 2,
        http: str = "aiohttp",
        read_pause: float = 0.0,
        max_output_tokens: int | None = None,
    ) -> None:
        self.name = model
        # Sent as `max_completion_tokens`: the most one call can be billed for, thinking
        # included (the loop charges a stopped call this much). None: the server's own limit.
        self.max_output_tokens = max_output_tokens
        self.max_retries = max_retries
        self.timeout = timeout
        # A whole streamed reply's limit, however lively the stream (IdleTimeout's deadline).
        self.call_seconds = call_seconds
        # Seconds the model's socket rests after a text block (agent/llm/pacing.py): the
        # text frame interval, so a frame's tokens are read in one go. 0: read each at once.
        self.read_pause = read_pause
        # No per-read timeout in the HTTP client: IdleTimeout applies it per stream, lazily.
        limits = openai.Timeout(timeout, connect=5.0, read=None)
        self._client = openai.AsyncOpenAI(
            base_url=base_url or None,
            api_key=api_key or "not-needed",
            timeout=limits,
            max_retries=0,  # retried here, where we know whether output was already streamed
            http_client=_http_client(http, limits),
        )

    async def aclose(self) -> None:
        await self._client.close()

    async def stream(
        self, messages: list[dict], tools: list[dict] | None
    ) -> AsyncIterator[TextDelta | ArgumentsDelta | ReasoningDelta | Retried | Waiting | ModelTurn]:
        """Yield text, argument and reasoning deltas (and Retried before asking a silent
        endpoint again), then one ModelTurn; raise ModelError on endpoint failure."""
        request: dict[str, Any] = {
            "model": self.name,
            "messages": messages,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if tools:
            request["tools"] = tools
        if self.max_output_tokens:
            request["max_completion_tokens"] = self.max_output_tokens
        attempt = 0
        while True:
            yielded = False
            tried_at = time.monotonic()
            try:
                # The raw response, parsed here into plain dicts: the SDK's per-chunk pydantic
                # objects cost more CPU than all else a streamed token does (bench/chat_load).
                streaming = self._client.chat.completions.with_streaming_response
                async with IdleTimeout(self.timeout, self.call_seconds) as idle:
                    async with streaming.create(**request) as response:
                        # Leaving the block closes the HTTP response, also on cancellation.
                        pacer = ReadPacer(_transport(response), self.read_pause)
                        try:
                            async for item in _assemble(_blocks(response, idle), pacer):
                                yielded = True
                                yield item
                        finally:
                            pacer.release()
                return
            except (openai.APIStatusError, openai.APIConnectionError) as exc:
                reason = failure_reason(exc)
                if yielded or attempt >= self.max_retries or not _retryable(exc):
                    # The endpoint's own words, as a retry's line gives them: a 401 from a
                    # rotated key was retried never and said only the visitor's sentence
                    # ("rejected this site's credentials"), not which key or why.
                    logger.warning(
                        "model call failed (%s), not tried again%s",
                        _described(exc),
                        _SETUP_ADVICE.get(reason, ""),
                    )
                    worked = isinstance(exc, openai.APIConnectionError) and request_sent(exc)
                    raise ModelError(_visitor_message(exc), reason, worked=worked) from exc
                attempt += 1
                delay = self._delay(exc, attempt)
                model_retry_count(reason=reason)
                chat_retry_note(reason=reason, attempt_ms=_since_ms(tried_at), backoff_s=delay)
                # The endpoint's error may quote what it was sent (the visitor's words): escaped,
                # it cannot begin a log line of its own.
                logger.warning(
                    "model call failed (%s), retry %d in %.2fs", _described(exc), attempt, delay
                )
                if isinstance(exc, openai.APIConnectionError) and request_sent(exc):
                    # Dropped once the request was out: the endpoint may have had the whole
                    # prompt and worked on it, as with a silent one (a crash, a proxy's cut).
                    # Uncounted, each drop was a prompt sent for free.
                    yield Retried()
                yield Waiting(delay)
                await asyncio.sleep(delay)
            except TimeoutError as exc:  # IdleTimeout: the endpoint went quiet, or never ended
                # A reply that ran out its whole AGENT_MODEL_CALL_SECONDS (kept alive by pings)
                # is not tried again: each retry held the visitor another 300 s, 15 min in all.
                if yielded or attempt >= self.max_retries or idle.reason == "deadline":
                    # The endpoint had the prompt all along: thinking unseen, it was paid.
                    raise ModelError(
                        "The language model timed out. Please try again.", idle.reason, worked=True
                    ) from exc
                attempt += 1
                model_retry_count(reason=idle.reason)
                # No wait before this one: the silence itself was the time lost.
                chat_retry_note(reason=idle.reason, attempt_ms=_since_ms(tried_at), backoff_s=0.0)
                logger.warning("model call timed out (%s), retry %d", exc, attempt)
                # The endpoint had the prompt and was working on it: that attempt was paid for.
                # Counted as one call, a question that kept the model thinking past the timeout
                # cost three prompts (and their thinking) and was charged one.
                yield Retried()
            except (openai.OpenAIError, ValueError) as exc:  # ValueError: malformed JSON chunk
                logger.warning("model call failed: %r", exc)
                raise ModelError(_visitor_message(exc), failure_reason(exc)) from exc
            except ModelError:
                raise
            except Exception as exc:  # the HTTP client's own errors when a stream breaks off
                logger.warning("model stream broke off: %r", exc)
                raise ModelError(
                    "The language model’s answer broke off. Please try again.", "broke_off"
                ) from exc

    def _delay(self, exc: Exception, attempt: int) -> float:
        retry_after = _retry_after(exc)
        if retry_after is None:
            retry_after = self.retry_base_delay * 2 ** (attempt - 1)
        return max(0.0, min(retry_after, self.retry_max_delay))


def _since_ms(started: float) -> float:
    return (time.monotonic() - started) * 1000


def _http_client(kind: str, timeout: openai.Timeout) -> Any:
    """The SDK's aiohttp transport (`openai[aiohttp]`): its C parser reads a streamed token
    for a fraction of the CPU of httpx's pure-Python h11 (bench/chat_load.py). "httpx" keeps
    the SDK's default."""
    if kind == "httpx":
        return None
    if kind != "aiohttp":
        raise ValueError(f"unknown model HTTP client {kind!r}; use aiohttp or httpx")
    return openai.DefaultAioHttpClient(timeout=timeout)


async def _blocks(response: Any, idle: IdleTimeout | None = None) -> AsyncIterator[list[dict]]:
    """The `data:` payloads of a Chat Completions event stream, as dicts, until `[DONE]`: one
    list per block of bytes read (all the complete lines that block finished).

    Lines are split from the raw bytes and parsed with orjson: httpx's text and line
    decoding plus json.loads were a third of the server's CPU per streamed token.

    Raises:
        ValueError: a line longer than MAX_LINE_BYTES (the turn ends as an invalid response).
    """
    carry = bytearray()  # the unfinished last line
    async for block in _body(response):
        if idle is not None:
            idle.touch()
        end = block.rfind(b"\n")
        if end < 0:
            # Only a newline finishes a line: the block is appended, never re-read. The whole
            # buffer was joined and split again per block, so a line that never ended cost the
            # square of its length (96 MB: 23 CPU-seconds of the event loop) and all of it in
            # memory, none of it counted against the turn's budget.
            carry += block
            _line_check(len(carry))
            continue
        payloads, _, done = _data_lines(bytes(carry) + block[: end + 1])
        carry = bytearray(block[end + 1 :])
        _line_check(len(carry))
        if payloads:
            yield _parse_all(payloads)
        if done:
            return
        # Not kept while the next block is awaited (a frame interval or more, the socket
        # resting): with 1,000 streams open, each held its last block, ~1.5 KiB a token.
        del block, payloads


def _line_check(size: int) -> None:
    if size > MAX_LINE_BYTES:
        raise ValueError(f"a stream line is longer than {MAX_LINE_BYTES:,} bytes")


def _data_lines(data: bytes) -> tuple[list[bytes], bytes, bool]:
    """The `data:` payloads of the complete lines in `data`, the incomplete last line (it
    waits for the next block), and whether `[DONE]` came (what follows it is ignored)."""
    lines = data.split(b"\n")
    carry = lines.pop()
    # Blank separators, comments and `event:` lines carry nothing.
    payloads = [line[5:].strip() for line in lines if line.startswith(b"data:")]
    if b"[DONE]" in payloads:
        return payloads[: payloads.index(b"[DONE]")], carry, True
    return payloads, carry, False


def _aiohttp_body(response: Any) -> Any:
    """The aiohttp response under the SDK's aiohttp transport, when uncompressed, else None."""
    http = getattr(response, "http_response", None)
    transport_stream = getattr(getattr(http, "stream", None), "_stream", None)
    raw = getattr(transport_stream, "_aiohttp_response", None)
    if raw is None or http.headers.get("content-encoding", "identity") != "identity":
        return None
    return raw


def _transport(response: Any) -> Any:
    """The socket's asyncio transport, for ReadPacer (None: read as it comes)."""
    connection = getattr(_aiohttp_body(response), "connection", None)
    return getattr(connection, "transport", None)


def _body(response: Any) -> AsyncIterator[bytes]:
    """The response body: straight from aiohttp when the SDK's aiohttp transport carries it
    uncompressed, else the SDK's decoded bytes.

    Each streamed token otherwise climbs five more async generators (the transport's, httpx's
    bound, raw and decoded streams, the SDK's) and httpx's decoder: about a quarter of the
    web process's CPU for reading the model (bench/chat_load.py --profile). Leaving the SDK's
    `async with` still closes the aiohttp response.
    """
    raw = _aiohttp_body(response)
    if raw is None:
        return response.iter_bytes()
    return raw.content.iter_any()


def _parse_all(payloads: list[bytes]) -> list[dict]:
    """Several payloads in one orjson call (a block holds a frame's worth of tokens); any that
    orjson refuses, or a count that does not match, falls back to one parse per payload."""
    if len(payloads) > 1:
        try:
            chunks = orjson.loads(b"[" + b",".join(payloads) + b"]")
        except orjson.JSONDecodeError:
            chunks = None
        if chunks is not None and len(chunks) == len(payloads):
            if any(b"\\u" in data for data in payloads):
                chunks = [_scrubbed(chunk) for chunk in chunks]
            return [_checked(chunk) for chunk in chunks]
    return [_parse(data) for data in payloads]


def _parse(data: bytes) -> dict:
    try:
        chunk = orjson.loads(data)
    except orjson.JSONDecodeError:
        # What orjson refuses but Python's parser takes: an escaped lone surrogate, or one
        # written as raw bytes (`\xed\xa0\x80`, WTF-8), which json.loads decodes with
        # "surrogatepass". Scrubbed only when escaped, the raw one reached the visitor's frame,
        # whose encoding failed: the socket's turn ended without a last event (every later
        # message "busy") and the SSE stream broke off.
        return _checked(_scrubbed(_loads_lenient(data)))
    if b"\\u" in data:  # orjson's strings are valid UTF-8: only an escape can smuggle NUL in
        chunk = _scrubbed(chunk)
    return _checked(chunk)


def _scrubbed(chunk: Any) -> Any:
    """`text_scrub` over a chunk, but its text deltas as sent: an emoji's halves may come in two
    chunks, which `_assemble` joins (SplitPairs) before it scrubs what is left."""
    sent = [delta.get("content") for delta in _deltas_of(chunk)]
    chunk = text_scrub(chunk)
    for delta, content in zip(_deltas_of(chunk), sent, strict=True):
        if isinstance(content, str):
            delta["content"] = content
    return chunk


def _deltas_of(chunk: Any) -> list[dict]:
    choices = chunk.get("choices") if isinstance(chunk, dict) else None
    if not isinstance(choices, list):
        return []
    return [c["delta"] for c in choices if isinstance(c, dict) and isinstance(c.get("delta"), dict)]


def _loads_lenient(data: bytes) -> Any:
    """A payload orjson refused: WTF-8 surrogates decoded as such, and bytes that are no UTF-8
    at all (a stray byte, an overlong form, a character cut short) as U+FFFD.

    Such a byte raised UnicodeDecodeError, taken for a malformed reply: the turn ended
    `model_error` mid-answer and what the model had written was lost.

    Raises:
        ValueError: the payload is not JSON.
    """
    try:
        return json.loads(data)
    except UnicodeDecodeError:
        return json.loads(data.decode("utf-8", "replace"))


def _checked(chunk: Any) -> dict:
    if not isinstance(chunk, dict):
        raise ValueError("stream chunk is not a JSON object")
    if chunk.get("error"):
        # Some servers report failures inside a 200 stream.
        raise ModelError("The language model reported an error while answering.", "stream_error")
    return chunk


async def _assemble(
    blocks: AsyncIterator[list[dict]], pacer: ReadPacer | None = None
) -> AsyncIterator[TextDelta | ArgumentsDelta | ReasoningDelta | ModelTurn]:
    """Turn chunks into deltas and one ModelTurn, joining tool-call fragments by index.

    A block's text goes on in deltas of about DELTA_CHARS: the few tokens of one read are one
    delta, so the loop, the budget check and the coalescer run once for them, not once per
    token. Tool-call argument fragments go on one by one, for the loop to count as they arrive;
    a reasoning model's thinking (billed, never shown) goes on first, in deltas as text does.
    """
    text: list[str] = []
    calls: dict[int, dict] = {}
    slot_of: dict[int, int] = {}  # the server's index -> our slot
    pairs = SplitPairs()
    usage: Usage | None = None
    model = ""
    async for chunks in blocks:
        block = _Block(calls, slot_of, pairs, usage=usage, model=model)
        block.read(chunks)
        del chunks  # not kept while the next block is awaited (see _blocks)
        usage, model = block.usage, block.model
        for thought in _deltas(block.thinking) if block.thinking else []:  # in steps, as text is
            yield ReasoningDelta(thought)
        if block.pieces:
            for piece in _deltas(block.pieces):
                text.append(piece)
                yield TextDelta(piece)
            if pacer is not None:
                pacer.hold()  # the delta was sent (or waits for its frame): rest until then
        for argument in block.arguments:  # counted by the loop as they arrive, like text
            yield ArgumentsDelta(argument)
    if rest := pairs.rest():
        text.append(rest)
        yield TextDelta(rest)
    tool_calls = [
        ToolCall(
            id=c["id"] or f"call_{uuid.uuid4().hex[:12]}",
            name=c["name"],
            arguments="".join(c["arguments"]),
        )
        for _, c in sorted(calls.items())
    ]
    yield ModelTurn(text="".join(text), tool_calls=tool_calls, usage=usage, model=str(model))


class _Block:
    """What one block of parsed chunks carried: text, thinking, tool-call fragments (added to
    `calls` as they come), and the usage and model name so far; not the chunks themselves."""

    __slots__ = ("arguments", "calls", "model", "pairs", "pieces", "slot_of", "thinking", "usage")

    def __init__(
        self,
        calls: dict[int, dict],
        slot_of: dict[int, int],
        pairs: SplitPairs,
        *,
        usage: Usage | None,
        model: str,
    ) -> None:
        self.calls, self.slot_of, self.pairs = calls, slot_of, pairs
        self.usage, self.model = usage, model
        self.pieces: list[str] = []
        self.arguments: list[str] = []  # per fragment: a budget cut stops between them
        self.thinking: list[str] = []

    def read(self, chunks: list[dict]) -> None:
        for chunk in chunks:
            self.model = self.model or chunk.get("model") or ""
            if chunk.get("usage"):
                self.usage = _usage(chunk["usage"])
            for choice in chunk.get("choices") or []:
                delta = choice.get("delta")
                if not delta:
                    continue
                content = self.pairs.joined(_text(delta.get("content"))) + _refusal(delta)
                if content:
                    self.pieces.append(content)
                self.thinking += _thinking(delta)
                for fragment in delta.get("tool_calls") or []:
                    sent = _add_fragment(self.calls, self.slot_of, fragment)
                    if sent:
                        self.arguments.append(sent)


def _deltas(pieces: list[str]) -> list[str]:
    """A block's text as deltas of about DELTA_CHARS: one for the few tokens of a frame's
    interval, several for a burst, so a token budget still cuts a burst near its end."""
    if len(pieces) == 1:
        return pieces
    deltas, run, size = [], [], 0
    for piece in pieces:
        run.append(piece)
        size += len(piece)
        if size >= DELTA_CHARS:
            deltas.append("".join(run))
            run, size = [], 0
    if run:
        deltas.append("".join(run))
    return deltas


def _usage(counts: Any) -> Usage | None:
    """The usage an endpoint reported, or None (the loop then charges its own estimate) when
    it is not two counts: a negative one gave tokens back to the budgets, a string ended the
    turn as internal, and one past the database's integers made the turn unsavable."""

    def count(name: str) -> int | None:
        value = counts.get(name) or 0
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        ok = type(value) is int and 0 <= value <= MAX_REPORTED_TOKENS
        return value if ok else None

    if not isinstance(counts, dict):
        return None
    prompt, completion = count("prompt_tokens"), count("completion_tokens")
    if prompt is None or completion is None:
        logger.warning("model usage is not a pair of token counts: %r", counts)
        return None
    return Usage(prompt, completion)


def _thinking(delta: dict) -> list[str]:
    """The thinking a delta carries, under whichever name its server uses (not a string: none,
    as the field is not part of the protocol the answer needs), and a legacy `function_call`'s
    name and arguments: never run (the request offers `tools`), but written by the model and
    billed, so counted as thinking is. Uncounted, 2,000 of them charged a turn with 3,000 tokens
    left 41,000."""
    found = [t for name in REASONING_FIELDS if isinstance(t := delta.get(name), str) and t]
    legacy = delta.get("function_call")
    if isinstance(legacy, dict):
        found += [
            t for name in ("name", "arguments") if isinstance(t := legacy.get(name), str) and t
        ]
    return found


def _refusal(delta: dict) -> str:
    """OpenAI's refusal message (`refusal`, beside `content`): the model's answer, written for
    the visitor. It was read nowhere: the visitor saw an empty answer, and a refusal of any
    length went uncounted (2,000 chunks: 41,000 tokens charged with 3,000 left)."""
    refusal = delta.get("refusal")
    return refusal if isinstance(refusal, str) else ""


def _text(value: Any) -> str:
    """A text field of a chunk (content, an id, a name, arguments): "" when absent.

    Raises:
        ValueError: anything but a string; the turn ends as an invalid response. Passed on, a
            number for an id or a name broke the turn's record after its end: never saved, and
            its locks renewed for as long as the process lived.
    """
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValueError(f"a stream chunk's text field is a {type(value).__name__}")
    return value


def _add_fragment(calls: dict[int, dict], slot_of: dict[int, int], fragment: dict) -> str:
    """Add one streamed tool-call fragment to its call; the text it carried, for the budget.

    The id and the name count as well as the arguments: a reply of 1,500 calls without
    arguments ("list the articles for each of these tags") was counted as 1,000 tokens and
    billed 30,000, ten times what the turn had left. So does each call's framing
    (CALL_FRAMING): a fragment with nothing but a new index opened a call counted as nothing,
    and 5,000 of them were 5,000 calls, each shown and saved, on a turn charged 51,000 tokens
    with 3,000 left.
    """
    index = fragment.get("index")
    index = index if index is not None else max(slot_of, default=0)
    slot = slot_of.get(index)
    fragment_id = _text(fragment.get("id"))
    # Some servers reuse one index for several complete calls; a new id means a new call.
    opened = ""
    if slot is None or (fragment_id and calls[slot]["id"] and fragment_id != calls[slot]["id"]):
        slot = slot_of[index] = len(calls)
        calls[slot] = {"id": "", "name": "", "arguments": []}
        opened = CALL_FRAMING
    call = calls[slot]
    if fragment_id:
        call["id"] = fragment_id
    function = fragment.get("function") or {}
    name = _text(function.get("name"))
    if name and not call["name"]:
        call["name"] = name
    arguments = _text(function.get("arguments"))
    if arguments:
        call["arguments"].append(arguments)
    return opened + fragment_id + name + arguments


def _retryable(exc: Exception) -> bool:
    if isinstance(exc, openai.APIConnectionError):
        return True
    status = getattr(exc, "status_code", 0)
    return status in RETRYABLE_STATUS or status >= 500


def _retry_after(exc: Exception) -> float | None:
    """Seconds from Retry-After-Ms / Retry-After (seconds or HTTP date), if present."""
    response = getattr(exc, "response", None)
    if response is None:
        return None
    headers = response.headers
    try:
        if "retry-after-ms" in headers:
            return float(headers["retry-after-ms"]) / 1000
        if "retry-after" in headers:
            value = headers["retry-after"]
            try:
                return float(value)
            except ValueError:
                when = email.utils.parsedate_to_datetime(value)
                return when.timestamp() - time.time()
    except (TypeError, ValueError, OverflowError):
        return None
    return None


def failure_reason(exc: Exception) -> str:
    """What failed, in a word from a closed set: the metrics' label and the span's error.type
    (the visitor's message says it in a sentence; HTTP 500 and a garbled stream read alike)."""
    if isinstance(exc, openai.APITimeoutError) and not _refused(exc):
        return "timeout"
    if isinstance(exc, openai.APIConnectionError):
        return "connection"
    if isinstance(exc, openai.RateLimitError):
        return "rate_limited"
    if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
        return "auth"
    if isinstance(exc, openai.NotFoundError):
        return "not_found"  # a model name or a base URL the endpoint does not know
    if isinstance(exc, openai.APIStatusError):
        return "http_5xx" if exc.status_code >= 500 else "http_4xx"
    return "bad_response"


# What the operator reads after a refusal of the site's settings: the reader is told only that
# the assistant is unavailable, so the log must say which setting (agent.events.SETUP_FAILURES).
_SETUP_ADVICE = {
    "auth": "; check OPENAI_API_KEY (readers are told the assistant is unavailable)",
    "not_found": (
        "; check AGENT_MODEL and OPENAI_BASE_URL (readers are told the assistant is unavailable)"
    ),
}


def _described(exc: Exception) -> str:
    """The failure for the log, escaped. The SDK's aiohttp transport calls a refused connection
    a timeout, and its "Request timed out." sent an operator looking for a slow endpoint when
    nothing listened at OPENAI_BASE_URL."""
    if isinstance(exc, openai.APITimeoutError) and _refused(exc):
        return "connection refused"
    return log_text(str(exc))


def _visitor_message(exc: Exception) -> str:
    """A short message without secrets or provider details."""
    if isinstance(exc, openai.APITimeoutError) and not _refused(exc):
        return "The language model timed out. Please try again."
    if isinstance(exc, openai.APIConnectionError):
        return "The language model could not be reached. Please try again later."
    if isinstance(exc, openai.RateLimitError):
        return "The language model is busy (rate limited). Please try again shortly."
    if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
        return "The language model rejected this site’s credentials."
    if isinstance(exc, openai.APIStatusError):
        return f"The language model returned an error (HTTP {exc.status_code})."
    return "The language model returned an invalid response."


# Failures that happen before a request leaves, by their class's name (neither client is
# imported here): aiohttp's connect failures, and httpcore's (the layer that knows the phase;
# the SDK's aiohttp transport calls any aiohttp connection error httpx's ConnectTimeout, a
# server that hung up on a sent request included).
_UNSENT = {
    "aiohttp": frozenset({"ClientConnectorError", "ConnectionTimeoutError"}),
    "httpcore": frozenset({"ConnectError", "ConnectTimeout", "PoolTimeout"}),
}


def request_sent(exc: BaseException) -> bool:
    """Whether a failed call may have reached the endpoint: anything but a failure to connect
    (refused, unresolved, timed out, no connection free). In doubt it counts as sent: the
    budget errs on the side that cannot be spent for free."""
    for seen in _chain(exc):
        if isinstance(seen, ConnectionRefusedError | socket.gaierror):
            return False
        module = type(seen).__module__.split(".")[0].rstrip("0123456789")  # httpcore2 too
        names = {kind.__name__ for kind in type(seen).__mro__}
        if names & _UNSENT.get(module, frozenset()):
            return False
    return True


def _refused(exc: BaseException) -> bool:
    """A refused connection under the timeout: the aiohttp transport maps both to a timeout."""
    return any(
        isinstance(seen, ConnectionRefusedError) or type(seen).__name__ == "ClientConnectorError"
        for seen in _chain(exc)
    )


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """An exception and what caused it, in turn; at most 16 (a chain, not a cycle)."""
    seen: BaseException | None = exc
    for _ in range(16):
        if seen is None:
            return
        yield seen
        seen = seen.__cause__ or seen.__context__
