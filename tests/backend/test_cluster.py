"""Many instances as one cluster on a real Redis (SPEC B6, W2, W3, W4; docs/cluster.md).

Instances are real backends (``start_in_thread``, the same app as ``mao-embed serve``) given
the same ``--redis``, secret and API key; pages are the fake SDK pages of ``backend_fakes``
speaking the real protocol over real WebSockets. One ``redis-server`` serves the module;
each test has its own secret, so its instances form a cluster of their own.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from backend_fakes import FakePage, answer_ok
from chat_standin import ChatCompletionsStandIn, say
from cluster_servers import RedisServer
from mao_embed.audit import AuditEvent
from mao_embed.config import LlmConfig, ServerConfig
from mao_embed.relay.redis_link import CommandLink, pack
from mao_embed.server import RunningServer, start_in_thread
from mao_embed.testing import random_secret
from mao_page.protocol import PageToolRequest, PageToolResult
from mcp import Client
from redis.exceptions import ResponseError

FILL = {"snapshotId": "s1", "elementId": "e1", "value": "Ada"}
MakeInstance = Callable[..., RunningServer]


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path_factory.mktemp("redis")).start()
    yield server
    server.stop()


@pytest.fixture
def make_instance(
    base_config: ServerConfig, redis_server: RedisServer, tmp_path: Path
) -> Iterator[MakeInstance]:
    """Instances of one cluster: same Redis, same (fresh) secret, each its own audit log."""
    secret = random_secret()
    started: list[RunningServer] = []

    def make(name: str, **overrides: Any) -> RunningServer:
        config = replace(
            base_config,
            secret=secret,
            redis_url=redis_server.url,
            instance_name=name,
            db_path=tmp_path / f"audit-{name}.db",
            heartbeat_interval_ms=500,
            heartbeat_misses=2,
            **overrides,
        )
        running = start_in_thread(config)
        started.append(running)
        return running

    yield make
    for running in started:
        running.stop(wait=False)


def fill_url(instance: RunningServer, session_id: str) -> str:
    return f"{instance.url}/api/sessions/{session_id}/tools/page_fill"


class Gate:
    """A page answer held until the test opens the gate; counts what the page was sent."""

    def __init__(self) -> None:
        self.open = asyncio.Event()
        self.seen: list[str] = []

    async def answer(self, request: PageToolRequest) -> PageToolResult:
        self.seen.append(request.request_id)
        await self.open.wait()
        return await answer_ok(request)


async def wait_for(condition: Callable[[], Any], timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not await _value(condition()):
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.05)


async def _value(value: Any) -> Any:
    return await value if asyncio.iscoroutine(value) else value


async def listed(agent: httpx.AsyncClient, instance: RunningServer) -> dict[str, str]:
    """sessionId -> instance, as ``GET /api/sessions`` on ``instance`` lists them."""
    response = await agent.get(f"{instance.url}/api/sessions")
    assert response.status_code == 200
    return {entry["sessionId"]: entry["instance"] for entry in response.json()}


# --------------------------------------------------------------------------- routing


async def test_any_instance_lists_every_session_and_reaches_every_page_over_http(
    make_instance: MakeInstance, make_page: Callable[..., FakePage]
) -> None:
    a, b, c = make_instance("a"), make_instance("b"), make_instance("c")
    on_a, on_b = make_page(a, url="https://shop.example/a"), make_page(b)
    await on_a.connect()
    await on_b.connect()
    async with httpx.AsyncClient(timeout=10) as agent:
        # SPEC B6: the third instance, with no page of its own, sees both.
        assert await listed(agent, c) == {on_a.session_id: "a", on_b.session_id: "b"}
        for page in (on_a, on_b):
            answer = await agent.post(fill_url(c, page.session_id), json=FILL)
            assert answer.status_code == 200
            assert answer.json()["success"] is True
            assert answer.json()["result"] == {"tool": "page_fill"}
        missing = await agent.post(fill_url(c, "ses-nobody"), json=FILL)
        assert missing.status_code == 404
        assert missing.json()["error"]["code"] == "session_not_found"
    # Each page got exactly its own request, with the values the agent sent.
    assert [r.actions[0].value for r in on_a.requests] == ["Ada"]  # type: ignore[index,union-attr]
    assert len(on_b.requests) == 1
    # The page's instance audits the tool call; the agent's instance the relayed call.
    a_records = a.app.state.audit.query(event=AuditEvent.TOOL_CALL)
    c_records = c.app.state.audit.query(event=AuditEvent.TOOL_CALL_RELAYED)
    assert [(r.session_id, r.instance, r.code) for r in a_records] == [
        (on_a.session_id, "a", "ok")
    ]
    assert {(r.session_id, r.instance, r.detail) for r in c_records} == {
        (on_a.session_id, "c", "page on instance a"),
        (on_b.session_id, "c", "page on instance b"),
    }


async def test_an_mcp_agent_on_a_third_instance_lists_selects_and_acts(
    make_instance: MakeInstance, make_page: Callable[..., FakePage]
) -> None:
    a, b, c = make_instance("a"), make_instance("b"), make_instance("c")
    on_a, on_b = make_page(a), make_page(b)
    await on_a.connect()
    await on_b.connect()
    async with Client(f"{c.url}/mcp") as client:
        sessions = (await client.call_tool("list_sessions", {})).structured_content["sessions"]
        assert {s["sessionId"]: s["instance"] for s in sessions} == {
            on_a.session_id: "a", on_b.session_id: "b"
        }
        selected = await client.call_tool("select_session", {"sessionId": on_b.session_id})
        assert not selected.is_error
        filled = await client.call_tool("page_fill", FILL)
        assert not filled.is_error and filled.structured_content["success"] is True
        routed = await client.call_tool("page_fill", {**FILL, "sessionId": on_a.session_id})
        assert not routed.is_error
    assert len(on_a.requests) == 1 and len(on_b.requests) == 1


async def test_a_bad_argument_is_refused_by_the_agents_instance_and_never_sent(
    make_instance: MakeInstance, make_page: Callable[..., FakePage]
) -> None:
    a, c = make_instance("a"), make_instance("c")
    page = make_page(a)
    await page.connect()
    async with httpx.AsyncClient(timeout=10) as agent:
        bad = await agent.post(fill_url(c, page.session_id), json={"snapshotId": "s1"})
    assert bad.status_code == 400
    assert bad.json()["error"]["code"] == "invalid_request"
    assert page.requests == []


# --------------------------------------------------------------------------- idempotency


async def test_a_request_id_repeated_on_every_instance_runs_once_even_in_flight(
    make_instance: MakeInstance, make_page: Callable[..., FakePage]
) -> None:
    a, b, c = make_instance("a"), make_instance("b"), make_instance("c")
    gate = Gate()
    page = make_page(a, answer=gate.answer)
    await page.connect()
    headers = {"x-request-id": "write-once"}
    async with httpx.AsyncClient(timeout=15) as agent:
        first = asyncio.ensure_future(
            agent.post(fill_url(b, page.session_id), json=FILL, headers=headers)
        )
        await wait_for(lambda: gate.seen == ["write-once"])
        # SPEC W2 while in flight: repeats through the other instances wait for the same run.
        repeats = [
            asyncio.ensure_future(
                agent.post(fill_url(other, page.session_id), json=FILL, headers=headers)
            )
            for other in (c, a, b)
        ]
        await asyncio.sleep(0.3)
        assert all(not r.done() for r in repeats)
        gate.open.set()
        answers = [(await call).json() for call in (first, *repeats)]
        # ... and after: the first result, kept in Redis, from any instance.
        later = [
            (await agent.post(fill_url(i, page.session_id), json=FILL, headers=headers)).json()
            for i in (a, b, c)
        ]
    assert all(answer == answers[0] for answer in answers + later)
    assert answers[0]["success"] is True
    assert gate.seen == ["write-once"]
    assert len(page.requests) == 1


async def test_a_request_id_first_run_on_the_pages_own_instance_is_not_run_again_elsewhere(
    make_instance: MakeInstance, make_page: Callable[..., FakePage]
) -> None:
    a, b = make_instance("a"), make_instance("b")
    page = make_page(a)
    await page.connect()
    headers = {"x-request-id": "local-first"}
    async with httpx.AsyncClient(timeout=10) as agent:
        first = (await agent.post(fill_url(a, page.session_id), json=FILL, headers=headers))
        again = (await agent.post(fill_url(b, page.session_id), json=FILL, headers=headers))
    assert first.json()["success"] is True
    assert again.json() == first.json()
    assert len(page.requests) == 1


# --------------------------------------------------------------------------- resume


async def test_a_page_resumes_its_session_id_on_another_instance(
    make_instance: MakeInstance, make_page: Callable[..., FakePage]
) -> None:
    a, b = make_instance("a"), make_instance("b")
    page = make_page(a)
    await page.connect()
    session_id = page.session_id
    async with httpx.AsyncClient(timeout=10) as agent:
        kept = await agent.post(fill_url(b, session_id), json=FILL, headers={"x-request-id": "k1"})
        assert kept.json()["success"] is True
        await page.drop()
        moved = make_page(b)
        welcome = await moved.connect(resume_session_id=session_id)
        assert welcome.resumed and welcome.session_id == session_id
        await wait_for(lambda: _lists(agent, a, {session_id: "b"}))
        # The first result of k1 is still the answer; the resumed page never sees it again.
        again = await agent.post(fill_url(a, session_id), json=FILL, headers={"x-request-id": "k1"})
        assert again.json() == kept.json()
        fresh = await agent.post(fill_url(a, session_id), json=FILL)
        assert fresh.json()["success"] is True
    assert len(moved.requests) == 1 and len(page.requests) == 1


async def test_another_users_page_cannot_resume_a_session_id_on_another_instance(
    make_instance: MakeInstance, make_page: Callable[..., FakePage]
) -> None:
    a, b = make_instance("a"), make_instance("b")
    page = make_page(a)
    await page.connect()
    await page.drop()
    intruder = make_page(b, user_id="user-2", token=b.issue_token("user-2", "agent-1"))
    welcome = await intruder.connect(resume_session_id=page.session_id)
    assert not welcome.resumed and welcome.session_id != page.session_id


async def _lists(agent: httpx.AsyncClient, instance: RunningServer, want: dict[str, str]) -> bool:
    return await listed(agent, instance) == want


# --------------------------------------------------------------------------- navigations


async def leave(page: FakePage) -> None:
    """The page's document unloads: it closes with 4002 (``wire.CLOSE_NAVIGATING``)."""
    assert page._socket is not None
    await page._socket.close(code=4002, reason="navigating")
    await page._stop_reader()


