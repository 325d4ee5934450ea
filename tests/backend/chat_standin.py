"""A local stand-in for an OpenAI-compatible model: it speaks the chat-completions HTTP API
(``POST /v1/chat/completions``) and answers from a script, so the agent loop's real client
code path (the ``openai`` package over HTTP) is exercised with no mocks inside the backend.

Each script step is a function of the request body returning either an assistant message
(``say``/``call``) or an HTTP error (``http_error``). Every request body and its headers are
kept for assertions.

A request with ``stream: true`` (what the agent loop sends) is answered on the real wire
format of streamed chat completions: server-sent events, one ``chat.completion.chunk`` per
``data:`` line, the text in ``delta.content`` pieces, each tool call as ``delta.tool_calls``
items (``index``, then ``id``, ``type`` and ``function.name`` once, ``function.arguments`` in
pieces), ``finish_reason`` in the last chunk, and ``data: [DONE]``. ``pieces`` splits the text
as the step says; ``pause_s`` waits between chunks; ``hold`` (a ``threading.Event``) stops the
stream after its first piece until it is set, for a Stop mid-stream. ``streams_cut`` counts
streams the client closed before their end.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

Step = Callable[[dict[str, Any]], dict[str, Any]]


def say(
    text: str,
    *,
    pieces: list[str] | None = None,
    pause_s: float = 0.0,
    hold: threading.Event | None = None,
) -> Step:
    """An answer; streamed as ``pieces`` (default: word by word)."""

    def step(body: dict[str, Any]) -> dict[str, Any]:
        return {
            "message": {"role": "assistant", "content": text},
            "finish": "stop",
            "pieces": pieces,
            "pause_s": pause_s,
            "hold": hold,
        }

    return step


def call(name: str, arguments: dict[str, Any] | str | Callable[[dict[str, Any]], Any]) -> Step:
    """A tool call; ``arguments`` may be computed from the request (e.g. the last snapshotId)."""

    def step(body: dict[str, Any]) -> dict[str, Any]:
        args = arguments(body) if callable(arguments) else arguments
        return {
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"call_{len(body['messages'])}",
                        "type": "function",
                        "function": {
                            "name": name,
                            "arguments": args if isinstance(args, str) else json.dumps(args),
                        },
                    }
                ],
            },
            "finish": "tool_calls",
        }

    return step


def http_error(status: int) -> Step:
    return lambda body: {"status": status}


def last_tool_result(body: dict[str, Any]) -> dict[str, Any]:
    """The PageToolResult JSON inside the newest tool message (between notice and end tag)."""
    content = next(m for m in reversed(body["messages"]) if m["role"] == "tool")["content"]
    return json.loads(content.splitlines()[2])


class ChatCompletionsStandIn:
    def __init__(self, script: list[Step]) -> None:
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.port = 0
        self.streams_cut = 0
        self.cut_at = 0.0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def _completions(self, request: Request) -> Response:
        body = await request.json()
        self.requests.append(body)
        self.headers.append(dict(request.headers))
        if not self.script:
            return JSONResponse({"error": {"message": "script exhausted"}}, status_code=500)
        outcome = self.script.pop(0)(body)
        if "status" in outcome:
            return JSONResponse(
                {"error": {"message": "scripted failure", "type": "server_error"}},
                status_code=outcome["status"],
            )
        if body.get("stream"):
            return StreamingResponse(
                self._stream(body, outcome), media_type="text/event-stream"
            )
        return JSONResponse(
            {
                "id": f"chatcmpl-{len(self.requests)}",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": outcome["message"],
                        "finish_reason": outcome["finish"],
                    }
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
        )

    async def _stream(self, body: dict[str, Any], outcome: dict[str, Any]) -> Any:
        """The step as server-sent ``chat.completion.chunk`` events (module docstring)."""
        message = outcome["message"]
        number = len(self.requests)

        def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
            data = {
                "id": f"chatcmpl-{number}",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": body["model"],
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
            return f"data: {json.dumps(data)}\n\n"

        finished = False
        try:
            yield chunk({"role": "assistant", "content": ""})
            text = message.get("content") or ""
            pieces = outcome.get("pieces") or re.split(r"(?<= )", text)
            assert "".join(pieces) == text, "the pieces must make up the text"
            hold: threading.Event | None = outcome.get("hold")
            for index, piece in enumerate(pieces if text else []):
                yield chunk({"content": piece})
                if index == 0 and hold is not None:
                    while not hold.is_set():
                        await asyncio.sleep(0.02)
                if outcome.get("pause_s"):
                    await asyncio.sleep(outcome["pause_s"])
            for index, call in enumerate(message.get("tool_calls") or []):
                arguments = call["function"]["arguments"]
                yield chunk({"tool_calls": [{
                    "index": index, "id": call["id"], "type": "function",
                    "function": {"name": call["function"]["name"], "arguments": ""},
                }]})
                third = max(1, len(arguments) // 3)
                for start in range(0, len(arguments), third):
                    yield chunk({"tool_calls": [{
                        "index": index, "function": {"arguments": arguments[start:start + third]},
                    }]})
            yield chunk({}, outcome["finish"])
            yield "data: [DONE]\n\n"
            finished = True
        finally:
            if not finished:
                self.streams_cut += 1
                self.cut_at = time.monotonic()

    def start(self) -> ChatCompletionsStandIn:
        app = Starlette(routes=[Route("/v1/chat/completions", self._completions, methods=["POST"])])
        self._server = uvicorn.Server(
            uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
        )
        ready: Future[None] = Future()

        def run() -> None:
            async def serve() -> None:
                assert self._server is not None
                task = asyncio.get_running_loop().create_task(self._server.serve())
                while not self._server.started and not task.done():
                    await asyncio.sleep(0.01)
                ready.set_result(None)
                await task

            asyncio.run(serve())

        self._thread = threading.Thread(target=run, name="chat-standin", daemon=True)
        self._thread.start()
        ready.result(timeout=10)
        self.port = self._server.servers[0].sockets[0].getsockname()[1]
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
