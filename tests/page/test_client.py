"""The SDK's WebSocket session (SPEC B5, W1-W4), over an in-memory transport."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from mao_page.protocol import PageInfo, PageToolRequest, PageToolResult
from mao_page.session.client import Backoff, ClientState, Identity, SdkClient
from mao_page.session.dispatcher import Dispatcher

URL = "wss://backend.example/ws/sdk"
PAGE = PageInfo(url="https://shop.example/cart", title="Cart")
WAIT_S = 3.0


class FakeTransport:
    def __init__(self, *, opens: bool = True) -> None:
        self.opens = opens
        self.inbox: asyncio.Queue[str | None] = asyncio.Queue()
        self.sent: list[dict[str, Any]] = []
        self.closed = False
        self._changed = asyncio.Event()

    async def opened(self, timeout: float) -> bool:
        return self.opens

    def send(self, text: str) -> None:
        self.sent.append(json.loads(text))
        self._changed.set()

    async def receive(self) -> str | None:
        return await self.inbox.get()

    def close(self, code: int = 1000, reason: str = "") -> None:
        self.closed = True
        self.inbox.put_nowait(None)

    # -- the backend's side --

    def push(self, frame: dict[str, Any]) -> None:
        self.inbox.put_nowait(json.dumps(frame))

    def drop(self) -> None:
        self.inbox.put_nowait(None)

    def welcome(self, session_id: str = "sess-1", heartbeat_ms: int = 15_000) -> None:
        self.push({"type": "welcome", "protocolVersion": 1, "sessionId": session_id,
                   "heartbeatIntervalMs": heartbeat_ms})

    async def sent_frame(self, kind: str, count: int = 1) -> dict[str, Any]:
        async with asyncio.timeout(WAIT_S):
            while len(of_type := [f for f in self.sent if f["type"] == kind]) < count:
                self._changed.clear()
                await self._changed.wait()
        return of_type[count - 1]


class FakeBackend:
    """Hands out one transport per connection attempt; ``refuse_opening`` fails the first n."""

    def __init__(self, refuse_opening: int = 0) -> None:
        self.urls: list[str] = []
        self.transports: list[FakeTransport] = []
        self._refuse = refuse_opening
        self._changed = asyncio.Event()

    def connect(self, url: str) -> FakeTransport:
        self.urls.append(url)
        transport = FakeTransport(opens=len(self.transports) >= self._refuse)
        self.transports.append(transport)
        self._changed.set()
        return transport

    async def connection(self, number: int) -> FakeTransport:
        """The transport of the ``number``-th attempt (1-based), once its hello was sent."""
        async with asyncio.timeout(WAIT_S):
            while len(self.transports) < number:
                self._changed.clear()
                await self._changed.wait()
        transport = self.transports[number - 1]
        if transport.opens:
            await transport.sent_frame("hello")
        return transport


class RecordingBackoff:
    def __init__(self) -> None:
        self.attempts: list[int] = []

    def delay(self, attempt: int, rng: random.Random) -> float:
        self.attempts.append(attempt)
        return 0.001


async def execute(request: PageToolRequest) -> PageToolResult:
    return PageToolResult(request_id=request.request_id, success=True, page_version="v1")


class Session:
    def __init__(self, backend: FakeBackend, *, refreshable: bool = False,
                 page_info: Callable[[], PageInfo] = lambda: PAGE) -> None:
        self.backend = backend
        self.dropped: list[str] = []
        self.tokens = iter(f"token-{n}" for n in range(1, 100))
        self.ready: list[str] = []
        self.refused: list[tuple[str, str]] = []
        self.backoff = RecordingBackoff()
        self.client = SdkClient(
            url=URL,
            identity=Identity(
                agent_id="agent-1",
                user_id="u1",
                user_name="Ada",
                sdk_version="0.1.0",
                token_refreshable=refreshable,
            ),
            connect=backend.connect,
            token=self._token,
            page_info=page_info,
            dispatcher=Dispatcher(execute, lambda data: None, lambda: "v1"),
            on_ready=self.ready.append,
            on_refused=lambda code, message: self.refused.append((code, message)),
            on_dropped=self.dropped.append,
            backoff=self.backoff,  # type: ignore[arg-type]
        )
        self.task = asyncio.create_task(self.client.run())

    async def _token(self) -> str:
        return next(self.tokens)

    async def finished(self) -> None:
        async with asyncio.timeout(WAIT_S):
            await self.task


@pytest.fixture
async def backend() -> FakeBackend:
    return FakeBackend()


@pytest.fixture
async def session(backend: FakeBackend) -> AsyncIterator[Session]:
    running = Session(backend)
    yield running
    running.client.stop()
    await running.finished()


async def test_hello_is_the_first_frame_and_carries_the_token(
    session: Session, backend: FakeBackend
) -> None:  # SPEC B5
    transport = await backend.connection(1)
    hello = transport.sent[0]
    assert hello["type"] == "hello"
    assert hello["token"] == "token-1"
    assert (hello["agentId"], hello["user"], hello["page"]) == (
        "agent-1",
        {"id": "u1", "name": "Ada"},
        PAGE.to_wire(),
    )
    assert "resumeSessionId" not in hello


async def test_the_url_carries_no_credentials(
    session: Session, backend: FakeBackend
) -> None:  # SPEC B5
    await backend.connection(1)
    assert backend.urls == [URL]
    assert "token" not in backend.urls[0]


async def test_welcome_makes_the_client_ready_with_its_session(
    session: Session, backend: FakeBackend
) -> None:  # SPEC W1
    transport = await backend.connection(1)
    transport.welcome("sess-42")
    async with asyncio.timeout(WAIT_S):
        while not session.ready:
            await asyncio.sleep(0.005)
    assert session.ready == ["sess-42"]
    assert (session.client.session_id, session.client.state) == ("sess-42", ClientState.CONNECTED)


async def test_ping_is_answered_with_pong_and_page_info(
    session: Session, backend: FakeBackend
) -> None:  # SPEC W4
    transport = await backend.connection(1)
    transport.welcome()
    transport.push({"type": "ping", "ts": 123.5})
    pong = await transport.sent_frame("pong")
    assert pong == {"type": "pong", "ts": 123.5, "page": {"url": PAGE.url, "title": PAGE.title}}


async def test_request_is_answered_on_the_same_connection(
    session: Session, backend: FakeBackend
) -> None:  # SPEC W1
    transport = await backend.connection(1)
    transport.welcome("sess-1")
    transport.push({"type": "page_tool_request", "requestId": "r1", "sessionId": "sess-1",
                    "tool": "page_observe", "actions": [{"action": "observe"}]})
    result = await transport.sent_frame("page_tool_result")
    assert (result["requestId"], result["success"]) == ("r1", True)


async def test_invalid_request_is_answered_with_invalid_request(
    session: Session, backend: FakeBackend
) -> None:  # SPEC W1
    transport = await backend.connection(1)
    transport.welcome("sess-1")
    transport.push({"type": "page_tool_request", "requestId": "r1", "sessionId": "sess-1",
                    "tool": "page_click", "actions": [{"action": "click", "script": "alert(1)"}]})
    result = await transport.sent_frame("page_tool_result")
    assert (result["requestId"], result["error"]["code"]) == ("r1", "invalid_request")


async def test_client_sends_nothing_unasked(
    session: Session, backend: FakeBackend
) -> None:  # SPEC W4
    transport = await backend.connection(1)
    transport.welcome()
    await asyncio.sleep(0.05)
    assert [frame["type"] for frame in transport.sent] == ["hello"]


async def test_final_refusal_with_a_fixed_token_stops_retrying(
    backend: FakeBackend,
) -> None:  # SPEC B5, W4
    session = Session(backend, refreshable=False)
    transport = await backend.connection(1)
    transport.push({"type": "error", "code": "unauthorized", "message": "token expired"})
    await session.finished()
    assert session.refused == [("unauthorized", "token expired")]
    assert session.client.state is ClientState.REFUSED
    assert len(backend.urls) == 1


async def test_refusal_with_a_refreshable_token_retries_with_a_new_token(
    backend: FakeBackend,
) -> None:  # SPEC B5, W4
    session = Session(backend, refreshable=True)
    first = await backend.connection(1)
    first.push({"type": "error", "code": "unauthorized", "message": "token expired"})
    second = await backend.connection(2)
    assert second.sent[0]["token"] == "token-2"
    assert session.refused == [("unauthorized", "token expired")]
    session.client.stop()
    await session.finished()


async def test_dropped_connection_reconnects_and_resumes_the_session(
    session: Session, backend: FakeBackend
) -> None:  # SPEC W4
    first = await backend.connection(1)
    first.welcome("sess-1")
    first.drop()
    second = await backend.connection(2)
    assert second.sent[0]["type"] == "hello"
    assert second.sent[0]["resumeSessionId"] == "sess-1"
    assert first.closed
    assert session.dropped == ["the connection closed"]


async def test_a_failure_while_serving_a_connection_reconnects_instead_of_ending_the_sdk(
    backend: FakeBackend,
) -> None:  # SPEC W4
    calls = 0

    def page_info() -> PageInfo:
        nonlocal calls
        calls += 1
        if calls == 2:  # the first pong (the hello took the first call)
            raise RuntimeError("document went away")
        return PAGE

    session = Session(backend, page_info=page_info)
    first = await backend.connection(1)
    first.welcome("sess-1")
    first.push({"type": "ping", "ts": 1.0})
    second = await backend.connection(2)
    assert second.sent[0]["resumeSessionId"] == "sess-1"
    assert first.closed
    assert session.dropped == [
        "the connection failed inside the SDK: RuntimeError: document went away"
    ]
    second.welcome("sess-1")
    second.push({"type": "ping", "ts": 2.0})
    assert (await second.sent_frame("pong"))["ts"] == 2.0
    session.client.stop()
    await session.finished()


async def test_failed_attempts_back_off_longer_and_reset_after_a_welcome() -> None:  # SPEC W4
    backend = FakeBackend(refuse_opening=3)
    session = Session(backend)
    fourth = await backend.connection(4)
    assert session.backoff.attempts == [0, 1, 2]
    fourth.welcome()
    fourth.drop()
    await backend.connection(5)
    assert session.backoff.attempts == [0, 1, 2, 0]
    session.client.stop()
    await session.finished()


async def test_backend_silent_for_three_heartbeats_is_dropped(
    session: Session, backend: FakeBackend
) -> None:  # SPEC W4
    loop = asyncio.get_running_loop()
    first = await backend.connection(1)
    first.welcome("sess-1", heartbeat_ms=400)
    started = loop.time()
    second = await backend.connection(2)
    assert loop.time() - started >= 3 * 0.4 - 0.05
    assert first.closed
    assert second.sent[0]["resumeSessionId"] == "sess-1"
    assert session.dropped == ["the backend was silent for 1 s"]


async def test_backend_that_keeps_pinging_is_not_dropped(
    session: Session, backend: FakeBackend
) -> None:  # SPEC W4
    first = await backend.connection(1)
    first.welcome("sess-1", heartbeat_ms=400)
    for n in range(6):  # 1.8 s in all, longer than three heartbeats
        await asyncio.sleep(0.3)
        first.push({"type": "ping", "ts": float(n)})
    await first.sent_frame("pong", 6)
    assert len(backend.transports) == 1
    assert not first.closed


async def test_stop_closes_the_connection_and_ends_the_run(
    session: Session, backend: FakeBackend
) -> None:  # SPEC E2
    transport = await backend.connection(1)
    transport.welcome()
    await transport.sent_frame("hello")
    session.client.stop()
    await session.finished()
    assert transport.closed
    assert session.client.state is ClientState.STOPPED
    assert len(backend.transports) == 1
    assert session.dropped == []  # a stop is not a drop


# -- Backoff -----------------------------------------------------------------------------


def test_backoff_grows_exponentially_up_to_the_cap() -> None:  # SPEC W4
    backoff = Backoff(initial_s=0.5, factor=2.0, cap_s=15.0, jitter=0.0)
    delays = [backoff.delay(attempt, random.Random(0)) for attempt in range(8)]
    assert delays == [0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 15.0, 15.0]


def test_backoff_jitter_only_lengthens_the_delay_within_its_bound() -> None:  # SPEC W4
    backoff = Backoff(initial_s=1.0, factor=2.0, cap_s=10.0, jitter=0.3)
    rng = random.Random(7)
    for attempt in range(10):
        base = min(10.0, 2.0 ** attempt)
        delay = backoff.delay(attempt, rng)
        assert base <= delay <= base * 1.3


@pytest.mark.parametrize("attempt", [60, 5000], ids=["hour", "all-day-outage"])
def test_backoff_for_a_large_attempt_number_stays_capped(attempt: int) -> None:  # SPEC W4
    backoff = Backoff(jitter=0.0)
    assert backoff.delay(attempt, random.Random(0)) == backoff.cap_s