async def test_a_call_made_while_the_tab_loads_its_next_page_on_another_instance_runs_there(
    make_instance: MakeInstance, make_page: Callable[..., FakePage]
) -> None:
    # SPEC B7 across instances: the page leaves instance a, the agent calls through c, and
    # the tab's next page lands on b with the same session.
    a, b, c = make_instance("a"), make_instance("b"), make_instance("c")
    page = make_page(a)
    await page.connect()
    session_id = page.session_id
    await leave(page)
    async with httpx.AsyncClient(timeout=15) as agent:
        call = asyncio.ensure_future(agent.post(fill_url(c, session_id), json=FILL))
        await asyncio.sleep(0.5)
        assert not call.done()  # waiting for the next page, not session_not_found
        following = make_page(b, url="https://shop.example/result")
        welcome = await following.connect(resume_session_id=session_id, resumeKind="navigation")
        assert welcome.resumed and welcome.session_id == session_id
        answer = await call
        assert answer.json()["success"] is True, answer.json()
        assert await listed(agent, c) == {session_id: "b"}
    assert len(following.requests) == 1 and page.requests == []


async def test_a_chat_turn_follows_its_page_to_the_instance_its_next_page_reached(
    make_instance: MakeInstance, make_page: Callable[..., FakePage]
) -> None:
    # SPEC B7, U1: the chat loop runs on a (where the user's message arrived); the page moves
    # to b while the model thinks; the answer and the turn's end reach it there.
    moved: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    loop = asyncio.get_running_loop()

    def think_while_the_page_moves(body: dict[str, Any]) -> dict[str, Any]:
        # Runs on the stand-in's thread: wait until the test has moved the page.
        asyncio.run_coroutine_threadsafe(asyncio.wait_for(asyncio.shield(moved), 10), loop).result()
        return say("Done on the next page.")(body)

    model = ChatCompletionsStandIn([think_while_the_page_moves]).start()
    try:
        a = make_instance("a", llm=LlmConfig(base_url=model.base_url, model="stand-in-1"))
        b = make_instance("b")
        page = make_page(a)
        await page.connect()
        session_id = page.session_id
        await page.chat("Save it", message_id="m-1")
        await asyncio.sleep(0.3)
        await leave(page)
        following = make_page(b, url="https://shop.example/result")
        welcome = await following.connect(resume_session_id=session_id, resumeKind="navigation")
        assert welcome.resumed
        moved.set_result(None)
        events = [e for e in await following.chat_turn() if e.kind.value != "assistant_delta"]
        assert [e.kind.value for e in events] == ["assistant_text", "done"]
        assert events[0].text == "Done on the next page."
        assert {e.message_id for e in events} == {"m-1"}
    finally:
        model.stop()


