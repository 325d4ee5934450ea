"""A tab is one session through full navigations, at the relay (SPEC B7, W3)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from mao_embed.audit import AuditEvent, AuditLog
from mao_embed.relay import local
from mao_embed.relay.local import Relay
from mao_page.protocol import ErrorCode, Hello, PageInfo, UserIdentity
from test_relay import FILL, ORIGIN, MemoryTransport, ok


def hello(resume: str | None = None, kind: str | None = None, url: str = "/form") -> Hello:
    return Hello(
        protocol_version=1,
        token="unused-here",
        agent_id="a1",
        user=UserIdentity(id="u1"),
        page=PageInfo(url=f"https://shop.example{url}", title=url),
        resume_session_id=resume,
        resume_kind=kind,
    )


@pytest.fixture
def audit() -> Iterator[AuditLog]:
    log = AuditLog(None)
    yield log
    log.close()


@pytest.fixture
def relay(audit: AuditLog) -> Relay:
    return Relay(audit=audit, response_grace_ms=0)


async def open_page(relay: Relay) -> tuple[str, MemoryTransport]:
    transport = MemoryTransport()
    attachment = await relay.attach(hello(), ORIGIN, transport)
    return attachment.session_id, transport


async def next_page(relay: Relay, session_id: str) -> tuple[bool, str, MemoryTransport]:
    transport = MemoryTransport()
    attachment = await relay.attach(
        hello(resume=session_id, kind="navigation", url="/result"), ORIGIN, transport
    )
    return attachment.resumed, attachment.session_id, transport


async def test_a_write_in_flight_when_the_page_leaves_answers_navigated_and_is_never_replayed(
    relay: Relay,
) -> None:
    session_id, page = await open_page(relay)
    call = asyncio.create_task(relay.call_tool(session_id, "page_fill", FILL, request_id="w1"))
    await page.wait_for("page_tool_request")
    relay.detach(session_id, page, reason="pagehide", navigating=True)
    answer = await call
    assert answer.error is not None and answer.error.code is ErrorCode.NAVIGATED
    assert answer.error.details == {"mayHaveApplied": True}
    resumed, same_id, new_page = await next_page(relay, session_id)
    assert resumed and same_id == session_id
    repeat = await relay.call_tool(session_id, "page_fill", FILL, request_id="w1")
    assert repeat == answer and new_page.sent == []


async def test_a_call_made_between_two_pages_waits_and_runs_on_the_next_one(relay: Relay) -> None:
    session_id, page = await open_page(relay)
    relay.detach(session_id, page, reason="pagehide", navigating=True)
    call = asyncio.create_task(relay.call_tool(session_id, "page_inspect", {}, request_id="r1"))
    await asyncio.sleep(0.05)
    assert not call.done()
    _, _, new_page = await next_page(relay, session_id)
    request = await new_page.wait_for("page_tool_request")
    assert request["requestId"] == "r1" and request["timeoutMs"] <= 30_000
    relay.accept_result(session_id, ok("r1"))
    assert (await call).success
    assert relay.get_session(session_id).url == "https://shop.example/result"


async def test_a_call_between_pages_answers_timeout_when_no_next_page_comes(relay: Relay) -> None:
    session_id, page = await open_page(relay)
    relay.detach(session_id, page, reason="pagehide (tab closed)", navigating=True)
    click = {"snapshotId": "s1", "elementId": "e1"}
    answer = await relay.call_tool(session_id, "page_click", click, timeout_ms=150)
    assert answer.error is not None and answer.error.code is ErrorCode.TIMEOUT
    assert answer.error.details == {"mayHaveApplied": False, "reason": "navigated"}


async def test_a_dropped_connection_still_answers_session_not_found_at_once(relay: Relay) -> None:
    # Only a page that left its document makes calls wait; a lost connection is as before.
    session_id, page = await open_page(relay)
    relay.detach(session_id, page, reason="network")
    answer = await asyncio.wait_for(relay.call_tool(session_id, "page_inspect", {}), 1)
    assert answer.error is not None and answer.error.code is ErrorCode.SESSION_NOT_FOUND


async def test_a_duplicated_tab_never_takes_over_a_live_session(
    relay: Relay, audit: AuditLog, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(local, "_NAVIGATION_HANDOVER_S", 0.1)
    session_id, page = await open_page(relay)
    resumed, duplicate_id, _ = await next_page(relay, session_id)
    assert not resumed and duplicate_id != session_id
    assert page.closed is None and relay.get_session(session_id) is not None
    (record,) = audit.query(event=AuditEvent.SESSION_CONNECTED, session_id=duplicate_id)
    assert "another live page holds it" in (record.detail or "")


async def test_the_next_page_waits_for_the_previous_one_to_close(relay: Relay) -> None:
    # The old page's close and the next page's hello travel on different connections.
    session_id, page = await open_page(relay)
    attaching = asyncio.create_task(next_page(relay, session_id))
    await asyncio.sleep(0.05)
    relay.detach(session_id, page, reason="pagehide", navigating=True)
    resumed, same_id, _ = await attaching
    assert resumed and same_id == session_id
