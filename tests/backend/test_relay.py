"""Relay semantics (SPEC B2, W2, W3, W4), driven through an in-memory transport."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mao_embed.agents.untrusted import agent_view_json
from mao_embed.audit import AuditEvent, AuditLog, AuditWriteError
from mao_embed.relay.local import Relay, TransportClosed
from mao_embed.testing.relay_probe import RelayProbe, SessionNotFoundError
from mao_page.protocol import (
    ErrorCode,
    Hello,
    PageInfo,
    PageToolResult,
    UserIdentity,
    WireModel,
)

ORIGIN = "https://shop.example"
FILL = {"snapshotId": "s1", "elementId": "e1", "value": "Ada"}


class MemoryTransport:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.closed: tuple[int, str] | None = None
        self._changed = asyncio.Event()

    async def send(self, message: WireModel | dict[str, Any]) -> None:
        if self.closed is not None:
            raise TransportClosed
        self.sent.append(message.to_wire() if isinstance(message, WireModel) else message)
        self._changed.set()

    async def close(self, code: int, reason: str) -> None:
        self.closed = (code, reason)

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [m for m in self.sent if m["type"] == kind]

    async def wait_for(self, kind: str, count: int = 1) -> dict[str, Any]:
        async with asyncio.timeout(2):
            while len(self.of_type(kind)) < count:
                self._changed.clear()
                await self._changed.wait()
        return self.of_type(kind)[count - 1]


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def hello(user: str = "u1", agent: str = "a1", resume: str | None = None) -> Hello:
    return Hello(
        protocol_version=1,
        token="unused-here",
        agent_id=agent,
        user=UserIdentity(id=user),
        page=PageInfo(url="https://shop.example/cart", title="Cart"),
        resume_session_id=resume,
    )


def ok(request_id: str, **result: Any) -> PageToolResult:
    return PageToolResult(
        request_id=request_id, success=True, page_version="v1", result=result or None
    )


@pytest.fixture
def audit() -> Iterator[AuditLog]:
    log = AuditLog(None)
    yield log
    log.close()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def relay(audit: AuditLog, clock: FakeClock) -> Relay:
    return Relay(audit=audit, response_grace_ms=0, clock=clock)


async def attach(relay: Relay, **kwargs: Any) -> tuple[str, MemoryTransport]:
    transport = MemoryTransport()
    attachment = await relay.attach(hello(**kwargs), ORIGIN, transport)
    return attachment.session_id, transport


async def test_result_from_the_page_is_returned_to_the_caller(relay: Relay) -> None:
    session_id, page = await attach(relay)
    call = asyncio.create_task(relay.call_tool(session_id, "page_fill", FILL, request_id="r1"))
    request = await page.wait_for("page_tool_request")
    assert request["actions"] == [
        {"action": "fill", "snapshotId": "s1", "elementId": "e1", "value": "Ada"}
    ]
    relay.accept_result(session_id, ok("r1", filled=True))
    result = await call
    assert result.success and result.result == {"filled": True}


async def test_unknown_tool_is_refused_and_nothing_is_sent(relay: Relay) -> None:
    session_id, page = await attach(relay)
    result = await relay.call_tool(session_id, "page_eval", {"script": "alert(1)"})
    assert result.error is not None and result.error.code is ErrorCode.UNKNOWN_TOOL
    assert page.sent == []


@pytest.mark.parametrize("smuggled", [{"selector": "#buy"}, {"script": "x()"}, {"xpath": "//a"}])
async def test_smuggled_fields_are_invalid_requests_and_nothing_is_sent(
    relay: Relay, smuggled: dict[str, str]
) -> None:
    # SPEC W1, S5: no selector, script or xpath reaches the page.
    session_id, page = await attach(relay)
    result = await relay.call_tool(
        session_id, "page_click", {"snapshotId": "s1", "elementId": "e1", **smuggled}
    )
    assert result.error is not None and result.error.code is ErrorCode.INVALID_REQUEST
    assert next(iter(smuggled)) in result.error.message
    assert page.sent == []


async def test_unknown_session_answers_session_not_found(relay: Relay) -> None:
    result = await relay.call_tool("ses-nope", "page_observe", {})
    assert result.error is not None and result.error.code is ErrorCode.SESSION_NOT_FOUND


async def test_malformed_request_id_is_an_invalid_request(relay: Relay) -> None:
    session_id, page = await attach(relay)
    result = await relay.call_tool(
        session_id, "page_observe", {}, request_id="has spaces/and slashes"
    )
    assert result.error is not None and result.error.code is ErrorCode.INVALID_REQUEST
    assert page.sent == []


async def two_callers_of_one_request(
    relay: Relay,
) -> tuple[str, MemoryTransport, asyncio.Task[PageToolResult], asyncio.Task[PageToolResult]]:
    """Two callers of page_fill with the same requestId "r1", both waiting on the page."""
    session_id, page = await attach(relay)
    first = asyncio.create_task(relay.call_tool(session_id, "page_fill", FILL, request_id="r1"))
    second = asyncio.create_task(relay.call_tool(session_id, "page_fill", FILL, request_id="r1"))
    await page.wait_for("page_tool_request")
    await asyncio.sleep(0.01)
    return session_id, page, first, second


async def test_repeated_request_id_in_flight_is_sent_once_and_both_callers_get_the_result(
    relay: Relay,
) -> None:
    # SPEC W2
    session_id, page, first, second = await two_callers_of_one_request(relay)
    relay.accept_result(session_id, ok("r1"))
    assert (await first) == (await second)
    assert len(page.of_type("page_tool_request")) == 1


async def test_repeated_request_id_after_completion_returns_the_first_result(relay: Relay) -> None:
    # SPEC W2
    session_id, page = await attach(relay)
    call = asyncio.create_task(relay.call_tool(session_id, "page_fill", FILL, request_id="r1"))
    await page.wait_for("page_tool_request")
    relay.accept_result(session_id, ok("r1", attempt=1))
    first = await call
    again = await relay.call_tool(
        session_id, "page_fill", {**FILL, "value": "other"}, request_id="r1"
    )
    assert again == first and again.result == {"attempt": 1}
    assert len(page.of_type("page_tool_request")) == 1


async def test_a_cached_result_answers_a_repeat_byte_for_byte(relay: Relay) -> None:
    # SPEC W2: a repeat must read exactly as the first answer and as the model the page's
    # frame was validated into (fields set included, whatever the frame's own spacing).
    session_id, page = await attach(relay)
    call = asyncio.create_task(relay.call_tool(session_id, "page_fill", FILL, request_id="r1"))
    await page.wait_for("page_tool_request")
    frame = (
        '{ "type": "page_tool_result", "requestId": "r1", "success": true,\n'
        '  "pageVersion": "v1", "result": {"steps": [{"index": 0, "note": "<b>\\u00e9"}]} }'
    )
    sent = PageToolResult.model_validate_json(frame)
    relay.accept_result(session_id, sent)
    first = await call
    again = await relay.call_tool(session_id, "page_fill", FILL, request_id="r1")
    assert agent_view_json(again) == agent_view_json(first) == agent_view_json(sent)
    assert again == sent and again.model_fields_set == sent.model_fields_set


async def test_repeated_request_id_after_a_failure_returns_the_same_failure(
    relay: Relay,
) -> None:
    # SPEC W2, W3: a retried write that timed out is answered from the cache, details intact.
    session_id, page = await attach(relay)
    first = await relay.call_tool(session_id, "page_fill", FILL, request_id="r1", timeout_ms=100)
    again = await relay.call_tool(session_id, "page_fill", FILL, request_id="r1")
    assert first.error is not None and first.error.code == ErrorCode.TIMEOUT
    assert again == first and again.model_fields_set == first.model_fields_set
    assert again.error is not None and again.error.details == {"mayHaveApplied": True}
    assert len(page.of_type("page_tool_request")) == 1


async def test_answered_calls_leave_no_objects_for_the_garbage_collector(relay: Relay) -> None:
    # The result cache of a busy session must not grow the collector's work; cached
    # models (four tracked objects each) made older-generation passes take tens of ms.
    session_id, page = await attach(relay)

    async def answered_calls(first: int, count: int) -> None:
        for index in range(first, first + count):
            call = asyncio.create_task(
                relay.call_tool(session_id, "page_fill", FILL, request_id=f"r{index}")
            )
            await page.wait_for("page_tool_request")
            page.sent.clear()
            relay.accept_result(session_id, ok(f"r{index}", steps=[{"index": 0}]))
            await call

    await answered_calls(0, 50)  # first-use allocations (validators, caches)
    gc.collect()
    before = len(gc.get_objects())
    await answered_calls(50, 300)
    gc.collect()
    assert len(gc.get_objects()) - before < 300  # fewer than one per call; was 5.5


async def test_result_cache_is_bounded(audit: AuditLog, clock: FakeClock) -> None:
    relay = Relay(audit=audit, completed_cache_size=2, response_grace_ms=0, clock=clock)
    session_id, page = await attach(relay)
    for index in range(3):
        call = asyncio.create_task(
            relay.call_tool(session_id, "page_observe", {}, request_id=f"r{index}")
        )
        await page.wait_for("page_tool_request", index + 1)
        relay.accept_result(session_id, ok(f"r{index}"))
        await call
    # r0 was evicted, so it is a new request; r2 is still answered from the cache.
    await relay.call_tool(session_id, "page_observe", {}, request_id="r2")
    assert len(page.of_type("page_tool_request")) == 3
    replayed = asyncio.create_task(relay.call_tool(session_id, "page_observe", {}, request_id="r0"))
    await page.wait_for("page_tool_request", 4)
    relay.accept_result(session_id, ok("r0"))
    assert (await replayed).success


async def test_timeout_answers_timeout_and_tells_the_page_to_cancel(
    relay: Relay, audit: AuditLog
) -> None:
    # SPEC W3
    session_id, page = await attach(relay)
    result = await relay.call_tool(
        session_id, "page_click", {"snapshotId": "s1", "elementId": "e1"}, timeout_ms=100
    )
    assert result.error is not None and result.error.code is ErrorCode.TIMEOUT
    assert result.error.details == {"mayHaveApplied": True}
    cancel = await page.wait_for("cancel")
    assert cancel["requestId"] == result.request_id and cancel["sessionId"] == session_id
    calls = audit.query(event=AuditEvent.TOOL_CALL, request_id=result.request_id)
    assert [(c.tool, c.code) for c in calls] == [("page_click", "timeout")]


async def test_late_result_after_timeout_is_ignored_and_audited(
    relay: Relay, audit: AuditLog
) -> None:
    session_id, _ = await attach(relay)
    result = await relay.call_tool(session_id, "page_observe", {}, request_id="r1", timeout_ms=100)
    relay.accept_result(session_id, ok("r1"))
    assert (await relay.call_tool(session_id, "page_observe", {}, request_id="r1")) == result
    ignored = audit.query(event=AuditEvent.RESULT_IGNORED, request_id="r1")
    assert len(ignored) == 1 and "late" in (ignored[0].detail or "")


async def test_duplicate_result_is_ignored(relay: Relay, audit: AuditLog) -> None:
    session_id, page = await attach(relay)
    call = asyncio.create_task(relay.call_tool(session_id, "page_observe", {}, request_id="r1"))
    await page.wait_for("page_tool_request")
    relay.accept_result(session_id, ok("r1", n=1))
    relay.accept_result(session_id, ok("r1", n=2))
    assert (await call).result == {"n": 1}
    assert (await relay.call_tool(session_id, "page_observe", {}, request_id="r1")).result == {
        "n": 1
    }
    assert "duplicate" in (audit.query(event=AuditEvent.RESULT_IGNORED)[0].detail or "")


async def test_result_from_another_session_is_ignored(relay: Relay) -> None:
    session_a, page_a = await attach(relay)
    session_b, _ = await attach(relay, user="u2")
    call = asyncio.create_task(
        relay.call_tool(session_a, "page_observe", {}, request_id="r1", timeout_ms=200)
    )
    await page_a.wait_for("page_tool_request")
    relay.accept_result(session_b, ok("r1"))
    result = await call
    assert result.error is not None and result.error.code is ErrorCode.TIMEOUT


async def test_disconnect_during_a_write_reports_may_have_applied(relay: Relay) -> None:
    # SPEC W3
    session_id, page = await attach(relay)
    call = asyncio.create_task(relay.call_tool(session_id, "page_fill", FILL))
    await page.wait_for("page_tool_request")
    relay.detach(session_id, page, reason="test drop")
    result = await call
    assert result.error is not None and result.error.code is ErrorCode.DISCONNECTED
    assert result.error.details == {"mayHaveApplied": True}


async def test_disconnect_during_a_read_reports_not_applied(relay: Relay) -> None:
    session_id, page = await attach(relay)
    call = asyncio.create_task(relay.call_tool(session_id, "page_inspect", {}))
    await page.wait_for("page_tool_request")
    relay.detach(session_id, page, reason="test drop")
    result = await call
    assert result.error is not None and result.error.details == {"mayHaveApplied": False}


async def test_resume_keeps_the_session_id_and_never_replays_a_write(relay: Relay) -> None:
    # SPEC W3, W4
    session_id, page = await attach(relay)
    call = asyncio.create_task(relay.call_tool(session_id, "page_fill", FILL, request_id="w1"))
    await page.wait_for("page_tool_request")
    relay.detach(session_id, page, reason="test drop")
    dropped = await call
    new_page = MemoryTransport()
    attachment = await relay.attach(hello(resume=session_id), ORIGIN, new_page)
    assert attachment.session_id == session_id and attachment.resumed
    retried = await relay.call_tool(session_id, "page_fill", FILL, request_id="w1")
    assert retried == dropped
    assert new_page.sent == []


async def test_resume_for_another_user_gets_a_new_session(relay: Relay) -> None:
    session_id, page = await attach(relay)
    relay.detach(session_id, page, reason="test drop")
    attachment = await relay.attach(
        hello(user="intruder", resume=session_id), ORIGIN, MemoryTransport()
    )
    assert attachment.session_id != session_id and not attachment.resumed


async def test_resume_after_the_window_gets_a_new_session(relay: Relay, clock: FakeClock) -> None:
    session_id, page = await attach(relay)
    relay.detach(session_id, page, reason="test drop")
    clock.now += 61
    attachment = await relay.attach(hello(resume=session_id), ORIGIN, MemoryTransport())
    assert attachment.session_id != session_id and not attachment.resumed


async def test_resume_of_a_half_dead_live_session_takes_it_over(relay: Relay) -> None:
    session_id, old = await attach(relay)
    call = asyncio.create_task(
        relay.call_tool(session_id, "page_click", {"snapshotId": "s", "elementId": "e"})
    )
    await old.wait_for("page_tool_request")
    attachment = await relay.attach(hello(resume=session_id), ORIGIN, MemoryTransport())
    assert attachment.resumed and attachment.session_id == session_id
    result = await call
    assert result.error is not None and result.error.code is ErrorCode.DISCONNECTED
    await asyncio.sleep(0)
    assert old.closed is not None and old.closed[0] == 4001


async def test_stale_connection_closing_late_does_not_end_the_resumed_session(relay: Relay) -> None:
    session_id, old = await attach(relay)
    await relay.attach(hello(resume=session_id), ORIGIN, MemoryTransport())
    relay.detach(session_id, old, reason="old socket finally closed")
    assert relay.get_session(session_id) is not None


async def test_sessions_describe_connected_pages(relay: Relay) -> None:
    session_id, _ = await attach(relay)
    relay.touch(session_id, PageInfo(url="https://shop.example/pay", title="Pay"))
    (info,) = relay.sessions()
    wire = info.to_wire()
    assert set(wire) == {
        "sessionId",
        "userId",
        "agentId",
        "origin",
        "url",
        "title",
        "ready",
        "connectedAt",
    }
    assert (wire["userId"], wire["agentId"], wire["origin"]) == ("u1", "a1", ORIGIN)
    assert (wire["url"], wire["title"], wire["ready"]) == ("https://shop.example/pay", "Pay", True)
    assert wire["connectedAt"].endswith("Z")


async def test_wait_for_session_returns_when_a_page_attaches(relay: Relay) -> None:
    waiting = asyncio.create_task(relay.wait_for_session(agent_id="a1", timeout_s=2))
    await asyncio.sleep(0.01)
    session_id, _ = await attach(relay)
    assert (await waiting).session_id == session_id


async def test_raw_messages_bypass_dedup_and_every_result_is_collected(relay: Relay) -> None:
    session_id, page = await attach(relay)
    request = {
        "type": "page_tool_request",
        "requestId": "raw1",
        "sessionId": session_id,
        "tool": "page_observe",
        "actions": [{"action": "observe"}],
    }
    probe = RelayProbe(relay)
    await probe.send_raw(session_id, request)
    await probe.send_raw(session_id, request)
    assert len(page.of_type("page_tool_request")) == 2
    relay.accept_result(session_id, ok("raw1", n=1))
    relay.accept_result(session_id, ok("raw1", n=1))
    results = await probe.raw_results(session_id, "raw1", count=2, timeout_s=1)
    assert [r.result for r in results] == [{"n": 1}, {"n": 1}]
    # Claimed by the probe: neither is audited as a result nobody asked for.
    assert relay._audit is not None
    assert relay._audit.query(event=AuditEvent.RESULT_IGNORED, request_id="raw1") == []


async def test_send_raw_to_an_unknown_session_raises(relay: Relay) -> None:
    with pytest.raises(SessionNotFoundError):
        await RelayProbe(relay).send_raw("ses-nope", {"type": "ping", "ts": 1})


async def test_a_dropped_connection_fails_a_pending_write_as_may_have_applied(
    relay: Relay,
) -> None:  # SPEC W3
    session_id, page = await attach(relay)
    call = asyncio.create_task(relay.call_tool(session_id, "page_fill", FILL, request_id="w1"))
    await page.wait_for("page_tool_request")
    await RelayProbe(relay).drop_connection(session_id)
    result = await asyncio.wait_for(call, 5)
    assert result.error is not None and result.error.code == "disconnected"
    assert result.error.details == {"mayHaveApplied": True}
    assert relay.transport_of(session_id) is None


async def test_explicit_cancel_answers_cancelled_and_tells_the_page(relay: Relay) -> None:
    session_id, page = await attach(relay)
    call = asyncio.create_task(
        relay.call_tool(session_id, "page_wait", {"timeMs": 5000}, request_id="r1")
    )
    await page.wait_for("page_tool_request")
    assert await relay.cancel(session_id, "r1", "user pressed stop")
    result = await call
    assert result.error is not None and result.error.code is ErrorCode.CANCELLED
    assert (await page.wait_for("cancel"))["requestId"] == "r1"


async def test_cancelled_caller_leaves_the_request_and_a_repeat_caller_alone(
    relay: Relay,
) -> None:
    # The HTTP client of the first call went away; the page's work and the second caller of
    # the same requestId are unaffected (SPEC W2).
    session_id, page, first, second = await two_callers_of_one_request(relay)
    first.cancel()
    await asyncio.sleep(0.01)
    relay.accept_result(session_id, ok("r1"))
    assert (await second).success
    assert first.cancelled()
    assert not page.of_type("cancel")


async def test_the_answer_comes_only_once_its_record_is_in_the_journal(
    tmp_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # SPEC P6: the moment a caller's future gets the result, its record is where a kill -9
    # cannot take it (the journal file), though not yet in the database.
    import mao_embed.relay.local as relay_module

    log = AuditLog(tmp_path / "audit.db", import_interval_s=3600)
    relay = Relay(audit=log, response_grace_ms=0, clock=clock)
    session_id, page = await attach(relay)
    journaled_at_delivery: dict[str, bool] = {}
    deliver = relay_module._deliver

    def checking_deliver(waiters: Any, result: PageToolResult) -> None:
        [journal] = tmp_path.glob("audit.db.mao-journal.*")
        needle = f'"{result.request_id}"'.encode()
        journaled_at_delivery.setdefault(result.request_id, needle in journal.read_bytes())
        deliver(waiters, result)

    monkeypatch.setattr(relay_module, "_deliver", checking_deliver)
    try:
        calls = [
            asyncio.create_task(
                relay.call_tool(session_id, "page_fill", FILL, request_id=f"r{n}")
            )
            for n in range(3)
        ]
        await page.wait_for("page_tool_request", 3)
        for n in range(3):
            relay.accept_result(session_id, ok(f"r{n}"))
        assert all(r.success for r in await asyncio.wait_for(asyncio.gather(*calls), 5))
        assert journaled_at_delivery == {"r0": True, "r1": True, "r2": True}
        with contextlib.closing(sqlite3.connect(tmp_path / "audit.db")) as reader:
            imported = reader.execute("SELECT count(*) FROM audit WHERE event = 'tool_call'")
            assert imported.fetchone() == (0,)  # not imported yet: the journal is what holds it
    finally:
        log.close()
    reopened = AuditLog(tmp_path / "audit.db")
    try:
        calls_recorded = reopened.query(event=AuditEvent.TOOL_CALL)
        assert [r.request_id for r in calls_recorded] == ["r0", "r1", "r2"]
    finally:
        reopened.close()


async def test_answer_goes_out_when_the_audit_record_cannot_be_written(
    audit: AuditLog,
    clock: FakeClock,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A full disk must not hang or fail every agent: the page has acted, so the result goes
    # out, and the missing record is logged as an error.
    relay = Relay(audit=audit, response_grace_ms=0, clock=clock)
    session_id, page = await attach(relay)
    def disk_full(*args: object, **kwargs: object) -> None:
        raise AuditWriteError(28, "audit record not written: No space left on device")

    monkeypatch.setattr(audit, "record", disk_full)
    call = asyncio.create_task(relay.call_tool(session_id, "page_fill", FILL, request_id="r1"))
    await page.wait_for("page_tool_request")
    relay.accept_result(session_id, ok("r1"))
    with caplog.at_level("ERROR", logger="mao_embed.relay"):
        result = await asyncio.wait_for(call, 5)
    assert result.success
    assert any("audit record of r1 could not be written" in r.getMessage() for r in caplog.records)
