"""Session registry and request/response correlation between agents and pages (SPEC B2, W1-W4).

The relay owns every piece of per-session state: which pages are connected, which requests
are in flight, which results were already given. Transports (the WebSocket endpoint) only
feed it parsed messages, and agents (HTTP API, MCP, Python callers) only call
``Relay.call_tool``. Everything runs on one event loop, so no locks are needed.

Guarantees (tested in ``tests/backend/test_relay.py`` and ``test_sdk_socket.py``):

- ``call_tool`` always returns a ``PageToolResult``; expected failures are results with a
  stable error code, never exceptions (SPEC A6).
- A repeated requestId returns the first result, or awaits the same in-flight future; the
  page sees the request once (SPEC W2). Results are cached per session in a bounded LRU, as
  JSON text: a str is invisible to the garbage collector, while a cached model was four
  tracked objects, and the caches of busy sessions made every older-generation collection
  walk hundreds of thousands of them (tens of ms per pass at 500 sessions).
- A request that outlives its timeout ends with ``timeout`` and a ``cancel`` is sent to the
  page; a connection that drops ends its requests with ``disconnected`` and
  ``details.mayHaveApplied`` for writes. Nothing is ever re-sent (SPEC W3).
- A result is accepted only from the session its request was sent to; unknown, late and
  duplicate results are ignored and audited.
- A page that reconnects within the resume window with the same user, agent and origin gets
  its sessionId back, and with it the result cache, so a retried requestId still answers
  ``disconnected`` instead of replaying a write (SPEC W3, W4).
- A tab is one session through full navigations (SPEC B7): a page that leaves (it closes with
  ``NAVIGATING``) ends its calls in flight with ``navigated`` (``mayHaveApplied`` for writes,
  never replayed); a call made before the tab's next page resumes the session waits for it,
  within its own timeout, and runs there; a next page never takes over a session that another
  live connection holds (a duplicated tab copies sessionStorage): it gets a new session.
- ``call_tool`` returns only after the tool call's audit record is in the audit journal, so
  no answered call is missing from the audit log after a crash (SPEC P6; ``audit`` module
  docstring).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import re
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Coroutine
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import IntEnum
from typing import Any, NamedTuple, Protocol

from mao_page.protocol import (
    ArgumentError,
    Cancel,
    ErrorCode,
    Hello,
    PageInfo,
    PageToolRequest,
    PageToolResult,
    SiteContext,
    SiteTool,
    ToolError,
    ToolName,
    WireModel,
    build_request,
)

from mao_embed.audit import AuditEvent, AuditLog, AuditWriteError

logger = logging.getLogger(__name__)

_REQUEST_ID = re.compile(r"[A-Za-z0-9_.:\-]{1,80}")
# The page tools, and the request kind that runs one of the page's site tools
# (``call_site_tool``; docs/site-tools.md).
_TOOL_NAMES = frozenset(t.value for t in ToolName) | {SiteTool.RUN.value}


class CloseCode(IntEnum):
    """WebSocket close codes the backend uses; the SDK decides from these whether to retry."""

    NORMAL = 1000
    GOING_AWAY = 1001
    POLICY_VIOLATION = 1008
    MESSAGE_TOO_BIG = 1009
    # Application range (RFC 6455 §7.4.2): the page went silent; it should reconnect and resume.
    HEARTBEAT_TIMEOUT = 4000
    # The same session resumed on a newer connection; the old one must not reconnect.
    REPLACED = 4001
    # Sent by the page when its document unloads (``mao_page.session.wire.CLOSE_NAVIGATING``).
    NAVIGATING = 4002


# How long a next page's hello waits for the previous page's connection of the same session
# to close, before it is taken for a duplicated tab and given a new session: the old page
# closes at pagehide, long before the next one connects, but over another TCP connection.
_NAVIGATION_HANDOVER_S = 2.0
# How long a chat event for a page between two documents waits for the next one: the chat
# loop's turn goes on across the navigation its own tool call caused (SPEC B7).
NOTIFY_NEXT_PAGE_WAIT_MS = 15_000


class TransportClosed(Exception):
    """The connection to the page is gone; nothing more can be sent on it."""


# Sees every page result before the relay settles it (``Relay.add_result_listener``).
ResultListener = Callable[[str, PageToolResult], bool]
# Told the session id whenever a page's site tools change (``Relay.add_site_tools_listener``).
SiteToolsListener = Callable[[str], None]


class SessionTransport(Protocol):
    """What the relay needs from a connection: send one message, close it.

    Protocol messages are passed as models so the transport can serialize them in one step
    (``WireModel.to_json``) instead of building a dict first; backend-initiated messages
    (``notify``) and ``mao_embed.testing.RelayProbe`` pass dicts; a str is a message's JSON
    already (a ``ForwardedRequest``'s frame).
    """

    async def send(self, message: WireModel | dict[str, Any] | str) -> None: ...

    async def close(self, code: int, reason: str) -> None: ...


@dataclass(frozen=True, slots=True)
class SessionIdentity:
    user_id: str
    agent_id: str
    origin: str


@dataclass(frozen=True, slots=True)
class SessionInfo:
    session_id: str
    user_id: str
    agent_id: str
    origin: str
    url: str
    title: str
    ready: bool
    connected_at: float
    # Cluster mode: the instance the page's WebSocket is on (an additive field).
    instance: str | None = None

    def to_wire(self) -> dict[str, Any]:
        """The CONTRACT shape of one ``GET /api/sessions`` entry."""
        wire = {
            "sessionId": self.session_id,
            "userId": self.user_id,
            "agentId": self.agent_id,
            "origin": self.origin,
            "url": self.url,
            "title": self.title,
            "ready": self.ready,
            "connectedAt": datetime.fromtimestamp(self.connected_at, UTC)
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
        }
        if self.instance is not None:
            wire["instance"] = self.instance
        return wire


@dataclass(frozen=True, slots=True)
class Attachment:
    session_id: str
    resumed: bool


class ForwardedRequest(NamedTuple):
    """A request another instance of the cluster built and validated (``build_request``) for
    a page here: what the relay needs to know of it, and ``frame``, its JSON as the page gets
    it. It is not validated again: only instances of the cluster reach this one (``cluster``
    module docstring), and the page checks every request it is sent."""

    request_id: str
    session_id: str
    tool: str
    timeout_ms: int
    is_write: bool
    frame: str


@dataclass(frozen=True, slots=True)
class _Pending:
    request: PageToolRequest | ForwardedRequest
    # One future per caller waiting for this requestId (the first caller, then any repeat of
    # the requestId while in flight): each gets the result once its audit record committed.
    # Separate futures, so a cancelled caller cancels only its own wait.
    waiters: list[asyncio.Future[PageToolResult]]
    timer: asyncio.TimerHandle
    started: float


@dataclass(frozen=True, slots=True)
class _Detached:
    identity: SessionIdentity
    dropped_at: float
    completed: OrderedDict[str, str]
    # The page left its document (a navigation, a reload, the tab closing): calls wait for the
    # tab's next page instead of answering ``session_not_found`` (SPEC B7).
    navigating: bool = False


class _Session:
    """Mutable state of one connected page; lives only inside the relay."""

    __slots__ = (
        "completed",
        "connected_at",
        "identity",
        "last_seen",
        "pending",
        "ready",
        "session_id",
        "site_context",
        "title",
        "transport",
        "url",
    )

    def __init__(
        self,
        session_id: str,
        identity: SessionIdentity,
        transport: SessionTransport,
        page: PageInfo,
        completed: OrderedDict[str, str],
        now: float,
        ready: bool,
    ) -> None:
        self.session_id = session_id
        self.identity = identity
        self.transport = transport
        self.url = page.url
        self.title = page.title
        # False until the page's runtime has booted (SPEC E6: it boots on first use); a tool
        # call to it boots it and is answered when ready.
        self.ready = ready
        self.connected_at = time.time()
        self.last_seen = now
        self.pending: dict[str, _Pending] = {}
        self.completed = completed
        # The page's site tools and init({instructions}), as its loader last sent them.
        self.site_context: SiteContext | None = None

    def info(self) -> SessionInfo:
        return SessionInfo(
            session_id=self.session_id,
            user_id=self.identity.user_id,
            agent_id=self.identity.agent_id,
            origin=self.identity.origin,
            url=self.url,
            title=self.title,
            ready=self.ready,
            connected_at=self.connected_at,
        )


def failure(
    request_id: str, code: ErrorCode, message: str, details: dict[str, Any] | None = None
) -> PageToolResult:
    return PageToolResult(
        request_id=request_id,
        success=False,
        error=ToolError(code=code, message=message, details=details),
    )


def is_valid_request_id(request_id: str) -> bool:
    return _REQUEST_ID.fullmatch(request_id) is not None


# Request ids are correlation handles, not secrets (a page can only answer its own requests),
# so a random per-process prefix and a counter do; a urandom call per tool call was measurable.
_REQUEST_PREFIX = f"req-{secrets.token_hex(4)}-"
_request_numbers = itertools.count(1)


def new_request_id() -> str:
    return f"{_REQUEST_PREFIX}{next(_request_numbers)}"


class Relay:
    def __init__(
        self,
        *,
        audit: AuditLog | None = None,
        default_timeout_ms: int = 30_000,
        resume_window_ms: int = 60_000,
        completed_cache_size: int = 1000,
        response_grace_ms: int = 500,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._audit = audit
        self.default_timeout_ms = default_timeout_ms
        self._resume_window_s = resume_window_ms / 1000
        self._cache_size = completed_cache_size
        # The page enforces timeoutMs itself and answers ``timeout``; the relay waits a little
        # longer so the page's own answer (which may say what was applied) wins the race.
        self._grace_s = response_grace_ms / 1000
        self._clock = clock
        self._sessions: dict[str, _Session] = {}
        self._detached: dict[str, _Detached] = {}
        self._session_added = asyncio.Event()
        self._background: set[asyncio.Task[Any]] = set()
        self._result_listeners: list[ResultListener] = []
        self._site_tools_listeners: list[SiteToolsListener] = []
        # Calls waiting for a session between two pages of its tab, woken by ``attach``.
        self._returns: dict[str, list[asyncio.Future[None]]] = {}

    # ------------------------------------------------------------------ sessions

    def sessions(self) -> list[SessionInfo]:
        return [session.info() for session in self._sessions.values()]

    def get_session(self, session_id: str) -> SessionInfo | None:
        session = self._sessions.get(session_id)
        return session.info() if session else None

    async def list_sessions(self) -> list[dict[str, Any]]:
        """Every ready session an agent can reach, in the ``GET /api/sessions`` shape: this
        relay's; a cluster's relay lists every instance's (``cluster.ClusterRelay``)."""
        return [info.to_wire() for info in self.sessions()]

    async def find_session(self, session_id: str) -> dict[str, Any] | None:
        """One entry of ``list_sessions``, or None."""
        info = self.get_session(session_id)
        return info.to_wire() if info is not None else None

    async def wait_for_session(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        exclude: Collection[str] = (),
        timeout_s: float = 30.0,
    ) -> SessionInfo:
        """The first connected session matching the filters; raises ``TimeoutError``."""
        async with asyncio.timeout(timeout_s):
            while True:
                for info in self.sessions():
                    if (
                        info.session_id not in exclude
                        and user_id in (None, info.user_id)
                        and agent_id in (None, info.agent_id)
                    ):
                        return info
                self._session_added.clear()
                await self._session_added.wait()

    async def attach(
        self, hello: Hello, origin: str, transport: SessionTransport, *, adopt: bool = False
    ) -> Attachment:
        """Register an authenticated page; resume its old sessionId when allowed (SPEC W4).

        ``adopt``: the cluster checked that the wanted sessionId was this identity's on
        another instance, so it is resumed here although this relay never knew it."""
        self._purge_detached()
        identity = SessionIdentity(hello.user.id, hello.agent_id, origin)
        session_id: str | None = None
        completed: OrderedDict[str, str] = OrderedDict()
        wanted = hello.resume_session_id
        refused_why = ""
        if wanted and hello.resume_kind == "navigation":
            if await self._still_held(wanted, identity):
                # Another tab holds it: a duplicate copied this tab's sessionStorage.
                refused_why = "; another live page holds it (a duplicated tab)"
                wanted = None
        if wanted:
            live = self._sessions.get(wanted)
            if live is not None and live.identity == identity:
                # The page noticed the drop before we did: its old socket is half-dead.
                # End that connection's requests as disconnected, then take the id over.
                self.disconnect(
                    wanted,
                    live.transport,
                    CloseCode.REPLACED,
                    "session resumed elsewhere",
                    reason="replaced by a resumed connection",
                )
            detached = self._detached.get(wanted)
            if detached is not None and detached.identity == identity:
                del self._detached[wanted]
                session_id = wanted
                completed = detached.completed
            elif adopt and wanted not in self._sessions:
                session_id = wanted
        resumed = session_id is not None
        if session_id is None:
            session_id = f"ses-{secrets.token_hex(10)}"
        session = _Session(
            session_id, identity, transport, hello.page, completed, self._clock(), hello.ready
        )
        self._sessions[session_id] = session
        self._session_added.set()
        for waiter in self._returns.pop(session_id, ()):
            if not waiter.done():
                waiter.set_result(None)
        if refused_why:
            detail: str | None = f"resume of {hello.resume_session_id} refused{refused_why}"
        elif wanted and not resumed:
            detail = f"resume of {wanted} refused"
        elif resumed and hello.resume_kind == "navigation":
            detail = "the tab's next page"
        else:
            detail = None
        self._record(
            AuditEvent.SESSION_RESUMED if resumed else AuditEvent.SESSION_CONNECTED,
            session_id=session_id,
            user_id=identity.user_id,
            agent_id=identity.agent_id,
            origin=origin,
            detail=detail,
        )
        return Attachment(session_id=session_id, resumed=resumed)

    async def _still_held(self, session_id: str, identity: SessionIdentity) -> bool:
        """Whether a live connection still holds ``session_id`` after the handover time: the
        page that left closes its connection at pagehide, but that close travels on another
        TCP connection than the next page's hello and may be read after it."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + _NAVIGATION_HANDOVER_S
        while True:
            live = self._sessions.get(session_id)
            if live is None or live.identity != identity:
                return False
            if loop.time() >= deadline:
                return True
            await asyncio.sleep(0.02)

    def detach(
        self,
        session_id: str,
        transport: SessionTransport,
        *,
        reason: str,
        navigating: bool = False,
    ) -> None:
        """The page's connection ended: fail what is pending, keep the id resumable.
        ``navigating``: the page left its document (SPEC B7); what was in flight answers
        ``navigated``, and calls wait for the tab's next page.

        Only the connection currently owning the session can detach it, so a stale
        connection closing late cannot end a session that has already resumed elsewhere.
        """
        session = self._sessions.get(session_id)
        if session is None or session.transport is not transport:
            return
        del self._sessions[session_id]
        for request_id, pending in list(session.pending.items()):
            if navigating:
                answer = failure(
                    request_id,
                    ErrorCode.NAVIGATED,
                    "the page navigated away (or reloaded, or closed) before answering; the "
                    "request is not retried. Call page_inspect on the next page",
                    # SPEC W3: the action may be what navigated (a submit, a link).
                    {"mayHaveApplied": pending.request.is_write},
                )
            else:
                answer = failure(
                    request_id,
                    ErrorCode.DISCONNECTED,
                    "the page disconnected before answering; the request is not retried",
                    # SPEC W3: a write may have reached the page before the drop.
                    {"mayHaveApplied": pending.request.is_write},
                )
            self._settle(session, request_id, answer)
        self._detached[session_id] = _Detached(
            session.identity, self._clock(), session.completed, navigating
        )
        self._record(
            AuditEvent.SESSION_DISCONNECTED,
            session_id=session_id,
            user_id=session.identity.user_id,
            agent_id=session.identity.agent_id,
            origin=session.identity.origin,
            detail=reason,
        )
        self._purge_detached()

    def disconnect(
        self,
        session_id: str,
        transport: SessionTransport,
        code: int,
        close_reason: str,
        *,
        reason: str,
    ) -> None:
        """End a connection from the backend's side: detach it now, so its pending requests
        learn of the drop at once (SPEC W3), and close it in the background, because a dead
        or half-dead peer may never complete the close handshake."""
        self.detach(session_id, transport, reason=reason)
        self._spawn(_close_quietly(transport, code, close_reason))

    def touch(self, session_id: str, page: PageInfo | None = None) -> None:
        """A heartbeat answer: the page is alive, and maybe at a new URL or title."""
        session = self._sessions.get(session_id)
        if session is not None:
            self._seen(session, page)

    def _seen(self, session: _Session, page: PageInfo | None) -> None:
        session.last_seen = self._clock()
        if page is not None:
            session.url = page.url
            session.title = page.title

    def mark_ready(self, session_id: str, page: PageInfo | None = None) -> bool:
        """The page's runtime has booted (``page_ready``); False if the session is unknown."""
        session = self._sessions.get(session_id)
        if session is None:
            return False
        session.ready = True
        self._seen(session, page)
        return True

    # ------------------------------------------------------------------ site tools

    def set_site_context(self, session_id: str, context: SiteContext) -> None:
        """The page's site tools and instructions (its loader sends them on connecting and on
        every change); listeners hear of a changed tool list."""
        session = self._sessions.get(session_id)
        if session is None:
            return
        before = session.site_context.tools if session.site_context else []
        session.site_context = context
        if context.tools != before:
            for listener in list(self._site_tools_listeners):
                listener(session_id)

    def site_context(self, session_id: str) -> SiteContext | None:
        """What the page declared, or None for an unknown session; a page that declared
        nothing has an empty context."""
        session = self._sessions.get(session_id)
        if session is None:
            return None
        return session.site_context or SiteContext()

    async def find_site_context(self, session_id: str) -> SiteContext | None:
        """``site_context`` of any session an agent can reach: this relay's; a cluster's
        relay also reads another instance's pages' from Redis (``cluster.ClusterRelay``)."""
        return self.site_context(session_id)

    def add_site_tools_listener(self, listener: SiteToolsListener) -> Callable[[], None]:
        self._site_tools_listeners.append(listener)
        return lambda: self._site_tools_listeners.remove(listener)

    async def call_site_tool(
        self,
        session_id: str,
        name: str,
        arguments: dict[str, Any],
        *,
        request_id: str | None = None,
        timeout_ms: int | None = None,
    ) -> PageToolResult:
        """Run one of the page's site tools: ``call_tool`` with the ``site_tool`` request, so
        idempotency, timeouts, the audit and a cluster's forwarding hold as for page tools.
        The page checks ``arguments`` against the tool's schema and asks the user."""
        return await self.call_tool(
            session_id, SiteTool.RUN.value, {"name": name, "arguments": arguments},
            request_id=request_id, timeout_ms=timeout_ms,
        )

    async def close_all(self, code: int = CloseCode.GOING_AWAY, reason: str = "") -> None:
        for session in list(self._sessions.values()):
            transport = session.transport
            self.detach(session.session_id, transport, reason=reason or "server shutting down")
            await _close_quietly(transport, code, reason)

    # ------------------------------------------------------------------ tool calls

    async def call_tool(
        self,
        session_id: str,
        tool: str,
        args: dict[str, Any],
        *,
        request_id: str | None = None,
        timeout_ms: int | None = None,
    ) -> PageToolResult:
        """Run one page tool on one session and return its result (SPEC B2).

        ``args`` is the JSON object of tool arguments.

        Never raises for expected failures: unknown tool, bad arguments, unknown session,
        timeout and disconnect all come back as a failed ``PageToolResult``.
        """
        if request_id is None:
            request_id = new_request_id()
        elif not is_valid_request_id(request_id):
            return failure(
                new_request_id(),
                ErrorCode.INVALID_REQUEST,
                "requestId must be 1-80 characters of A-Z, a-z, 0-9, '_', '.', ':' or '-'",
            )
        if tool not in _TOOL_NAMES:
            return failure(
                request_id,
                ErrorCode.UNKNOWN_TOOL,
                f"unknown tool {tool!r}; the page tools are "
                f"{', '.join(sorted(t.value for t in ToolName))}",
            )
        session = self._sessions.get(session_id)
        timeout_ms = timeout_ms if timeout_ms is not None else self.default_timeout_ms
        if session is None and self._between_pages(session_id, request_id):
            waited_ms = await self.wait_for_next_page(session_id, timeout_ms)
            session = self._sessions.get(session_id)
            if session is None:
                return failure(
                    request_id,
                    ErrorCode.TIMEOUT,
                    f"the page left (a navigation, a reload or the tab closing) and no next page "
                    f"of its tab resumed the session within {timeout_ms} ms; nothing was sent",
                    {"mayHaveApplied": False, "reason": "navigated"},
                )
            timeout_ms = max(100, timeout_ms - waited_ms)
        known = self._known_answer(session, session_id, request_id, tool)
        if known is not None:
            return await known
        assert session is not None
        request = self._build_request(session_id, tool, args, request_id, timeout_ms)
        if isinstance(request, PageToolResult):
            return request
        return await self._dispatch(session, request)

    def _between_pages(self, session_id: str, request_id: str) -> bool:
        """The session's page left its document and the tab's next page has not resumed it
        yet (a repeated requestId is answered from the cache instead)."""
        detached = self._detached.get(session_id)
        return (
            detached is not None
            and detached.navigating
            and request_id not in detached.completed
            and self._clock() - detached.dropped_at < self._resume_window_s
        )

    async def wait_for_next_page(self, session_id: str, timeout_ms: int) -> int:
        """Wait until ``session_id`` is attached again, at most ``timeout_ms`` (SPEC B7: a call
        made while the tab's next page starts runs there). Returns the milliseconds waited."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        waiter: asyncio.Future[None] = loop.create_future()
        self._returns.setdefault(session_id, []).append(waiter)
        try:
            async with asyncio.timeout(timeout_ms / 1000):
                await waiter
        except TimeoutError:
            pass
        finally:
            waiters = self._returns.get(session_id)
            if waiters is not None and waiter in waiters:
                waiters.remove(waiter)
                if not waiters:
                    del self._returns[session_id]
        return round((loop.time() - started) * 1000)

    def _build_request(
        self,
        session_id: str,
        tool: str,
        args: dict[str, Any],
        request_id: str,
        timeout_ms: int | None,
    ) -> PageToolRequest | PageToolResult:
        """The request the page will see, or the ``invalid_request`` answer to send instead
        (also for a cluster's call to a page on another instance)."""
        try:
            return build_request(
                tool,
                args,
                request_id=request_id,
                session_id=session_id,
                timeout_ms=timeout_ms if timeout_ms is not None else self.default_timeout_ms,
            )
        except ArgumentError as error:
            return failure(request_id, ErrorCode.INVALID_REQUEST, str(error))

    async def call_request(self, request: PageToolRequest | ForwardedRequest) -> PageToolResult:
        """``call_tool`` for a request already built and validated (by another instance of
        a cluster), with the same guarantees."""
        session_id = request.session_id
        session = self._sessions.get(session_id)
        known = self._known_answer(session, session_id, request.request_id, request.tool)
        if known is not None:
            return await known
        assert session is not None
        return await self._dispatch(session, request)

    def _known_answer(
        self, session: _Session | None, session_id: str, request_id: str, tool: str
    ) -> asyncio.Future[PageToolResult] | None:
        """The answer of a call that is not sent to the page: the cached result of a repeated
        requestId, the shared wait for one in flight (SPEC W2), or ``session_not_found``.
        None when the request must be sent."""
        cached = self._cached_result(session, session_id, request_id)
        if cached is None and session is not None and request_id not in session.pending:
            return None
        waiter: asyncio.Future[PageToolResult] = asyncio.get_running_loop().create_future()
        if cached is not None:
            self._answer_after_audit(
                [waiter],
                cached,
                session_id=session_id,
                request_id=request_id,
                tool=tool,
                code=_code_of(cached),
                duration_ms=0.0,
                detail="repeated requestId answered with the first result",
            )
            return waiter
        if session is None:
            waiter.set_result(
                failure(
                    request_id,
                    ErrorCode.SESSION_NOT_FOUND,
                    f"no connected page session {session_id!r}",
                )
            )
            return waiter
        # SPEC W2: the same requestId is executed once; a second caller shares the answer.
        session.pending[request_id].waiters.append(waiter)
        return waiter

    async def _dispatch(
        self, session: _Session, request: PageToolRequest | ForwardedRequest
    ) -> PageToolResult:
        """Send a new request to the page and wait for its answer, its timeout or the drop."""
        loop = asyncio.get_running_loop()
        session_id = session.session_id
        request_id = request.request_id
        waiter: asyncio.Future[PageToolResult] = loop.create_future()
        timer = loop.call_later(
            request.timeout_ms / 1000 + self._grace_s, self._expire, session_id, request_id
        )
        session.pending[request_id] = _Pending(request, [waiter], timer, self._clock())
        try:
            await session.transport.send(
                request.frame if isinstance(request, ForwardedRequest) else request
            )
        except TransportClosed:
            # The socket died under us; whether any byte left is unknowable, so a write is
            # reported as possibly applied, like any other drop (SPEC W3).
            self._settle(
                session,
                request_id,
                failure(
                    request_id,
                    ErrorCode.DISCONNECTED,
                    "the page connection closed while sending the request",
                    {"mayHaveApplied": request.is_write},
                ),
            )
        # Only this caller's future: cancelling the caller leaves the request and any other
        # caller of the same requestId alone (what asyncio.shield did, with fewer hops).
        return await waiter

    async def cancel(self, session_id: str, request_id: str, reason: str = "") -> bool:
        """End an in-flight request with ``cancelled`` and tell the page to stop it (SPEC W3)."""
        session = self._sessions.get(session_id)
        if session is None or request_id not in session.pending:
            return False
        pending = session.pending[request_id]
        self._settle(
            session,
            request_id,
            failure(
                request_id,
                ErrorCode.CANCELLED,
                f"cancelled by the agent{': ' + reason if reason else ''}",
                {"mayHaveApplied": pending.request.is_write},
            ),
        )
        await self._send_cancel(session, request_id, reason or "cancelled by the agent")
        return True

    def accept_result(self, session_id: str, result: PageToolResult) -> None:
        """A page answered. Accept it only for a request pending on that same session."""
        session = self._sessions.get(session_id)
        if session is None:
            return
        request_id = result.request_id
        claimed = False
        if self._result_listeners:
            claimed = any([listener(session_id, result) for listener in self._result_listeners])
        if request_id in session.pending:
            self._settle(session, request_id, result)
            return
        if claimed:
            return
        cached = session.completed.get(request_id)
        earlier = _thaw(cached) if cached is not None else None
        if earlier is None:
            why = "result for a requestId this session was never sent"
        elif _code_of(earlier) in (ErrorCode.TIMEOUT, ErrorCode.CANCELLED):
            why = f"late result after the request ended with {_code_of(earlier)}"
        else:
            why = "duplicate result for an already answered request"
        logger.info("ignored page result %s on session %s: %s", request_id, session_id, why)
        self._record(
            AuditEvent.RESULT_IGNORED,
            session_id=session_id,
            request_id=request_id,
            code=_code_of(result),
            detail=why,
        )

    def is_pending(self, session_id: str, request_id: str) -> bool:
        """Whether ``request_id`` was sent to that session's page and awaits its answer."""
        session = self._sessions.get(session_id)
        return session is not None and request_id in session.pending

    async def notify(self, session_id: str, message: dict[str, Any]) -> bool:
        """Send a backend-initiated message (a chat event) to the session's current
        connection, wherever it has resumed. False when the page is not connected; a page
        between two documents of its tab is waited for (``NOTIFY_NEXT_PAGE_WAIT_MS``)."""
        session = self._sessions.get(session_id)
        if session is None and self._between_pages(session_id, ""):
            await self.wait_for_next_page(session_id, NOTIFY_NEXT_PAGE_WAIT_MS)
            session = self._sessions.get(session_id)
        if session is None:
            return False
        try:
            await session.transport.send(message)
        except TransportClosed:
            return False
        return True

    def transport_of(self, session_id: str) -> SessionTransport | None:
        """The session's current connection, or None when its page is not connected."""
        session = self._sessions.get(session_id)
        return session.transport if session is not None else None

    def add_result_listener(self, listener: ResultListener) -> Callable[[], None]:
        """Call ``listener(session_id, result)`` for every result a page sends, before the
        relay settles it; a listener returning True claims a result no request awaits, which
        is then not audited as ignored. Returns the function that removes it. Used by
        ``mao_embed.testing.RelayProbe`` to collect results of requests it sent itself."""
        self._result_listeners.append(listener)
        return lambda: self._result_listeners.remove(listener)

    # ------------------------------------------------------------------ internals

    def _cached_result(
        self, session: _Session | None, session_id: str, request_id: str
    ) -> PageToolResult | None:
        """The cached result of ``request_id`` on the session (live, ``session``, or
        detached)."""
        if session is not None:
            cache = session.completed
        elif session_id in self._detached:
            cache = self._detached[session_id].completed
        else:
            return None
        cached = cache.get(request_id)
        if cached is None:
            return None
        cache.move_to_end(request_id)
        return _thaw(cached)

    def _settle(
        self,
        session: _Session,
        request_id: str,
        result: PageToolResult,
    ) -> bool:
        pending = session.pending.pop(request_id, None)
        if pending is None:
            return False
        pending.timer.cancel()
        session.completed[request_id] = _freeze(result)
        while len(session.completed) > self._cache_size:
            session.completed.popitem(last=False)
        self._answer_after_audit(
            pending.waiters,
            result,
            session_id=session.session_id,
            request_id=request_id,
            # The StrEnum itself: it is stored as its text, and ``.value`` costs ~0.7 us.
            tool=pending.request.tool,
            code=_code_of(result),
            duration_ms=round((self._clock() - pending.started) * 1000, 3),
        )
        return True

    def _expire(self, session_id: str, request_id: str) -> None:
        session = self._sessions.get(session_id)
        if session is None or request_id not in session.pending:
            return
        pending = session.pending[request_id]
        self._settle(
            session,
            request_id,
            failure(
                request_id,
                ErrorCode.TIMEOUT,
                f"the page did not answer within {pending.request.timeout_ms} ms; "
                "it was told to cancel, and the request is not retried",
                {"mayHaveApplied": pending.request.is_write},
            ),
        )
        self._spawn(self._send_cancel(session, request_id, "timeout"))

    async def _send_cancel(self, session: _Session, request_id: str, reason: str) -> None:
        cancel = Cancel(request_id=request_id, session_id=session.session_id, reason=reason)
        try:
            await session.transport.send(cancel)
        except TransportClosed:
            # The drop itself ends the page's work; there is nobody left to tell.
            return
        self._record(
            AuditEvent.CANCEL_SENT,
            session_id=session.session_id,
            request_id=request_id,
            detail=reason,
        )

    def _spawn(self, coroutine: Coroutine[Any, Any, Any]) -> None:
        # The loop keeps only weak references to tasks; hold them until they finish.
        task = asyncio.get_running_loop().create_task(coroutine)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _purge_detached(self) -> None:
        horizon = self._clock() - self._resume_window_s
        for session_id in [s for s, d in self._detached.items() if d.dropped_at < horizon]:
            del self._detached[session_id]

    def _record(self, event: AuditEvent, **values: Any) -> bool:
        """Audit one event; False if the audit log could not write it (disk full; logged by
        the log). Session events go on regardless: refusing the page would not bring the
        record back."""
        if self._audit is None:
            return True
        try:
            self._audit.record(event, **values)
        except AuditWriteError:
            return False
        return True

    def _answer_after_audit(
        self,
        waiters: list[asyncio.Future[PageToolResult]],
        result: PageToolResult,
        **values: Any,
    ) -> None:
        """Audit one answered tool call, then give ``result`` to ``waiters``: the record is in
        the audit journal before any caller can see the answer (SPEC P6)."""
        if not self._record(AuditEvent.TOOL_CALL, **values):
            # Logged by the audit log (disk full); the page has acted, so the agent still
            # gets the result rather than a false failure.
            logger.error("audit record of %s could not be written; answering anyway",
                         values["request_id"])
        _deliver(waiters, result)


def _deliver(waiters: list[asyncio.Future[PageToolResult]], result: PageToolResult) -> None:
    for waiter in waiters:
        if not waiter.done():  # a cancelled caller
            waiter.set_result(result)


def _freeze(result: PageToolResult) -> str:
    """A result as kept in the completed cache: one string instead of a tree of models, so the
    thousands of cached results are not objects the cyclic collector walks. ``_thaw`` gives
    back an equal model (the fields set, and only those, so even ``exclude_unset`` dumps of the
    two agree)."""
    return result.model_dump_json(exclude_unset=True)


def _thaw(cached: str) -> PageToolResult:
    return PageToolResult.model_validate_json(cached)


def _code_of(result: PageToolResult) -> str:
    return result.error.code.value if result.error else ("ok" if result.success else "failed")


async def _close_quietly(transport: SessionTransport, code: int, reason: str) -> None:
    try:
        await transport.close(code, reason)
    except TransportClosed:
        return
