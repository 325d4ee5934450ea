"""The SDK WebSocket against a real uvicorn server and a fake page (SPEC B5, W1-W4)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

import pytest
import websockets
from backend_fakes import (
    AGENT_ID,
    PAGE_ORIGIN,
    USER_ID,
    FakePage,
    HandshakeRefusedByServer,
    answer_never,
)
from mao_embed.audit import AuditEvent
from mao_embed.security.tokens import issue_token
from mao_embed.server import RunningServer
from mao_page.protocol import ErrorCode, PageToolRequest, PageToolResult

MakePage = Callable[..., FakePage]
FILL = {"snapshotId": "s1", "elementId": "e1", "value": "Ada"}


async def test_page_with_valid_token_gets_a_session(
    server: RunningServer, make_page: MakePage
) -> None:
    page = make_page(server)
    welcome = await page.connect()
    assert welcome.session_id and not welcome.resumed
    assert welcome.heartbeat_interval_ms == server.config.heartbeat_interval_ms
    (info,) = server.sessions()
    assert (info.session_id, info.user_id, info.agent_id, info.origin) == (
        welcome.session_id,
        USER_ID,
        AGENT_ID,
        PAGE_ORIGIN,
    )


async def test_handshake_from_a_foreign_origin_is_refused_with_403(server: RunningServer) -> None:
    # SPEC B5: refused before the upgrade, so no hello is ever read.
    with pytest.raises(websockets.InvalidStatus) as refused:
        await websockets.connect(server.ws_url, origin="https://evil.example")  # type: ignore[arg-type]
    assert refused.value.response.status_code == 403
    refusals = server.app.state.audit.query(event=AuditEvent.CONNECTION_REFUSED)
    assert [(r.origin, r.code) for r in refusals] == [
        ("https://evil.example", "origin_not_allowed")
    ]


async def test_handshake_without_origin_is_refused(server: RunningServer) -> None:
    with pytest.raises(websockets.InvalidStatus):
        await websockets.connect(server.ws_url)


@pytest.mark.parametrize(
    ("token_for", "why"),
    [
        ({"user_id": "someone-else", "agent_id": AGENT_ID}, "another user"),
        ({"user_id": USER_ID, "agent_id": "other-agent"}, "another agent"),
        (
            {"user_id": USER_ID, "agent_id": AGENT_ID, "origin": "https://other.example"},
            "another origin",
        ),
    ],
)
async def test_token_for_someone_else_is_refused_and_nothing_executes(
    server: RunningServer, make_page: MakePage, token_for: dict[str, str], why: str
) -> None:
    page = make_page(server, token=server.issue_token(**token_for))
    with pytest.raises(HandshakeRefusedByServer) as refused:
        await page.connect()
    assert refused.value.error is not None
    assert refused.value.error.code is ErrorCode.UNAUTHORIZED and why in refused.value.error.message
    assert refused.value.close_code == 1008
    assert server.sessions() == [] and page.requests == []


async def test_token_signed_with_another_secret_is_refused(
    server: RunningServer, make_page: MakePage
) -> None:
    page = make_page(
        server, token=issue_token("not-the-server-secret", user_id=USER_ID, agent_id=AGENT_ID)
    )
    with pytest.raises(HandshakeRefusedByServer) as refused:
        await page.connect()
    assert refused.value.error is not None and refused.value.error.code is ErrorCode.UNAUTHORIZED
    assert "bad_signature" in refused.value.error.message
    audited = server.app.state.audit.query(event=AuditEvent.CONNECTION_REFUSED)
    assert page.token not in json.dumps([r.detail for r in audited])


async def test_token_bound_to_the_page_origin_is_accepted(
    server: RunningServer, make_page: MakePage
) -> None:
    page = make_page(server, token=server.issue_token(USER_ID, AGENT_ID, origin=PAGE_ORIGIN))
    assert (await page.connect()).session_id


async def test_other_protocol_version_is_refused_as_protocol_mismatch(
    server: RunningServer, make_page: MakePage
) -> None:
    page = make_page(server)
    with pytest.raises(HandshakeRefusedByServer) as refused:
        await page.connect(protocolVersion=2, futureField=True)
    assert (
        refused.value.error is not None and refused.value.error.code is ErrorCode.PROTOCOL_MISMATCH
    )
    assert refused.value.close_code == 1008


async def test_first_message_other_than_hello_is_refused(
    server: RunningServer, make_page: MakePage
) -> None:
    page = make_page(server)
    socket = await page.open_socket()
    await socket.send(json.dumps({"type": "pong", "ts": 1}))
    error = json.loads(await socket.recv())
    assert error["type"] == "error" and error["code"] == "invalid_request"
    with pytest.raises(websockets.ConnectionClosed):
        await socket.recv()
    assert socket.close_code == 1008


async def test_silent_page_is_refused_after_the_hello_timeout(
    make_server: Callable[..., RunningServer], make_page: MakePage
) -> None:
    server = make_server(hello_timeout_ms=200)
    socket = await make_page(server).open_socket()
    error = json.loads(await asyncio.wait_for(socket.recv(), 3))
    assert error["code"] == "timeout"


@pytest.mark.parametrize(
    ("frame", "named"),
    [
        ("{not json", "json"),
        (
            json.dumps(
                {"type": "page_tool_result", "requestId": "r1", "success": True, "selector": "#x"}
            ),
            "selector",
        ),
        (json.dumps({"type": "pong", "ts": 1, "script": "alert(1)"}), "script"),
        (json.dumps({"type": "teleport"}), "type"),
    ],
)
async def test_malformed_frames_get_a_structured_error_and_the_session_survives(
    server: RunningServer, make_page: MakePage, frame: str, named: str
) -> None:
    # SPEC W1: unknown fields are rejected, naming them, without crashing the connection.
    page = make_page(server)
    await page.connect()
    await page.send(frame)
    error = await page.next_error()
    assert error.code is ErrorCode.INVALID_REQUEST and named in error.message.lower()
    result = await server.run_async(server.relay.call_tool(page.session_id, "page_observe", {}))
    assert result.success


async def test_error_for_a_malformed_result_names_its_request(
    server: RunningServer, make_page: MakePage
) -> None:
    page = make_page(server)
    await page.connect()
    await page.send({"type": "page_tool_result", "requestId": "r-9", "success": "maybe?"})
    error = await page.next_error()
    assert error.request_id == "r-9" and "success" in error.message


async def test_oversized_frame_is_refused_and_the_connection_closed(
    make_server: Callable[..., RunningServer], make_page: MakePage
) -> None:
    server = make_server(max_message_bytes=2048)
    page = make_page(server)
    await page.connect()
    await page.send(json.dumps({"type": "pong", "ts": 1, "page": {"url": "x" * 4096}}))
    error = await page.next_error()
    assert error.code is ErrorCode.MESSAGE_TOO_LARGE
    assert await page.wait_closed() == 1009


async def test_tool_call_round_trip_through_the_socket(
    server: RunningServer, make_page: MakePage
) -> None:
    page = make_page(server)
    await page.connect()
    result = await server.run_async(server.relay.call_tool(page.session_id, "page_fill", FILL))
    assert result.success and result.result == {"tool": "page_fill"}
    (request,) = page.requests
    assert request.session_id == page.session_id and request.is_write


async def test_timeout_answers_timeout_and_a_cancel_reaches_the_page(
    server: RunningServer, make_page: MakePage
) -> None:
    # SPEC W3
    page = make_page(server, answer=answer_never)
    await page.connect()
    result = await server.run_async(
        server.relay.call_tool(
            page.session_id, "page_click", {"snapshotId": "s1", "elementId": "e1"}, timeout_ms=150
        )
    )
    assert result.error is not None and result.error.code is ErrorCode.TIMEOUT
    await page.wait_until(lambda: len(page.cancels) == 1)
    assert page.cancels[0].request_id == result.request_id


async def test_repeated_request_id_is_executed_once(
    server: RunningServer, make_page: MakePage
) -> None:
    # SPEC W2: the page sees the request once however often the agent repeats it.
    async def slow_answer(request: PageToolRequest) -> PageToolResult:
        await asyncio.sleep(0.1)
        return PageToolResult(
            request_id=request.request_id, success=True, result={"n": len(page.requests)}
        )

    page = make_page(server, answer=slow_answer)
    await page.connect()
    calls = [
        server.relay.call_tool(page.session_id, "page_fill", FILL, request_id="once")
        for _ in range(3)
    ]
    results = await asyncio.gather(*(server.run_async(c) for c in calls))
    later = await server.run_async(
        server.relay.call_tool(page.session_id, "page_fill", FILL, request_id="once")
    )
    assert len(page.requests) == 1
    assert all(r == results[0] for r in [*results, later])


async def test_late_and_duplicate_results_are_ignored(
    server: RunningServer, make_page: MakePage
) -> None:
    page = make_page(server, answer=answer_never)
    await page.connect()
    result = await server.run_async(
        server.relay.call_tool(
            page.session_id, "page_observe", {}, request_id="slow", timeout_ms=100
        )
    )
    for _ in range(2):
        await page.send(PageToolResult(request_id="slow", success=True).to_wire())
    await page.send(PageToolResult(request_id="never-sent", success=True).to_wire())
    audit = server.app.state.audit

    async def ignored() -> int:
        return len(audit.query(event=AuditEvent.RESULT_IGNORED))

    async with asyncio.timeout(3):
        while await ignored() < 3:
            await asyncio.sleep(0.02)
    again = await server.run_async(
        server.relay.call_tool(page.session_id, "page_observe", {}, request_id="slow")
    )
    assert again == result and again.error is not None and again.error.code is ErrorCode.TIMEOUT


async def test_drop_during_a_write_reports_may_have_applied_and_resume_never_replays(
    server: RunningServer, make_page: MakePage
) -> None:
    # SPEC W3, W4
    page = make_page(server, answer=answer_never)
    await page.connect()
    session_id = page.session_id
    call = server.run_async(server.relay.call_tool(session_id, "page_fill", FILL, request_id="w1"))
    task = asyncio.create_task(call)
    await page.wait_until(lambda: len(page.requests) == 1)
    await page.drop()
    result = await asyncio.wait_for(task, 5)
    assert result.error is not None and result.error.code is ErrorCode.DISCONNECTED
    assert result.error.details == {"mayHaveApplied": True}

    again = make_page(server)
    welcome = await again.connect(resume_session_id=session_id)
    assert welcome.resumed and welcome.session_id == session_id
    retried = await server.run_async(
        server.relay.call_tool(session_id, "page_fill", FILL, request_id="w1")
    )
    assert retried == result and again.requests == []


async def test_heartbeat_pong_updates_url_and_title(
    make_server: Callable[..., RunningServer], make_page: MakePage
) -> None:
    server = make_server(heartbeat_interval_ms=50)
    page = make_page(server)
    await page.connect()
    page.url, page.title = "https://shop.example/checkout", "Checkout"
    await page.wait_until(lambda: len(page.pings) >= 2)
    await asyncio.sleep(0.05)
    (info,) = server.sessions()
    assert (info.url, info.title) == ("https://shop.example/checkout", "Checkout")


async def test_page_that_misses_three_pings_is_closed(
    make_server: Callable[..., RunningServer], make_page: MakePage
) -> None:
    # SPEC W4
    server = make_server(heartbeat_interval_ms=50)
    page = make_page(server, answer_pings=False)
    await page.connect()
    assert await page.wait_closed(3) == 4000
    assert server.sessions() == []


async def test_ping_from_the_page_is_answered_with_pong(
    server: RunningServer, make_page: MakePage
) -> None:
    page = make_page(server)
    await page.connect()
    await page.send({"type": "ping", "ts": 42})
    await page.wait_until(lambda: any(getattr(m, "type", "") == "pong" for m in page.other))
    assert page.other[-1].ts == 42


async def test_flood_of_frames_is_rate_limited(
    make_server: Callable[..., RunningServer], make_page: MakePage
) -> None:
    server = make_server(inbound_rate_per_s=1, inbound_burst=5)
    page = make_page(server)
    await page.connect()
    for _ in range(20):
        await page.send({"type": "pong", "ts": 1})
    error = await page.next_error()
    assert error.code is ErrorCode.RATE_LIMITED


async def test_answers_to_pending_requests_pass_the_rate_limit_and_nothing_else_does(
    make_server: Callable[..., RunningServer], make_page: MakePage
) -> None:
    # SPEC W4. The real SDK sends an audit_event (kind action) before each result; with the
    # page over its rate, answers were dropped and the agent's calls waited for their timeout.
    server = make_server(inbound_rate_per_s=1, inbound_burst=5)
    page = make_page(server)

    async def audit_then_answer(request: PageToolRequest) -> PageToolResult:
        await page.send({"type": "audit_event", "kind": "action", "level": "full",
                         "requestId": request.request_id, "outcome": "ok", "atMs": 1.0})
        return PageToolResult(request_id=request.request_id, success=True, result={"n": 1})

    page.answer = audit_then_answer
    await page.connect()
    results = [
        await server.run_async(
            server.relay.call_tool(page.session_id, "page_observe", {}, timeout_ms=1500)
        )
        for _ in range(12)
    ]
    assert [r.error.code if r.error else "ok" for r in results] == ["ok"] * 12
    # Unasked frames are still limited, and so are results naming no pending request (the
    # warning goes out at most once a second: wait that out first).
    await asyncio.sleep(1.1)
    for index in range(20):
        await page.send({"type": "page_tool_result", "requestId": f"never-{index}",
                         "success": True})
    error = await page.next_error()
    assert error.code is ErrorCode.RATE_LIMITED


async def test_session_events_are_audited_without_tokens(
    server: RunningServer, make_page: MakePage
) -> None:
    page = make_page(server)
    await page.connect()
    await server.run_async(
        server.relay.call_tool(page.session_id, "page_observe", {}, request_id="r-a")
    )
    await page.close()
    audit = server.app.state.audit
    async with asyncio.timeout(3):
        while not audit.query(event=AuditEvent.SESSION_DISCONNECTED):
            await asyncio.sleep(0.02)
    records = audit.query(session_id=page.session_id)
    events = [r.event for r in records]
    assert events == [
        AuditEvent.SESSION_CONNECTED,
        AuditEvent.TOOL_CALL,
        AuditEvent.SESSION_DISCONNECTED,
    ]
    call = records[1]
    assert (call.request_id, call.tool, call.code) == ("r-a", "page_observe", "ok")
    assert call.duration_ms is not None and call.duration_ms >= 0
    db = server.config.db_path
    assert db is not None
    # Everything the audit log wrote: the database, its WAL (the records are there until a
    # checkpoint) and the journal (``audit`` module docstring).
    written = [path for path in db.parent.iterdir() if path.name.startswith(db.name)]
    assert {path.name for path in written} >= {db.name, f"{db.name}-wal"}
    assert any(".mao-journal." in path.name for path in written)
    for path in written:
        assert page.token.encode() not in path.read_bytes(), path.name


class _RecordingWebSocket:
    def __init__(self) -> None:
        self.texts: list[str] = []

    async def send_text(self, text: str) -> None:
        self.texts.append(text)


async def test_messages_sent_before_open_wait_and_go_out_after_the_welcome() -> None:
    # A tool request must never overtake the welcome that tells the page its sessionId;
    # a caller that gives up waiting does not hold back the others.
    from mao_embed.transport.sdk_socket import WebSocketTransport

    websocket = _RecordingWebSocket()
    transport = WebSocketTransport(websocket)  # type: ignore[arg-type]
    early = asyncio.create_task(transport.send({"type": "early"}))
    abandoned = asyncio.create_task(transport.send({"type": "abandoned"}))
    await asyncio.sleep(0.01)
    abandoned.cancel()
    assert websocket.texts == []
    await transport.send_now({"type": "welcome"})
    transport.open()
    await early
    await transport.send({"type": "late"})
    assert [json.loads(t)["type"] for t in websocket.texts] == ["welcome", "early", "late"]


async def test_a_page_not_yet_booted_is_listed_not_ready_until_page_ready(
    server: RunningServer, make_page: MakePage
) -> None:
    # SPEC E6: the page registers at init and boots Python on first use; until its
    # page_ready the agent API lists it with ready false, then ready, and the boot is audited.
    page = make_page(server)
    welcome = await page.connect(ready=False)
    (info,) = server.sessions()
    assert info.session_id == welcome.session_id and info.ready is False
    await page.send(
        {"type": "page_ready", "trigger": "agent", "bootMs": 1234.5, "mode": "main-thread",
         "page": {"url": "https://shop.example/next", "title": "Next"}}
    )
    audit = server.app.state.audit
    async with asyncio.timeout(5):
        while not audit.query(event=AuditEvent.PAGE_BOOT):
            await asyncio.sleep(0.02)
    (info,) = server.sessions()
    assert (info.ready, info.url, info.title) == (True, "https://shop.example/next", "Next")
    (boot,) = audit.query(event=AuditEvent.PAGE_BOOT)
    assert (boot.session_id, boot.code, boot.duration_ms, boot.user_id) == (
        welcome.session_id, "agent", 1234.5, USER_ID
    )


async def test_a_malformed_page_ready_is_refused_and_changes_nothing(
    server: RunningServer, make_page: MakePage
) -> None:
    page = make_page(server)
    await page.connect(ready=False)
    await page.send({"type": "page_ready", "trigger": "someone", "bootMs": -1})
    error = await page.next_error()
    assert error.code is ErrorCode.INVALID_REQUEST
    (info,) = server.sessions()
    assert info.ready is False
    assert not server.app.state.audit.query(event=AuditEvent.PAGE_BOOT)
