"""The SDK's WebSocket session with the backend (SPEC B5, W1-W4).

Token in the first message, never in the URL; reconnect with capped exponential backoff and
jitter; resume the same session id after a drop; answer heartbeats and treat a silent backend
as dead. The SDK sends nothing unasked beyond ``hello`` and ``pong`` (W4).

Written against the small ``Transport`` interface so the state machine is testable on CPython;
``bridge.browser.BrowserWebSocket`` is the real one.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

from pydantic import ValidationError

from ..protocol import (
    PROTOCOL_VERSION,
    Cancel,
    ChatEvent,
    ChatMessage,
    ErrorCode,
    ErrorMessage,
    Hello,
    PageAuditEvent,
    PageInfo,
    PageToolRequest,
    Ping,
    Pong,
    UserIdentity,
    Welcome,
    parse_server_message,
)
from .dispatcher import Dispatcher

HANDSHAKE_TIMEOUT_S = 10.0
# Refusals that another attempt with the same credentials cannot fix.
FINAL_REFUSALS = frozenset(
    {ErrorCode.UNAUTHORIZED, ErrorCode.ORIGIN_NOT_ALLOWED, ErrorCode.PROTOCOL_MISMATCH}
)


class Transport(Protocol):
    async def opened(self, timeout: float) -> bool: ...
    def send(self, text: str) -> None: ...
    async def receive(self) -> str | None: ...
    def close(self, code: int = 1000, reason: str = "") -> None: ...


class ClientState(StrEnum):
    CONNECTING = "connecting"
    CONNECTED = "connected"
    BACKING_OFF = "backing_off"
    REFUSED = "refused"
    STOPPED = "stopped"


@dataclass(frozen=True, slots=True)
class Identity:
    agent_id: str
    user_id: str
    user_name: str | None
    sdk_version: str
    token_refreshable: bool


@dataclass(frozen=True, slots=True)
class Backoff:
    initial_s: float = 0.5
    factor: float = 2.0
    cap_s: float = 15.0
    jitter: float = 0.3

    def delay(self, attempt: int, rng: random.Random) -> float:
        try:
            grown = self.initial_s * self.factor ** attempt
        except OverflowError:
            # Hours of failed attempts (about 1,000 at the default factor) overflow the
            # float; the delay is long since capped, and the retry loop must not die of it.
            grown = self.cap_s
        base = min(self.cap_s, grown)
        return base * (1 + rng.uniform(0, self.jitter))


class SdkClient:
    def __init__(
        self,
        *,
        url: str,
        identity: Identity,
        connect: Callable[[str], Transport],
        token: Callable[[], Awaitable[str]],
        page_info: Callable[[], PageInfo],
        dispatcher: Dispatcher,
        on_ready: Callable[[str], None],
        on_refused: Callable[[str, str], None],
        on_state: Callable[[ClientState], None] = lambda state: None,
        on_chat_event: Callable[[ChatEvent], None] = lambda event: None,
        on_dropped: Callable[[str], None] = lambda reason: None,
        backoff: Backoff | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self._url = url
        self._identity = identity
        self._connect = connect
        self._token = token
        self._page_info = page_info
        self._dispatcher = dispatcher
        self._on_ready = on_ready
        self._on_refused = on_refused
        self._on_state = on_state
        self._on_chat_event = on_chat_event
        self._on_dropped = on_dropped
        self._backoff = backoff or Backoff()
        self._rng = rng or random.Random()
        self._transport: Transport | None = None
        self._stopped = False
        self.session_id: str | None = None
        self.state = ClientState.CONNECTING
        self.connections = 0

    def _set_state(self, state: ClientState) -> None:
        self.state = state
        self._on_state(state)

    async def run(self) -> None:
        attempt = 0
        while not self._stopped:
            self._set_state(ClientState.CONNECTING)
            try:
                outcome = await self._connect_once()
            except Exception as error:  # noqa: BLE001 - one broken connection must not end the SDK
                # A bug met while serving one connection would otherwise end this loop, and
                # the page would stay offline until reloaded; report it and reconnect.
                self._on_dropped(
                    f"the connection failed inside the SDK: {type(error).__name__}: {error}"
                )
                outcome = None
            if self._stopped:
                break
            if outcome == "welcomed":
                attempt = 0
            elif (
                isinstance(outcome, ErrorMessage)
                and outcome.code in FINAL_REFUSALS
                and not self._identity.token_refreshable
            ):
                self._set_state(ClientState.REFUSED)
                self._on_refused(outcome.code, outcome.message)
                return
            elif isinstance(outcome, ErrorMessage):
                self._on_refused(outcome.code, outcome.message)
            self._set_state(ClientState.BACKING_OFF)
            await asyncio.sleep(self._backoff.delay(attempt, self._rng))
            attempt += 1
        self._set_state(ClientState.STOPPED)

    def send_chat(self, text: str, message_id: str | None = None) -> bool:
        """Send what the user typed in the panel to the backend's agent loop.

        False (nothing sent) while not connected: chat is not queued across reconnects, the
        panel tells the user instead. Raises ``ValidationError`` for empty or oversized text.
        """
        message = ChatMessage(text=text, message_id=message_id)
        if self.state is not ClientState.CONNECTED or self._transport is None:
            return False
        self._transport.send(message.to_json())
        return True

    def send_audit(self, event: PageAuditEvent) -> bool:
        """Report one authorization or action record for the backend's audit log (SPEC P6).

        False (nothing sent) while not connected; the page's SDK event has it either way.
        """
        if self.state is not ClientState.CONNECTED or self._transport is None:
            return False
        self._transport.send(event.to_json())
        return True

    def stop(self) -> None:
        self._stopped = True
        self._dispatcher.cancel_all("the SDK was stopped")
        if self._transport is not None:
            self._transport.close(1000, "stopped")

    async def _connect_once(self) -> str | ErrorMessage | None:
        transport = self._connect(self._url)
        self._transport = transport
        try:
            if not await transport.opened(HANDSHAKE_TIMEOUT_S):
                return None
            hello = Hello(
                protocol_version=PROTOCOL_VERSION,
                token=await self._token(),
                agent_id=self._identity.agent_id,
                user=UserIdentity(id=self._identity.user_id, name=self._identity.user_name),
                page=self._page_info(),
                sdk_version=self._identity.sdk_version,
                resume_session_id=self.session_id,
            )
            transport.send(hello.to_json())
            try:
                first = await asyncio.wait_for(transport.receive(), HANDSHAKE_TIMEOUT_S)
            except TimeoutError:
                return None
            if first is None:
                return None
            message = self._parse(first)
            if isinstance(message, ErrorMessage):
                return message
            if not isinstance(message, Welcome):
                return None
            self.session_id = message.session_id
            self.connections += 1
            self._dispatcher.bind_session(message.session_id)
            self._dispatcher.replace_sender(transport.send)
            self._set_state(ClientState.CONNECTED)
            self._on_ready(message.session_id)
            try:
                ended = await self._serve(transport, message.heartbeat_interval_ms / 1000)
                if not self._stopped:
                    self._on_dropped(ended)
            finally:
                # A lost connection stops the task (SPEC W3, U3); its writes are
                # reported "may have applied" by the backend and never replayed.
                self._dispatcher.cancel_all("the connection to the backend was lost")
            return "welcomed"
        finally:
            transport.close()
            self._transport = None

    async def _serve(self, transport: Transport, heartbeat_s: float) -> str:
        """Answer the backend until the connection ends; returns why it ended."""
        # A backend silent for three heartbeats is dead (W4): drop and reconnect.
        silence_limit = max(heartbeat_s * 3, 1.0)
        while not self._stopped:
            try:
                raw = await asyncio.wait_for(transport.receive(), silence_limit)
            except TimeoutError:
                return f"the backend was silent for {silence_limit:.0f} s"
            if raw is None:
                code = getattr(transport, "close_code", None)
                return "the connection closed" + (f" (code {code})" if code is not None else "")
            try:
                message = parse_server_message(raw)
            except ValidationError as error:
                self._dispatcher.reject_invalid(raw, error)
                continue
            if isinstance(message, PageToolRequest):
                self._dispatcher.submit(message)
            elif isinstance(message, Cancel):
                self._dispatcher.cancel(message)
            elif isinstance(message, Ping):
                transport.send(Pong(ts=message.ts, page=self._page_info()).to_json())
            elif isinstance(message, ChatEvent):
                self._on_chat_event(message)
            elif isinstance(message, ErrorMessage):
                continue  # the backend tells us about a frame of ours it rejected; nothing to redo
        return "stopped"

    @staticmethod
    def _parse(raw: str) -> Any:
        try:
            return parse_server_message(raw)
        except ValidationError:
            return None
