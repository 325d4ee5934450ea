"""The page's connection as a CPython program: a stand-in for the browser's transport.

In the browser the socket belongs to ``loader_js/transport.js`` (SPEC E6: the session is
registered before Python boots). Tests and tools that play a page against a real backend on
CPython use this client instead: the same rules (SPEC B5, W1-W4: token in the first message,
never in the URL; reconnect with capped exponential backoff and jitter, from
``session.wire``; resume the same session id after a drop; answer heartbeats and treat a
silent backend as dead; nothing sent unasked beyond ``hello`` and ``pong``), and every other
frame handed to the runtime's own ``connection.PageConnection``.

Written against the small ``Transport`` interface so the state machine is testable on CPython.
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
    ChatEvent,
    ErrorCode,
    ErrorMessage,
    Hello,
    PageAuditEvent,
    PageInfo,
    Ping,
    Pong,
    UserIdentity,
    Welcome,
    parse_server_message,
)
from . import wire
from .connection import PageConnection
from .dispatcher import Dispatcher

HANDSHAKE_TIMEOUT_S = wire.HANDSHAKE_TIMEOUT_MS / 1000
# Refusals that another attempt with the same credentials cannot fix.
FINAL_REFUSALS = frozenset(ErrorCode(code) for code in wire.FINAL_REFUSALS)


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
    initial_s: float = wire.BACKOFF_INITIAL_MS / 1000
    factor: float = wire.BACKOFF_FACTOR
    cap_s: float = wire.BACKOFF_CAP_MS / 1000
    jitter: float = wire.BACKOFF_JITTER

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
        self._connection = PageConnection(dispatcher, self._send, on_chat_event=on_chat_event)
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

    def _send(self, text: str) -> bool:
        if self.state is not ClientState.CONNECTED or self._transport is None:
            return False
        self._transport.send(text)
        return True

    def send_chat(self, text: str, message_id: str | None = None) -> bool:
        """``PageConnection.send_chat``."""
        return self._connection.send_chat(text, message_id)

    def send_audit(self, event: PageAuditEvent) -> bool:
        """``PageConnection.send_audit``."""
        return self._connection.send_audit(event)

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
            self._set_state(ClientState.CONNECTED)
            self._connection.welcomed(message.session_id)
            self._on_ready(message.session_id)
            try:
                ended = await self._serve(transport, message.heartbeat_interval_ms / 1000)
                if not self._stopped:
                    self._on_dropped(ended)
            finally:
                self._connection.dropped()
            return "welcomed"
        finally:
            transport.close()
            self._transport = None

    async def _serve(self, transport: Transport, heartbeat_s: float) -> str:
        """Answer the backend until the connection ends; returns why it ended."""
        # A backend silent for three heartbeats is dead (W4): drop and reconnect.
        silence_limit = max(heartbeat_s * wire.SILENT_HEARTBEATS, 1.0)
        while not self._stopped:
            try:
                raw = await asyncio.wait_for(transport.receive(), silence_limit)
            except TimeoutError:
                return f"the backend was silent for {silence_limit:.0f} s"
            if raw is None:
                code = getattr(transport, "close_code", None)
                return "the connection closed" + (f" (code {code})" if code is not None else "")
            ping = self._parse(raw)
            if isinstance(ping, Ping):
                transport.send(Pong(ts=ping.ts, page=self._page_info()).to_json())
                continue
            # Everything else, errors from the backend about our frames included, is the
            # connection's (it ignores what it does not serve).
            self._connection.receive(raw)
        return "stopped"

    @staticmethod
    def _parse(raw: str) -> Any:
        try:
            return parse_server_message(raw)
        except ValidationError:
            return None
