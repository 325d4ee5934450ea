"""A local stand-in for an OpenAI-compatible model: it speaks the chat-completions HTTP API
(``POST /v1/chat/completions``) and answers from a script, so the agent loop's real client
code path (the ``openai`` package over HTTP) is exercised with no mocks inside the backend.

Each script step is a function of the request body returning either an assistant message
(``say``/``call``) or an HTTP error (``http_error``). Every request body and its headers are
kept for assertions.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

Step = Callable[[dict[str, Any]], dict[str, Any]]


def say(text: str) -> Step:
    return lambda body: {"message": {"role": "assistant", "content": text}, "finish": "stop"}


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
