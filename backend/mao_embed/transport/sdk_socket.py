"""The SDK WebSocket endpoint ``/ws/sdk``: handshake, authentication, framing, heartbeat.

Lifecycle (see the ``mao_page.protocol`` docstring):

1. Origin is checked against the allowlist before the upgrade is accepted; a refused
   handshake never reaches application code (SPEC B5).
2. The first frame must be ``hello`` within ``hello_timeout_ms``, with our protocol version
   and a token whose user, agent and (if bound) origin match the hello. Refusals send one
   ``error`` message and close with 1008.
3. Afterwards every frame is size-checked, rate-limited and parsed with the shared protocol
   models. A bad frame gets an ``invalid_request`` error naming the bad fields and the
   connection stays up: one malformed result must not cost the user their session.
4. The backend pings every ``heartbeat_interval_ms``; after ``heartbeat_misses`` unanswered
   pings the page is treated as dead (SPEC W4). One timer serves every connection
   (``heartbeat`` module).

This module only moves messages; all request state lives in ``Relay``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from typing import Any

from mao_page.protocol import (
    PROTOCOL_VERSION,
    ChatControl,
    ChatMessage,
    ErrorCode,
    ErrorMessage,
    Hello,
    PageAuditEvent,
    PageReady,
    PageToolResult,
    Ping,
    Pong,
    SiteContext,
    Welcome,
    WireModel,
    describe_validation_error,
    parse_client_message,
)
from pydantic import ValidationError
from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketDisconnected

from mao_embed.agents.chat_loop import ChatAgent
from mao_embed.audit import AuditEvent, AuditLog, AuditWriteError
from mao_embed.config import ServerConfig, normalize_origin
from mao_embed.relay.local import CloseCode, Relay, TransportClosed, is_valid_request_id
from mao_embed.security.origins import OriginPolicy
from mao_embed.security.tokens import TokenError, verify_token
from mao_embed.transport.heartbeat import Heartbeat

logger = logging.getLogger(__name__)

_MAX_ERROR_CHARS = 1000
# The head of a page_tool_result frame as the SDK writes it: type, then requestId (compact
# JSON; whitespace allowed as any JSON writer may put it).
_RESULT_HEAD = re.compile(
    r'\s*\{\s*"type"\s*:\s*"page_tool_result"\s*,\s*"requestId"\s*:\s*"([A-Za-z0-9_.:-]{1,80})"'
)
# ``_Connection._answered`` is pruned to the still-pending requestIds past this size.
_ANSWERED_KEPT = 256


class HandshakeRefused(Exception):
    """The hello cannot open a session; carries the code sent to the page."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class WebSocketTransport:
    """``SessionTransport`` over a Starlette WebSocket.

    Sends are serialized with a lock because the relay, the heartbeat and the receive loop
    all write to the same socket. Nothing goes out before ``open()``, so a tool request can
    never overtake the ``welcome`` that tells the page its sessionId.
    """

    __slots__ = ("_lock", "_open", "_opened", "_websocket", "closed")

    def __init__(self, websocket: WebSocket) -> None:
        self._websocket = websocket
        self._lock = asyncio.Lock()
        self._open = False
        # Created only if something is sent before ``open()``: an asyncio.Event per
        # connection kept an empty deque (~0.8 kB) for the life of every session.
        self._opened: asyncio.Future[None] | None = None
        self.closed = False

    def open(self) -> None:
        self._open = True
        if self._opened is not None:
            if not self._opened.done():
                self._opened.set_result(None)
            self._opened = None

    async def send(self, message: WireModel | dict[str, Any] | str) -> None:
        if not self._open:
            if self._opened is None:
                self._opened = asyncio.get_running_loop().create_future()
            # shield: one cancelled sender must not cancel the wait of the others.
            await asyncio.shield(self._opened)
        await self.send_now(message)

    async def send_now(self, message: WireModel | dict[str, Any] | str) -> None:
        if self.closed:
            raise TransportClosed
        if isinstance(message, str):
            text = message  # serialized already
        elif isinstance(message, WireModel):
            text = message.to_json()
        else:
            text = json.dumps(message, separators=(",", ":"), ensure_ascii=False)
        async with self._lock:
            try:
                await self._websocket.send_text(text)
            except (WebSocketDisconnect, WebSocketDisconnected) as error:
                self.closed = True
                raise TransportClosed from error

    async def close(self, code: int, reason: str) -> None:
        if self.closed:
            return
        self.closed = True
        async with self._lock:
            try:
                await self._websocket.close(code=code, reason=reason)
            except (WebSocketDisconnect, WebSocketDisconnected):
                return


