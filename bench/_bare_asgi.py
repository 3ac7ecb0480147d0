"""A bare ASGI chat for bench/chat_load.py: the transport's floor, without Django or the agent.

Per WebSocket message it streams the model server's answer (raw asyncio socket, orjson) and
sends one `text` frame per delta, then `done`: the same frames as the real chat's per-delta
path, so the CPU it takes is what daphne itself costs per frame.

    python -m daphne -b 127.0.0.1 -p PORT _bare_asgi:app     (from bench/; OPENAI_BASE_URL set)
"""

from __future__ import annotations

import asyncio
import os
from urllib.parse import urlsplit

import orjson

UPSTREAM = urlsplit(os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:1/v1"))


async def app(scope: dict, receive, send) -> None:
    if scope["type"] == "http":  # readiness probe
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})
    elif scope["type"] == "websocket":
        await _websocket(receive, send)
    elif scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})


async def _websocket(receive, send) -> None:
    while True:
        message = await receive()
        if message["type"] == "websocket.connect":
            await send({"type": "websocket.accept"})
        elif message["type"] == "websocket.receive":
            key = orjson.loads(message.get("text") or message.get("bytes"))["content"]
            await _answer(key, send)
        else:
            return


async def _answer(key: str, send) -> None:
    body = orjson.dumps({"stream": True, "messages": [{"role": "user", "content": key}]})
    reader, writer = await asyncio.open_connection(UPSTREAM.hostname, UPSTREAM.port)
    head = f"POST {UPSTREAM.path}/chat/completions HTTP/1.1\r\nhost: x\r\n"
    head += f"content-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n"
    writer.write(head.encode() + body)
    try:
        # Chunk-size lines never start with `data:`, so the chunked framing can be skipped.
        while line := await reader.readline():
            if not line.startswith(b"data: "):
                continue
            data = line[6:].strip()
            if data == b"[DONE]":
                break
            for choice in orjson.loads(data).get("choices") or []:
                content = (choice.get("delta") or {}).get("content")
                if content:
                    frame = orjson.dumps({"type": "text", "content": content}).decode()
                    await send({"type": "websocket.send", "text": frame})
        await send({"type": "websocket.send", "text": '{"type":"done"}'})
    finally:
        writer.close()