async def test_a_duplicated_tab_cannot_take_a_live_session_from_another_instance(
    make_instance: MakeInstance, make_page: Callable[..., FakePage],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("mao_embed.relay.cluster._NAVIGATION_HANDOVER_S", 0.3)
    a, b = make_instance("a"), make_instance("b")
    page = make_page(a)
    await page.connect()
    duplicate = make_page(b)
    welcome = await duplicate.connect(resume_session_id=page.session_id, resumeKind="navigation")
    assert not welcome.resumed and welcome.session_id != page.session_id
    async with httpx.AsyncClient(timeout=10) as agent:
        assert await listed(agent, b) == {page.session_id: "a", duplicate.session_id: "b"}
        assert (await agent.post(fill_url(b, page.session_id), json=FILL)).json()["success"]
    assert len(page.requests) == 1 and duplicate.requests == []


# --------------------------------------------------------------------------- Redis down


async def test_redis_stopped_mid_run_gives_structured_errors_then_the_cluster_recovers(
    make_instance: MakeInstance, make_page: Callable[..., FakePage], redis_server: RedisServer
) -> None:
    a, b = make_instance("a", default_timeout_ms=8_000), make_instance("b")
    gate = Gate()
    held = make_page(a, answer=gate.answer)
    page = make_page(a)
    await held.connect()
    await page.connect()
    async with httpx.AsyncClient(timeout=30) as agent:
        in_flight = asyncio.ensure_future(agent.post(fill_url(b, held.session_id), json=FILL))
        await wait_for(lambda: len(gate.seen) == 1)
        redis_server.stop()
        try:
            started = time.monotonic()
            # The call waiting on the other instance ends at once, not at its timeout.
            lost = (await in_flight).json()
            assert lost["error"]["code"] == "backend_unavailable"
            assert lost["error"]["details"] == {"mayHaveApplied": True}
            remote = await agent.post(fill_url(b, page.session_id), json=FILL)
            assert remote.json()["error"]["code"] == "backend_unavailable"
            assert remote.json()["error"]["details"] == {"mayHaveApplied": False}
            assert time.monotonic() - started < 5
            # The page's own instance keeps serving it, with or without a requestId.
            for headers in ({}, {"x-request-id": "while-down"}):
                local = await agent.post(fill_url(a, page.session_id), json=FILL, headers=headers)
                assert local.json()["success"] is True
            assert set(await listed(agent, a)) == {held.session_id, page.session_id}
        finally:
            gate.open.set()
            redis_server.start()
        # Both instances rejoin by themselves and re-register their sessions.
        await wait_for(lambda: _lists(agent, b, {held.session_id: "a", page.session_id: "a"}))
        again = await agent.post(fill_url(b, page.session_id), json=FILL)
        assert again.json()["success"] is True


# --------------------------------------------------------------------------- the shared link
# Many callers share one pipelined connection to Redis, so every reply must reach the caller
# whose command it answers, and a caller that gives up must not break it for the others.


@pytest.fixture
async def link(redis_server: RedisServer) -> AsyncIterator[CommandLink]:
    link = CommandLink(redis_server.url)
    yield link
    await link.close()


async def test_every_caller_gets_the_reply_to_its_own_command_across_batches(
    link: CommandLink,
) -> None:
    async def set_then_get(index: int) -> bytes:
        # Spread over loop iterations, so commands go out in several writes of several sizes.
        await asyncio.sleep(0 if index % 3 else 0.001 * (index % 5))
        assert await link.command(pack("SET", f"link:{index}", f"value-{index}")) == b"OK"
        return await link.command(pack("GET", f"link:{index}"))  # type: ignore[no-any-return]

    replies = await asyncio.gather(*(set_then_get(index) for index in range(300)))
    assert replies == [f"value-{index}".encode() for index in range(300)]


async def test_a_cancelled_caller_leaves_the_shared_connection_to_the_others(
    link: CommandLink,
) -> None:
    client_id = await link.command(pack("CLIENT", "ID"))
    callers = [
        asyncio.create_task(link.command(pack("INCR", "link:counter"))) for _ in range(100)
    ]
    await asyncio.sleep(0)  # every command is queued; none is written yet
    for caller in callers[::2]:
        caller.cancel()
    done = await asyncio.gather(*callers, return_exceptions=True)
    kept = [reply for reply in done if not isinstance(reply, BaseException)]
    assert len(kept) == 50
    # Cancelled callers only stopped waiting: all 100 commands ran, in order.
    assert kept == list(range(2, 101, 2))
    assert await link.command(pack("GET", "link:counter")) == b"100"
    # The same connection throughout: nothing was dropped and reopened.
    assert await link.command(pack("CLIENT", "ID")) == client_id


async def test_an_error_reply_reaches_its_own_caller_only(link: CommandLink) -> None:
    await link.command(pack("SET", "link:text", "not a number"))
    before, failing, after = await asyncio.gather(
        link.command(pack("SET", "link:a", "1")),
        link.command(pack("INCR", "link:text")),
        link.command(pack("GET", "link:a")),
        return_exceptions=True,
    )
    assert before == b"OK"
    assert isinstance(failing, ResponseError)
    assert after == b"1"


async def test_any_instance_lists_and_runs_a_pages_site_tools(  # SPEC B6, B8
    make_instance: MakeInstance, make_page: Callable[..., FakePage]
) -> None:
    a, c = make_instance("a"), make_instance("c")

    async def answer(request: PageToolRequest) -> PageToolResult:
        assert request.site_tool is not None
        return PageToolResult(request_id=request.request_id, success=True,
                              result={"output": request.site_tool.arguments})

    page = make_page(a, answer=answer)
    await page.connect()
    tool = {"name": "add_to_cart", "description": "Add", "inputSchema": {"type": "object"},
            "readOnly": False, "source": "script"}
    await page.send({"type": "site_context", "tools": [tool], "instructions": "Be brief."})
    base = f"{c.url}/api/sessions/{page.session_id}"
    async with httpx.AsyncClient(timeout=10) as agent:
        async def listed_on_c() -> bool:
            return (await agent.get(f"{base}/site-tools")).json() == [tool]

        await wait_for(listed_on_c)
        session = (await agent.get(base)).json()
        ran = (await agent.post(f"{base}/site-tools/add_to_cart", json={"sku": "A1"})).json()
    assert session["instructions"]["text"] == "Be brief." and session["instance"] == "a"
    assert ran["success"] and ran["result"]["output"] == {"sku": "A1"}