class _InboundRateLimit:
    """Token bucket over inbound frames; a page only answers what it was asked (SPEC W4)."""

    __slots__ = ("_burst", "_last_warning", "_rate", "_stamp", "_tokens")

    def __init__(self, rate_per_s: float, burst: int) -> None:
        self._rate = rate_per_s
        self._burst = float(burst)
        self._tokens = float(burst)
        self._stamp = time.monotonic()
        self._last_warning = 0.0

    def allow(self) -> bool:
        now = time.monotonic()
        self._tokens = min(self._burst, self._tokens + (now - self._stamp) * self._rate)
        self._stamp = now
        if self._tokens >= 1:
            self._tokens -= 1
            return True
        return False

    def should_warn(self) -> bool:
        """At most one ``rate_limited`` error per second, so warnings cannot flood back."""
        now = time.monotonic()
        if now - self._last_warning >= 1.0:
            self._last_warning = now
            return True
        return False


class SdkSocket:
    def __init__(
        self,
        config: ServerConfig,
        relay: Relay,
        origins: OriginPolicy,
        audit: AuditLog,
        chat: ChatAgent,
    ) -> None:
        self._config = config
        self._relay = relay
        self._origins = origins
        self._audit = audit
        self._chat = chat
        self._heartbeat = Heartbeat(config.heartbeat_interval_ms / 1000, config.heartbeat_misses)

    async def handle(self, websocket: WebSocket) -> None:
        origin = websocket.headers.get("origin")
        if not self._origins.allows(origin):
            _record(self._audit, 
                AuditEvent.CONNECTION_REFUSED,
                origin=(origin or "")[:200],
                code=ErrorCode.ORIGIN_NOT_ALLOWED.value,
                detail="Origin not in the allowlist",
            )
            # Closing before accept makes the server answer the upgrade with HTTP 403.
            await websocket.close(code=CloseCode.POLICY_VIOLATION)
            return
        assert origin is not None
        await websocket.accept()
        transport = WebSocketTransport(websocket)
        try:
            hello = await self._receive_hello(websocket, normalize_origin(origin))
        except HandshakeRefused as refusal:
            _record(self._audit, 
                AuditEvent.CONNECTION_REFUSED,
                origin=origin,
                code=refusal.code.value,
                detail=refusal.message,
            )
            await _send_error_and_close(transport, refusal.code, refusal.message)
            return
        except (WebSocketDisconnect, WebSocketDisconnected):
            return
        if hello is None:
            return
        attachment = await self._relay.attach(hello, normalize_origin(origin), transport)
        try:
            await transport.send_now(
                Welcome(
                    session_id=attachment.session_id,
                    heartbeat_interval_ms=self._config.heartbeat_interval_ms,
                    resumed=attachment.resumed,
                ).to_wire()
            )
        except TransportClosed:
            self._relay.detach(attachment.session_id, transport, reason="closed during welcome")
            return
        transport.open()
        connection = _Connection(
            self._config,
            self._relay,
            self._audit,
            self._chat,
            self._heartbeat,
            websocket,
            transport,
            attachment.session_id,
        )
        # This frame lives as long as the connection: keep only what it needs.
        del hello, attachment
        await connection.run()

    async def _receive_hello(self, websocket: WebSocket, origin: str) -> Hello | None:
        try:
            async with asyncio.timeout(self._config.hello_timeout_ms / 1000):
                message = await websocket.receive()
        except TimeoutError:
            raise HandshakeRefused(
                ErrorCode.TIMEOUT,
                f"no hello within {self._config.hello_timeout_ms} ms of connecting",
            ) from None
        if message["type"] == "websocket.disconnect":
            return None
        data = _frame_data(message)
        if _frame_size(data) > self._config.max_message_bytes:
            raise HandshakeRefused(ErrorCode.MESSAGE_TOO_LARGE, "hello is larger than allowed")
        # Check the version before the schema: a future SDK's hello may carry fields this
        # backend does not know, and "protocol_mismatch" is the answer that helps it.
        version = _peek(data, "protocolVersion")
        if _peek(data, "type") == "hello" and version is not None and version != PROTOCOL_VERSION:
            raise HandshakeRefused(
                ErrorCode.PROTOCOL_MISMATCH,
                f"backend speaks protocol version {PROTOCOL_VERSION}, the page sent {version!r}",
            )
        try:
            hello = parse_client_message(data)
        except ValidationError as error:
            raise HandshakeRefused(
                ErrorCode.INVALID_REQUEST, f"bad hello: {describe_validation_error(error)}"
            ) from None
        if not isinstance(hello, Hello):
            raise HandshakeRefused(ErrorCode.INVALID_REQUEST, "the first message must be hello")
        if hello.protocol_version != PROTOCOL_VERSION:
            raise HandshakeRefused(
                ErrorCode.PROTOCOL_MISMATCH,
                f"this backend speaks protocol version {PROTOCOL_VERSION}",
            )
        try:
            claims = verify_token(self._config.secret, hello.token)
        except TokenError as error:
            raise HandshakeRefused(
                ErrorCode.UNAUTHORIZED, f"token refused: {error.reason}"
            ) from None
        if claims.user_id != hello.user.id:
            raise HandshakeRefused(ErrorCode.UNAUTHORIZED, "token was issued for another user")
        if claims.agent_id != hello.agent_id:
            raise HandshakeRefused(ErrorCode.UNAUTHORIZED, "token was issued for another agent")
        if claims.origin is not None and normalize_origin(claims.origin) != origin:
            raise HandshakeRefused(ErrorCode.UNAUTHORIZED, "token was issued for another origin")
        return hello


