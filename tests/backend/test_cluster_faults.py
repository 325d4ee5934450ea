"""A cluster instance killed with ``kill -9`` behind a real nginx (SPEC B6, W3, W4).

Two ``mao-embed serve --redis`` processes behind nginx (round robin, WebSocket upgrade, the
README's configuration); the page is the real ``mao_page.session.client.SdkClient`` and
``Dispatcher`` on CPython, connecting through nginx, so its reconnect and resume code runs as
in a browser. The agent calls the other instance directly and through nginx.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from backend_fakes import RealPage
from cluster_servers import Nginx, RedisServer, ServeProcess, free_port
from mao_embed.testing import random_secret
from mao_page.session.client import ClientState
from mcp import Client

FILL = {"snapshotId": "s1", "elementId": "e1", "value": "Ada"}


class Instance(ServeProcess):
    """``mao-embed serve --redis URL --instance NAME`` in a subprocess."""

    def __init__(self, tmp: Path, name: str, redis_url: str, secret: str) -> None:
        super().__init__(
            tmp,
            free_port(),
            secret,
            tmp / f"{name}.db",
            ("--redis", redis_url, "--instance", name),
            announced=rf"cluster: instance {name} on redis://",
        )
        self.name = name


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[tuple[RedisServer, list[Instance], Nginx, str]]:
    redis = RedisServer(tmp_path).start()
    secret = random_secret()
    instances = [Instance(tmp_path, name, redis.url, secret) for name in ("x", "y")]
    nginx: Nginx | None = None
    try:
        for instance in instances:  # started side by side: start-up is mostly imports
            instance.launch()
        for instance in instances:
            instance.wait_ready()
        nginx = Nginx(tmp_path, [i.port for i in instances]).start()
        yield redis, instances, nginx, secret
    finally:
        if nginx is not None:
            nginx.stop()
        for instance in instances:
            instance.stop()
        redis.stop()


async def listing(agent: httpx.AsyncClient, base: str) -> dict[str, str]:
    response = await agent.get(f"{base}/api/sessions")
    assert response.status_code == 200
    return {s["sessionId"]: s["instance"] for s in response.json()}


async def test_kill_9_of_the_pages_instance_behind_nginx_answers_may_have_applied_and_the_page_resumes_elsewhere(  # noqa: E501
    cluster: tuple[RedisServer, list[Instance], Nginx, str],
) -> None:
    _, instances, nginx, secret = cluster
    page = RealPage(nginx.ws_url, secret, blocking=frozenset({"page_fill"})).start()
    stranded: RealPage | None = None
    try:
        await page.wait_until(lambda: len(page.sessions) == 1)
        session_id = page.sessions[0]
        async with httpx.AsyncClient(timeout=30) as agent:
            # Through nginx: the listing, whichever instance answers it, names the page's.
            where = (await listing(agent, nginx.url))[session_id]
            doomed = next(i for i in instances if i.name == where)
            survivor = next(i for i in instances if i.name != where)
            # A second page on the same instance but not behind nginx: it cannot come back.
            stranded = RealPage(
                f"ws://127.0.0.1:{doomed.port}/ws/sdk", secret, blocking=frozenset({"page_fill"})
            ).start()
            await stranded.wait_until(lambda: len(stranded.sessions) == 1)
            assert set(await listing(agent, survivor.url)) == {session_id, stranded.sessions[0]}
            # MCP through nginx too: whichever instance serves it reaches the page.
            async with Client(f"{nginx.url}/mcp") as mcp:
                observed_by_mcp = await mcp.call_tool("page_observe", {"sessionId": session_id})
            assert not observed_by_mcp.is_error
            call = asyncio.ensure_future(agent.post(
                f"{survivor.url}/api/sessions/{session_id}/tools/page_fill",
                json=FILL, headers={"x-request-id": "write-1"},
            ))
            await page.wait_until(lambda: "write-1" in page.executed)

            doomed.kill9()
            killed_at = time.monotonic()
            answer = (await call).json()
            # SPEC W3: the write may have applied; the agent is told so, promptly.
            assert answer["error"]["code"] == "disconnected"
            assert answer["error"]["details"] == {"mayHaveApplied": True}
            assert time.monotonic() - killed_at < 5
            # Redis drops a dead process's subscription with its connection, so its sessions
            # leave the list at once, well inside the heartbeat window.
            while stranded.sessions[0] in await listing(agent, survivor.url):
                assert time.monotonic() - killed_at < 2, "a dead instance's session is listed"
                await asyncio.sleep(0.05)

            # The page reconnects through nginx, lands on the survivor, keeps its id (W4).
            await page.wait_until(
                lambda: len(page.sessions) == 2 and page.client.state is ClientState.CONNECTED
            )
            assert page.sessions == [session_id, session_id]
            deadline = time.monotonic() + 10
            while await listing(agent, nginx.url) != {session_id: survivor.name}:
                assert time.monotonic() < deadline, "the dead instance's session is still listed"
                await asyncio.sleep(0.1)

            # The repeat gets the first answer; the write is never replayed.
            again = await agent.post(
                f"{nginx.url}/api/sessions/{session_id}/tools/page_fill",
                json=FILL, headers={"x-request-id": "write-1"},
            )
            assert again.json() == answer
            observed = await agent.post(
                f"{nginx.url}/api/sessions/{session_id}/tools/page_observe", json={}
            )
            assert observed.json()["success"] is True
        assert page.executed.count("write-1") == 1
    finally:
        await page.stop()
        if stranded is not None:
            await stranded.stop()
