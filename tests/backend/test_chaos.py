"""Chaos: connections dropped mid-batch, the backend killed (``kill -9``) and restarted, late
and duplicate results, cancellation mid-wait; and audit durability under ``kill -9`` (SPEC
W2-W4, P6).

The kill tests run the real ``mao-embed serve`` in a subprocess. The page is the real
``mao_page.session.client.SdkClient`` and ``Dispatcher`` on CPython over a real WebSocket (its
reconnect, resume and dedup code), or the fake page of ``backend_fakes`` where a test needs
to misbehave on purpose; no browser.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from backend_fakes import AGENT_ID, SECRET, USER_ID, FakePage, RealPage
from cluster_servers import ServeProcess, free_port
from mao_embed.audit import AuditEvent, AuditLog
from mao_embed.security.tokens import issue_token
from mao_embed.server import RunningServer
from mao_page.protocol import PageToolRequest
from mao_page.session.client import ClientState

MakePage = Callable[..., FakePage]
BATCH = {
    "actions": [
        {"action": "fill", "snapshotId": "s1", "elementId": "e1", "value": "Ada"},
        {"action": "click", "snapshotId": "s1", "elementId": "e2"},
        {"action": "fill", "snapshotId": "s1", "elementId": "e3", "value": "Lovelace"},
    ]
}


# --------------------------------------------------------------------------- helpers


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[..., ServeProcess]]:
    started: list[ServeProcess] = []

    def start(port: int, *extra_args: str) -> ServeProcess:
        process = ServeProcess(tmp_path, port, SECRET, tmp_path / "audit.db", extra_args).start()
        started.append(process)
        return process

    yield start
    for process in started:
        process.stop()


def fill_url(base: str, session_id: str) -> str:
    return f"{base}/api/sessions/{session_id}/tools/page_fill"


FILL = {"snapshotId": "s1", "elementId": "e1", "value": "Ada"}


# --------------------------------------------------------------------------- kill and restart


async def test_backend_killed_mid_write_and_restarted_page_reconnects_and_nothing_replays(
    serve: Callable[..., ServeProcess],
) -> None:
    port = free_port()
    backend = serve(port)
    page = RealPage(backend.ws_url).start()
    try:
        await page.wait_until(lambda: len(page.sessions) == 1)
        old_session = page.sessions[0]
        async with httpx.AsyncClient(timeout=30) as agent:
            call = asyncio.ensure_future(
                agent.post(fill_url(backend.url, old_session), json=FILL,
                           headers={"x-request-id": "write-1"})
            )
            await page.wait_until(lambda: page.executed == ["write-1"])

            backend.kill9()
            # The agent is told: its request fails at the transport, it never hangs.
            with pytest.raises(httpx.TransportError):
                await call
            # The page notices the drop and stops the write it was running.
            await page.wait_until(lambda: page.cancelled == ["write-1"])

            backend = serve(port)
            await page.wait_until(
                lambda: len(page.sessions) == 2 and page.client.state is ClientState.CONNECTED
            )
            new_session = page.sessions[1]
            # A new process cannot know the old session: resume is refused, the id is new.
            assert new_session != old_session
            assert page.client.connections == 2

            # The old session's requests end: the old id is gone, nothing is sent anywhere.
            stale = await agent.post(fill_url(backend.url, old_session), json=FILL,
                                     headers={"x-request-id": "write-1"})
            assert stale.status_code == 404
            assert stale.json()["error"]["code"] == "session_not_found"
            # Retried on the new session, the page answers from its memory of write-1 and
            # does not run it again (SPEC W2 in the page).
            retried = await agent.post(fill_url(backend.url, new_session), json=FILL,
                                       headers={"x-request-id": "write-1"})
            assert retried.json()["success"] is False
            assert retried.json()["error"]["code"] == "cancelled"
        assert page.executed == ["write-1"]
    finally:
        await page.stop()


async def test_backend_shut_down_mid_write_answers_disconnected_and_may_have_applied(
    serve: Callable[..., ServeProcess],
) -> None:
    backend = serve(free_port())
    page = RealPage(backend.ws_url).start()
    try:
        await page.wait_until(lambda: len(page.sessions) == 1)
        async with httpx.AsyncClient(timeout=30) as agent:
            call = asyncio.ensure_future(
                agent.post(fill_url(backend.url, page.sessions[0]), json=BATCH)
            )
            await page.wait_until(lambda: len(page.executed) == 1)
            await asyncio.get_running_loop().run_in_executor(None, backend.terminate)
            answer = (await call).json()
        assert answer["success"] is False
        assert answer["error"]["code"] == "disconnected"
        assert answer["error"]["details"] == {"mayHaveApplied": True}
    finally:
        await page.stop()


# --------------------------------------------------------------------------- dropped mid-batch


async def test_socket_dropped_mid_batch_tells_the_agent_and_resume_never_replays(
    server: RunningServer, make_page: MakePage
) -> None:
    page = make_page(server, answer=_never)
    await page.connect()
    session_id = page.session_id
    assert session_id is not None
    async with httpx.AsyncClient(timeout=30) as agent:
        call = asyncio.ensure_future(
            agent.post(f"{server.url}/api/sessions/{session_id}/tools/page_fill", json=BATCH,
                       headers={"x-request-id": "batch-1"})
        )
        await page.wait_until(lambda: len(page.requests) == 1)
        await page.drop()
        answer = (await call).json()
        assert answer["error"]["code"] == "disconnected"
        assert answer["error"]["details"] == {"mayHaveApplied": True}

        resumed = make_page(server, answer=_never)
        welcome = await resumed.connect(resume_session_id=session_id)
        assert welcome.resumed and welcome.session_id == session_id
        again = (
            await agent.post(f"{server.url}/api/sessions/{session_id}/tools/page_fill",
                             json=BATCH, headers={"x-request-id": "batch-1"})
        ).json()
    # The retry is answered from the first outcome; the new connection never sees it.
    assert again == answer
    assert resumed.requests == []


async def _never(request: PageToolRequest) -> None:
    return None


# --------------------------------------------------------------------------- cancel, late, dup


async def test_cancel_mid_wait_stops_the_page_and_late_and_duplicate_results_are_ignored(
    server: RunningServer, make_page: MakePage
) -> None:
    page = make_page(server, answer=_never)
    await page.connect()
    session_id = page.session_id
    assert session_id is not None
    call = asyncio.ensure_future(
        server.run_async(
            server.relay.call_tool(session_id, "page_fill", BATCH, request_id="slow-1")
        )
    )
    await page.wait_until(lambda: len(page.requests) == 1)
    assert await server.run_async(server.relay.cancel(session_id, "slow-1", "user pressed stop"))
    result = await call
    assert result.error is not None and result.error.code == "cancelled"
    assert result.error.details == {"mayHaveApplied": True}
    await page.wait_until(lambda: [c.request_id for c in page.cancels] == ["slow-1"])

    # The page answers anyway, twice, late: both are ignored and audited.
    late = {"type": "page_tool_result", "requestId": "slow-1", "success": True}
    await page.send(late)
    await page.send(late)
    # And a result for something this session was never asked.
    await page.send({**late, "requestId": "never-asked"})
    audit = server.app.state.audit

    async def ignored() -> list[Any]:
        while len(found := audit.query(event=AuditEvent.RESULT_IGNORED)) < 3:
            await asyncio.sleep(0.02)
        return found

    records = await asyncio.wait_for(ignored(), 5)
    assert [r.detail for r in records] == [
        "late result after the request ended with cancelled",
        "late result after the request ended with cancelled",
        "result for a requestId this session was never sent",
    ]
    # Retrying the id returns the first outcome: the batch is not run again.
    again = await server.run_async(
        server.relay.call_tool(session_id, "page_fill", BATCH, request_id="slow-1")
    )
    assert again == result
    assert len(page.requests) == 1


# --------------------------------------------------------------------------- audit under kill -9


async def test_kill_9_under_load_loses_no_acknowledged_audit_record(
    serve: Callable[..., ServeProcess],
) -> None:
    backend = serve(free_port())
    token = issue_token(SECRET, user_id=USER_ID, agent_id=AGENT_ID)
    pages = [FakePage(backend.ws_url, token) for _ in range(4)]
    for page in pages:
        await page.connect()
    acknowledged: list[str] = []
    stop = asyncio.Event()

    async def agent(worker: int, session_id: str, client: httpx.AsyncClient) -> None:
        n = 0
        while not stop.is_set():
            request_id = f"w{worker}-{n}"
            n += 1
            try:
                answer = await client.post(
                    fill_url(backend.url, session_id), json=FILL,
                    headers={"x-request-id": request_id},
                )
            except httpx.TransportError:
                return
            if answer.status_code == 200 and answer.json()["success"]:
                # The agent has seen this answer: its audit record must survive.
                acknowledged.append(request_id)

    async with httpx.AsyncClient(timeout=30, limits=httpx.Limits(max_connections=16)) as client:
        workers = [
            asyncio.ensure_future(agent(n, pages[n % len(pages)].session_id or "", client))
            for n in range(12)
        ]
        while len(acknowledged) < 300:
            await asyncio.sleep(0.05)
        backend.kill9()
        stop.set()
        await asyncio.wait_for(asyncio.gather(*workers), 30)
    for page in pages:
        await page.close()

    # The killed server's journal is still there, its lock gone with the process: the next
    # start (an AuditLog on the same file) imports what it had not, exactly once.
    assert list(backend.db.parent.glob(backend.db.name + ".mao-journal.*"))
    restarted = AuditLog(backend.db)
    try:
        calls = restarted.query(event=AuditEvent.TOOL_CALL, limit=1_000_000)
    finally:
        restarted.close()
    recorded = [c.request_id for c in calls]
    missing = [r for r in acknowledged if r not in set(recorded)]
    assert len(acknowledged) >= 300
    assert missing == []
    assert len(recorded) == len(set(recorded))  # none imported twice