class _Connection:
    """One authenticated page connection after ``welcome``; a ``HeartbeatPeer``."""

    __slots__ = (
        "_audit",
        "_chat",
        "_config",
        "_heartbeat",
        "_ping",
        "_answered",
        "_rate",
        "_relay",
        "_session_id",
        "_transport",
        "_websocket",
        "missed_pings",
    )

    def __init__(
        self,
        config: ServerConfig,
        relay: Relay,
        audit: AuditLog,
        chat: ChatAgent,
        heartbeat: Heartbeat,
        websocket: WebSocket,
        transport: WebSocketTransport,
        session_id: str,
    ) -> None:
        self._config = config
        self._relay = relay
        self._audit = audit
        self._chat = chat
        self._heartbeat = heartbeat
        self._websocket = websocket
        self._transport = transport
        self._session_id = session_id
        self.missed_pings = 0
        self._rate = _InboundRateLimit(config.inbound_rate_per_s, config.inbound_burst)
        # requestIds whose answer passed the rate limit (``_answers_a_pending_request``).
        self._answered: set[str] = set()
        # The ping being sent (held here: the loop keeps only weak references to tasks).
        self._ping: asyncio.Task[None] | None = None

    async def run(self) -> None:
        self._heartbeat.add(self)
        reason = "connection ended"
        close_code: int | None = None
        try:
            reason, close_code = await self._receive_loop()
        except (WebSocketDisconnect, WebSocketDisconnected, TransportClosed):
            reason = "connection lost"
        finally:
            self._heartbeat.remove(self)
            if self._ping is not None:
                self._ping.cancel()
            # SPEC B7: the page closes with NAVIGATING when its document unloads; the tab's
            # next page resumes the session.
            navigating = close_code == CloseCode.NAVIGATING
            self._relay.detach(
                self._session_id,
                self._transport,
                reason="page left (navigation, reload or tab closed)" if navigating else reason,
                navigating=navigating,
            )

    def send_ping(self) -> None:
        if self._ping is not None and not self._ping.done():
            # The last ping is still stuck in a slow socket; another would only queue behind
            # it. The miss still counts, so a page that stopped reading is found dead.
            return
        self._ping = asyncio.get_running_loop().create_task(self._send_ping())

    async def _send_ping(self) -> None:
        try:
            await self._transport.send(Ping(ts=time.time() * 1000))
        except TransportClosed:
            return

    def heartbeat_timeout(self) -> None:
        logger.info("session %s missed %d pings", self._session_id, self.missed_pings)
        self._relay.disconnect(
            self._session_id,
            self._transport,
            CloseCode.HEARTBEAT_TIMEOUT,
            "heartbeat timeout",
            reason="heartbeat timeout",
        )

    async def _receive_loop(self) -> tuple[str, int | None]:
        while True:
            message = await self._websocket.receive()
            if message["type"] == "websocket.disconnect":
                code = message.get("code", 1005)
                return f"page closed the connection (code {code})", code
            # Any frame from the page proves it is alive, not only pong.
            self.missed_pings = 0
            if not self._rate.allow() and not self._answers_a_pending_request(message):
                if self._rate.should_warn():
                    await self._send_error(
                        ErrorCode.RATE_LIMITED, "too many messages; frames dropped"
                    )
                continue
            data = _frame_data(message)
            if _frame_size(data) > self._config.max_message_bytes:
                _record(self._audit, 
                    AuditEvent.FRAME_REJECTED,
                    session_id=self._session_id,
                    code=ErrorCode.MESSAGE_TOO_LARGE.value,
                )
                await _send_error_and_close(
                    self._transport,
                    ErrorCode.MESSAGE_TOO_LARGE,
                    f"message larger than {self._config.max_message_bytes} bytes",
                    close_code=CloseCode.MESSAGE_TOO_BIG,
                )
                return "message too large", None
            try:
                parsed = parse_client_message(data)
            except ValidationError as error:
                await self._send_error(
                    ErrorCode.INVALID_REQUEST,
                    describe_validation_error(error),
                    request_id=_peek_request_id(data),
                )
                continue
            await self._dispatch(parsed)

    def _answers_a_pending_request(self, message: dict[str, Any]) -> bool:
        """A frame over the rate limit still passes if it is the first to answer a request
        that was sent to this page and is pending (SPEC W4): the page may answer what it was
        asked however fast an agent asks, and a dropped answer left the agent's call waiting
        for its timeout. Read from the frame's head without parsing it (the SDK writes
        ``type`` then ``requestId`` first); one pass per requestId, so a page cannot send
        many frames in the name of one request."""
        text = message.get("text")
        head = _RESULT_HEAD.match(text) if text is not None else None
        if head is None:
            return False
        request_id = head[1]
        if request_id in self._answered or not self._relay.is_pending(
            self._session_id, request_id
        ):
            return False
        if len(self._answered) >= _ANSWERED_KEPT:
            self._answered = {
                r for r in self._answered if self._relay.is_pending(self._session_id, r)
            }
        self._answered.add(request_id)
        return True

    async def _dispatch(self, parsed: Any) -> None:
        if isinstance(parsed, PageToolResult):
            self._relay.accept_result(self._session_id, parsed)
        elif isinstance(parsed, Pong):
            self._relay.touch(self._session_id, parsed.page)
        elif isinstance(parsed, Ping):
            self._relay.touch(self._session_id)
            await self._transport.send(Pong(ts=parsed.ts))
        elif isinstance(parsed, ChatMessage):
            # The user typed in the panel: the agent loop answers with chat_events (SPEC B3).
            self._chat.submit(self._session_id, parsed)
        elif isinstance(parsed, ChatControl):
            # The panel's conversation: history, new, delete, stop (SPEC U5, U3).
            self._chat.control(self._session_id, parsed)
        elif isinstance(parsed, PageAuditEvent):
            self._record_page_audit(parsed)
        elif isinstance(parsed, PageReady):
            self._page_ready(parsed)
        elif isinstance(parsed, SiteContext):
            # The page's WebMCP tools and instructions (docs/site-tools.md).
            self._relay.set_site_context(self._session_id, parsed)
        elif isinstance(parsed, Hello):
            await self._send_error(ErrorCode.INVALID_REQUEST, "hello was already received")

    def _page_ready(self, message: PageReady) -> None:
        """The page's runtime booted (SPEC E6): the session is ready, and the boot audited."""
        if not self._relay.mark_ready(self._session_id, message.page):
            return
        self._record_as_session(
            AuditEvent.PAGE_BOOT,
            code=message.trigger,
            duration_ms=message.boot_ms,
            detail=message.mode,
        )

    def _record_as_session(self, event: AuditEvent, **values: Any) -> None:
        """An audit record of what this page did, under its session's identity: the page
        cannot claim another user's."""
        session = self._relay.get_session(self._session_id)
        _record(self._audit,
            event,
            session_id=self._session_id,
            user_id=session.user_id if session else None,
            agent_id=session.agent_id if session else None,
            origin=session.origin if session else None,
            **values,
        )

    def _record_page_audit(self, event: PageAuditEvent) -> None:
        """SPEC P6: the user's grants, revocations, level changes, confirmations and each
        action the page ran go to the backend audit log, under the session's identity (the
        page cannot claim another user's). Only labels and outcomes, never typed values."""
        detail = {
            k: v
            for k, v in event.to_wire().items()
            if k not in ("type", "kind", "requestId", "outcome", "durationMs", "action")
        }
        self._record_as_session(
            AuditEvent.PAGE_AUTHORIZATION if event.kind != "action" else AuditEvent.PAGE_ACTION,
            request_id=event.request_id,
            tool=event.action,
            code=event.outcome or str(event.kind),
            duration_ms=event.duration_ms,
            detail=json.dumps(detail, ensure_ascii=False)[:1000],
        )

    async def _send_error(
        self, code: ErrorCode, message: str, request_id: str | None = None
    ) -> None:
        _record(self._audit, 
            AuditEvent.FRAME_REJECTED,
            session_id=self._session_id,
            request_id=request_id,
            code=code.value,
            detail=message[:500],
        )
        try:
            await self._transport.send(
                # Capped: pydantic quotes bad input (e.g. an unknown 'type'), and an error
                # must not cost more than the frame that caused it.
                ErrorMessage(
                    code=code, message=message[:_MAX_ERROR_CHARS], request_id=request_id
                ).to_wire()
            )
        except TransportClosed:
            return


