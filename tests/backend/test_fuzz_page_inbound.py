"""Property-based fuzzing of everything the page runtime receives (SPEC W1).

The real ``mao_page.session.client.SdkClient`` and ``Dispatcher`` on CPython, fed hostile frames
through an in-memory transport after a normal handshake: malformed JSON, wrong types, huge
strings, smuggled ``selector``/``script``/``xpath``, requests for another session. The oracle
is the shared protocol: a request executes only if it validates and names this session;
anything else that names a requestId gets one ``invalid_request`` result; nothing kills the
client. (It lives with the backend fuzz tests because it shares their frame strategies.)
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from fuzz_frames import FUZZ_SETTINGS, frames, server_templates
from hypothesis import given
from mao_page.protocol import (
    ChatEvent,
    PageInfo,
    PageToolRequest,
    PageToolResult,
    parse_server_message,
)
from mao_page.session.client import ClientState, Identity, SdkClient
from mao_page.session.dispatcher import Dispatcher
from pydantic import ValidationError

SESSION = "ses-fuzz-1"


class MemoryTransport:
    def __init__(self) -> None:
        self.inbox: asyncio.Queue[str | None] = asyncio.Queue()
        self.sent: list[dict[str, Any]] = []
        self.changed = asyncio.Event()

    async def opened(self, timeout: float) -> bool:
        return True

    def send(self, text: str) -> None:
        self.sent.append(json.loads(text))
        self.changed.set()

    async def receive(self) -> str | None:
        return await self.inbox.get()

    def close(self, code: int = 1000, reason: str = "") -> None:
        self.inbox.put_nowait(None)


class MemoryPage:
    """One SDK client connected to a scripted backend over an in-memory transport."""

    def __init__(self) -> None:
        self.transport = MemoryTransport()
        self.executed: list[PageToolRequest] = []
        self.chat: list[ChatEvent] = []
        self.client = SdkClient(
            url="wss://backend.example/ws/sdk",
            identity=Identity("agent-1", "user-1", None, "test", token_refreshable=False),
            connect=lambda url: self.transport,
            token=self._token,
            page_info=lambda: PageInfo(url="https://shop.example/", title="Shop"),
            dispatcher=Dispatcher(self._execute, lambda data: None, lambda: "v1"),
            on_ready=lambda session_id: None,
            on_refused=lambda code, message: None,
            on_chat_event=self.chat.append,
        )

    @staticmethod
    async def _token() -> str:
        return "token"

    async def _execute(self, request: PageToolRequest) -> PageToolResult:
        self.executed.append(request)
        return PageToolResult(request_id=request.request_id, success=True, page_version="v1")

    async def until_pong(self, marker: float) -> list[dict[str, Any]]:
        """Ping with a unique ts; everything the page sent before its pong (results of
        requests dispatched before the ping included, since they settle first)."""
        start = len(self.transport.sent)
        # Let tasks started by the previous frame finish and send their results.
        for _ in range(5):
            await asyncio.sleep(0)
        self.transport.inbox.put_nowait(json.dumps({"type": "ping", "ts": marker}))
        async with asyncio.timeout(5):
            while not any(
                m["type"] == "pong" and m["ts"] == marker for m in self.transport.sent[start:]
            ):
                self.transport.changed.clear()
                await self.transport.changed.wait()
        sent = self.transport.sent[start:]
        return [m for m in sent if not (m["type"] == "pong" and m["ts"] == marker)]


def expected(frame: str | bytes) -> tuple[str, Any]:
    """What the page must do with a frame, by the shared protocol models."""
    try:
        message = parse_server_message(frame)
    except ValidationError:
        try:
            data = json.loads(frame)
        except (ValueError, UnicodeDecodeError, RecursionError):
            return ("ignore", None)
        request_id = data.get("requestId") if isinstance(data, dict) else None
        if (
            isinstance(data, dict)
            and data.get("type") == "page_tool_request"
            and isinstance(request_id, str)
            and re.fullmatch(r"[A-Za-z0-9_.:\-]{1,80}", request_id)
        ):
            return ("invalid", request_id)
        return ("ignore", None)
    if isinstance(message, PageToolRequest):
        if message.session_id != SESSION:
            return ("invalid", message.request_id)
        return ("execute", message.request_id)
    if isinstance(message, ChatEvent):
        return ("chat", message)
    return ("ignore", None)


def test_hostile_frames_to_the_page_run_nothing_and_never_kill_the_client() -> None:
    loop = asyncio.new_event_loop()
    try:
        page, running = loop.run_until_complete(_connected_page())
        markers = iter(range(10**9))
        seen_ids: set[str] = set()

        @FUZZ_SETTINGS
        @given(frame=frames(server_templates(SESSION)))
        def one_frame(frame: str | bytes) -> None:
            # Hypothesis drives synchronously; the client runs on the loop while we wait.
            loop.run_until_complete(_check(page, running, frame, next(markers), seen_ids))

        one_frame()
        page.client.stop()
        loop.run_until_complete(asyncio.wait_for(running, 5))
    finally:
        loop.close()


async def _connected_page() -> tuple[MemoryPage, asyncio.Task[None]]:
    page = MemoryPage()
    running = asyncio.get_running_loop().create_task(page.client.run())
    page.transport.inbox.put_nowait(
        json.dumps({"type": "welcome", "protocolVersion": 1, "sessionId": SESSION,
                    "heartbeatIntervalMs": 600_000})
    )
    async with asyncio.timeout(5):
        while page.client.state is not ClientState.CONNECTED:
            await asyncio.sleep(0.001)
    return page, running


async def _check(
    page: MemoryPage,
    running: asyncio.Task[None],
    frame: str | bytes,
    marker: int,
    seen_ids: set[str],
) -> None:
    if isinstance(frame, bytes):
        # The browser transport hands Python text frames only.
        try:
            frame = frame.decode()
        except UnicodeDecodeError:
            return
    before_exec, before_chat = len(page.executed), len(page.chat)
    page.transport.inbox.put_nowait(frame)
    sent = await page.until_pong(float(marker))
    assert not running.done(), running
    assert page.client.state is ClientState.CONNECTED
    action, detail = expected(frame)
    executed = page.executed[before_exec:]
    results = [m for m in sent if m["type"] == "page_tool_result"]
    if action == "execute":
        if detail in seen_ids:
            # W2: a repeated requestId is answered with the first result, not re-run.
            assert executed == []
        else:
            assert [r.request_id for r in executed] == [detail]
            seen_ids.add(detail)
        assert [r["requestId"] for r in results] == [detail]
    else:
        assert executed == [], frame
    if action == "invalid":
        assert len(results) == 1 and results[0]["requestId"] == detail
        if detail not in seen_ids:
            assert results[0]["error"]["code"] == "invalid_request"
    if action == "ignore":
        assert results == [], (frame, sent)
    assert len(page.chat) - before_chat == (1 if action == "chat" else 0)
