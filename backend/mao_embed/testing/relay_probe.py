"""Test-only access to a relay: send a frame exactly as given, collect every result a page
sends for it, and cut a page's connection as a dead socket would (SPEC W2, W3).

Browser tests use these to prove the page itself de-duplicates a repeated requestId and that a
drop mid-batch never replays a write; nothing in the product sends unvalidated frames, so
these live here rather than in the relay.
"""

from __future__ import annotations

import asyncio
from typing import Any

from mao_page.protocol import PageToolResult

from mao_embed.relay.local import CloseCode, Relay, TransportClosed


class SessionNotFoundError(LookupError):
    """The session is not connected to this relay (or the request was not sent by the
    probe); the agent API answers ``session_not_found`` instead."""


class RelayProbe:
    """Raw frames and dropped connections for one relay, on its event loop."""

    def __init__(self, relay: Relay) -> None:
        self._relay = relay
        # (sessionId, requestId) of every raw page_tool_request -> the results that came back.
        self._results: dict[tuple[str, str], list[PageToolResult]] = {}
        self._arrived: dict[tuple[str, str], asyncio.Event] = {}
        self._remove_listener = relay.add_result_listener(self._collect)

    def close(self) -> None:
        self._remove_listener()

    def _collect(self, session_id: str, result: PageToolResult) -> bool:
        key = (session_id, result.request_id)
        results = self._results.get(key)
        if results is None:
            return False
        results.append(result)
        self._arrived[key].set()
        return True

    async def send_raw(self, session_id: str, message: dict[str, Any]) -> None:
        """Send ``message`` exactly as given, bypassing validation and de-duplication.
        Results for a raw ``page_tool_request`` are kept for ``raw_results`` instead of being
        ignored."""
        transport = self._relay.transport_of(session_id)
        if transport is None:
            raise SessionNotFoundError(session_id)
        request_id = message.get("requestId")
        if message.get("type") == "page_tool_request" and isinstance(request_id, str):
            self._results.setdefault((session_id, request_id), [])
            self._arrived.setdefault((session_id, request_id), asyncio.Event())
        await transport.send(message)

    async def raw_results(
        self, session_id: str, request_id: str, *, count: int = 1, timeout_s: float = 10.0
    ) -> list[PageToolResult]:
        """Wait until ``count`` results arrived for a requestId sent with ``send_raw``."""
        key = (session_id, request_id)
        if key not in self._results:
            raise SessionNotFoundError(f"{session_id}/{request_id} was not sent with send_raw")
        arrived = self._arrived[key]
        async with asyncio.timeout(timeout_s):
            while len(self._results[key]) < count:
                arrived.clear()
                await arrived.wait()
        return list(self._results[key])

    async def drop_connection(self, session_id: str) -> None:
        """Cut the page's current connection from the backend's side, as a dead socket would
        be: its requests end ``disconnected`` at once and the page may reconnect and resume."""
        transport = self._relay.transport_of(session_id)
        if transport is None:
            raise SessionNotFoundError(session_id)
        self._relay.detach(session_id, transport, reason="connection dropped (test hook)")
        try:
            await transport.close(CloseCode.HEARTBEAT_TIMEOUT, "connection dropped")
        except TransportClosed:
            return