async def _send_error_and_close(
    transport: WebSocketTransport,
    code: ErrorCode,
    message: str,
    close_code: int = CloseCode.POLICY_VIOLATION,
) -> None:
    try:
        await transport.send_now(ErrorMessage(code=code, message=message))
    except TransportClosed:
        return
    await transport.close(close_code, code.value)


def _frame_data(message: dict[str, Any]) -> str | bytes:
    text = message.get("text")
    return text if text is not None else (message.get("bytes") or b"")


def _frame_size(data: str | bytes) -> int:
    # A str frame's wire size is its UTF-8 length; checking len(str) would undercount.
    return len(data) if isinstance(data, bytes) else len(data.encode("utf-8"))


def _peek(data: str | bytes, key: str) -> Any:
    """Read one top-level field of a frame without validating it (for error reporting)."""
    try:
        value = json.loads(data)
    except (ValueError, UnicodeDecodeError, RecursionError):
        # RecursionError: a frame of deeply nested arrays (found by the fuzz tests) must get
        # its invalid_request answer like any other bad frame, not end the connection.
        return None
    return value.get(key) if isinstance(value, dict) else None


def _peek_request_id(data: str | bytes) -> str | None:
    value = _peek(data, "requestId")
    return value if isinstance(value, str) and is_valid_request_id(value) else None


def _record(audit: AuditLog, event: AuditEvent, **values: Any) -> None:
    """Audit one connection event. A record the journal could not take (disk full) has been
    logged by the audit log; the connection goes on, as refusing or closing it would not bring
    the record back."""
    try:
        audit.record(event, **values)
    except AuditWriteError:
        return
