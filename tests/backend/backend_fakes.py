"""A fake page that speaks the SDK side of the protocol, for backend tests without a browser.

It follows the lifecycle in the ``mao_page.protocol`` docstring: hello first, one result
per request, pong for every ping (with the page's URL and title), nothing unasked. Tests
choose how it answers each request and can make it misbehave on purpose (stay silent,
answer twice, answer late, send raw frames).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable
from typing import Any

import websockets
from mao_embed.security.tokens import issue_token
from mao_page.protocol import (
    PROTOCOL_VERSION,
    Cancel,
    ChatEvent,
    ChatEventKind,
    ErrorMessage,
    PageInfo,
    PageToolRequest,
    PageToolResult,
    Ping,
    Welcome,
    parse_server_message,
)
from mao_page.session.client import Backoff, Identity, SdkClient
from mao_page.session.dispatcher import Dispatcher
from websockets.asyncio.client import ClientConnection

PAGE_ORIGIN = "https://shop.example"
# The backend tests' signing secret; here rather than in conftest.py, which is not importable
# by name when several test directories (each with its own conftest) run in one pytest.
SECRET = "test-secret-not-for-production"
USER_ID = "user-1"
AGENT_ID = "agent-1"

Answer = Callable[[PageToolRequest], Awaitable[PageToolResult | None]]


async def answer_ok(request: PageToolRequest) -> PageToolResult:
    return PageToolResult(
        request_id=request.request_id,
        success=True,
        page_version="v1",
        result={"tool": request.tool.value},
    )


async def answer_never(request: PageToolRequest) -> None:
    return None


class HandshakeRefusedByServer(Exception):
    def __init__(self, error: ErrorMessage | None, close_code: int | None) -> None:
        super().__init__(f"{error.code if error else None} (close {close_code})")
        self.error = error
        self.close_code = close_code


class FakePage:
    def __init__(
        self,
        ws_url: str,
        token: str,
        *,
        origin: str = PAGE_ORIGIN,
        user_id: str = USER_ID,
        agent_id: str = AGENT_ID,
        url: str = "https://shop.example/cart",
        title: str = "Cart",
        answer: Answer = answer_ok,
        answer_pings: bool = True,
    ) -> None:
        self.ws_url = ws_url
        self.token = token
        self.origin = origin
        self.user_id = user_id
        self.agent_id = agent_id
        self.url = url
        self.title = title
        self.answer = answer
        self.answer_pings = answer_pings
        self.requests: list[PageToolRequest] = []
        self.cancels: list[Cancel] = []
        self.errors: list[ErrorMessage] = []
        self.pings: list[Ping] = []
        self.chat_events: list[ChatEvent] = []
        self.other: list[Any] = []
        self.session_id: str | None = None
        self.welcome: Welcome | None = None
        self._socket: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None
        self._changed = asyncio.Event()
        self.close_code: int | None = None

    def hello(self, **overrides: Any) -> dict[str, Any]:
        message = {
            "type": "hello",
            "protocolVersion": PROTOCOL_VERSION,
            "token": self.token,
            "agentId": self.agent_id,
            "user": {"id": self.user_id},
            "page": {"url": self.url, "title": self.title},
            "sdkVersion": "test",
        }
        message.update(overrides)
        return message

    async def open_socket(self) -> ClientConnection:
        self._socket = await websockets.connect(
            self.ws_url,
            origin=self.origin,
            max_size=None,
            ping_interval=None,  # type: ignore[arg-type]
        )
        return self._socket

    async def connect(self, resume_session_id: str | None = None, **hello: Any) -> Welcome:
        """Open the socket, say hello, and start answering; raises if the server refuses."""
        socket = await self.open_socket()
        if resume_session_id:
            hello["resumeSessionId"] = resume_session_id
        await socket.send(json.dumps(self.hello(**hello)))
        try:
            first = parse_server_message(await asyncio.wait_for(socket.recv(), 5))
        except websockets.ConnectionClosed as closed:
            raise HandshakeRefusedByServer(
                None, closed.rcvd.code if closed.rcvd else None
            ) from None
        if isinstance(first, ErrorMessage):
            code = None
            with contextlib.suppress(websockets.ConnectionClosed):
                await asyncio.wait_for(socket.recv(), 5)
            if socket.close_code is not None:
                code = socket.close_code
            raise HandshakeRefusedByServer(first, code)
        assert isinstance(first, Welcome), first
        self.welcome = first
        self.session_id = first.session_id
        self._reader = asyncio.get_running_loop().create_task(self._read())
        return first

    async def send(self, message: dict[str, Any] | str | bytes) -> None:
        assert self._socket is not None
        await self._socket.send(
            message if isinstance(message, str | bytes) else json.dumps(message)
        )

    async def wait_until(self, condition: Callable[[], bool], timeout_s: float = 5.0) -> None:
        async with asyncio.timeout(timeout_s):
            while not condition():
                self._changed.clear()
                await self._changed.wait()

    async def next_error(self, timeout_s: float = 5.0) -> ErrorMessage:
        count = len(self.errors)
        await self.wait_until(lambda: len(self.errors) > count, timeout_s)
        return self.errors[count]

    async def chat(self, text: str, message_id: str | None = None) -> None:
        """Send what a user typed in the panel (``chat_message``)."""
        message: dict[str, Any] = {"type": "chat_message", "text": text}
        if message_id is not None:
            message["messageId"] = message_id
        await self.send(message)

    async def chat_turn(self, timeout_s: float = 10.0) -> list[ChatEvent]:
        """Chat events up to and including the next ``done``."""
        start = len(self.chat_events)

        def finished() -> bool:
            return any(e.kind is ChatEventKind.DONE for e in self.chat_events[start:])

        await self.wait_until(finished, timeout_s)
        events = self.chat_events[start:]
        return events[: [e.kind for e in events].index(ChatEventKind.DONE) + 1]

    async def wait_closed(self, timeout_s: float = 5.0) -> int | None:
        assert self._reader is not None
        await asyncio.wait_for(asyncio.shield(self._reader), timeout_s)
        return self.close_code

    async def drop(self) -> None:
        """Vanish like a crashed tab: the TCP connection ends without a close handshake."""
        assert self._socket is not None
        self._socket.transport.abort()
        await self._stop_reader()

    async def close(self) -> None:
        if self._socket is not None:
            await self._socket.close()
        await self._stop_reader()

    async def _stop_reader(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader

    async def _read(self) -> None:
        assert self._socket is not None
        try:
            async for raw in self._socket:
                message = parse_server_message(raw)
                if isinstance(message, PageToolRequest):
                    self.requests.append(message)
                    asyncio.get_running_loop().create_task(self._answer(message))
                elif isinstance(message, Cancel):
                    self.cancels.append(message)
                elif isinstance(message, ErrorMessage):
                    self.errors.append(message)
                elif isinstance(message, ChatEvent):
                    self.chat_events.append(message)
                elif isinstance(message, Ping):
                    self.pings.append(message)
                    if self.answer_pings:
                        await self.send(
                            {
                                "type": "pong",
                                "ts": message.ts,
                                "page": {"url": self.url, "title": self.title},
                            }
                        )
                else:
                    self.other.append(message)
                self._changed.set()
        except websockets.ConnectionClosed:
            pass
        finally:
            self.close_code = self._socket.close_code
            self._changed.set()

    async def _answer(self, request: PageToolRequest) -> None:
        result = await self.answer(request)
        if result is not None:
            with contextlib.suppress(websockets.ConnectionClosed):
                await self.send(result.to_wire())


class WebsocketsTransport:
    """The page runtime's ``client.Transport`` over a real WebSocket (the ``websockets``
    library), so the real ``SdkClient`` (reconnect, resume, heartbeat) runs on CPython
    against a real backend. The browser uses ``bridge.BrowserWebSocket`` instead."""

    def __init__(self, url: str, origin: str = PAGE_ORIGIN) -> None:
        self._url = url
        self._origin = origin
        self._socket: ClientConnection | None = None
        self._outbox: asyncio.Queue[str | None] = asyncio.Queue()
        self._writer: asyncio.Task[None] | None = None

    async def opened(self, timeout: float) -> bool:
        try:
            self._socket = await asyncio.wait_for(
                websockets.connect(
                    self._url, origin=self._origin, ping_interval=None  # type: ignore[arg-type]
                ),
                timeout,
            )
        except (OSError, TimeoutError, websockets.InvalidHandshake):
            return False
        self._writer = asyncio.get_running_loop().create_task(self._write())
        return True

    def send(self, text: str) -> None:
        # Sync in the Transport interface, like the browser's WebSocket.send; a queue keeps
        # the frames in order.
        self._outbox.put_nowait(text)

    async def receive(self) -> str | None:
        if self._socket is None:
            return None
        try:
            message = await self._socket.recv()
        except websockets.ConnectionClosed:
            return None
        return message if isinstance(message, str) else message.decode()

    def close(self, code: int = 1000, reason: str = "") -> None:
        self._outbox.put_nowait(None)
        if self._socket is not None:
            socket = self._socket
            asyncio.get_running_loop().create_task(socket.close(code, reason))

    async def _write(self) -> None:
        assert self._socket is not None
        while (text := await self._outbox.get()) is not None:
            try:
                await self._socket.send(text)
            except websockets.ConnectionClosed:
                return


class RealPage:
    """The page runtime's own ``SdkClient`` and ``Dispatcher`` on CPython, connected over a
    real WebSocket, so its reconnect and resume code runs as in a browser. A tool in
    ``blocking`` (every tool when None) runs until cancelled, as a write in flight when its
    server dies; any other answers success at once."""

    def __init__(
        self, ws_url: str, secret: str = SECRET, *, blocking: frozenset[str] | None = None
    ) -> None:
        self.executed: list[str] = []
        self.cancelled: list[str] = []
        self.sessions: list[str] = []
        self.changed = asyncio.Event()
        self._blocking = blocking

        async def token() -> str:
            return issue_token(secret, user_id=USER_ID, agent_id=AGENT_ID, origin=PAGE_ORIGIN)

        self.dispatcher = Dispatcher(self._execute, lambda data: None, lambda: "v1")
        self.client = SdkClient(
            url=ws_url,
            identity=Identity(AGENT_ID, USER_ID, None, "test", token_refreshable=True),
            connect=WebsocketsTransport,
            token=token,
            page_info=lambda: PageInfo(url="https://shop.example/form", title="Form"),
            dispatcher=self.dispatcher,
            on_ready=self._ready,
            on_refused=lambda code, message: None,
            # Fast reconnects so the test does not wait out production backoff.
            backoff=Backoff(initial_s=0.05, factor=1.5, cap_s=0.3),
        )
        self.task: asyncio.Task[None] | None = None

    def _ready(self, session_id: str) -> None:
        self.sessions.append(session_id)
        self.changed.set()

    async def _execute(self, request: PageToolRequest) -> PageToolResult:
        self.executed.append(request.request_id)
        self.changed.set()
        if self._blocking is not None and request.tool.value not in self._blocking:
            return PageToolResult(request_id=request.request_id, success=True, page_version="v1")
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled.append(request.request_id)
            self.changed.set()
            raise
        raise AssertionError("unreachable")

    async def wait_until(self, condition: Callable[[], bool], timeout_s: float = 20) -> None:
        async with asyncio.timeout(timeout_s):
            while not condition():
                self.changed.clear()
                await self.changed.wait()

    def start(self) -> RealPage:
        self.task = asyncio.get_running_loop().create_task(self.client.run())
        return self

    async def stop(self) -> None:
        self.client.stop()
        if self.task is not None:
            with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                await asyncio.wait_for(self.task, 5)
