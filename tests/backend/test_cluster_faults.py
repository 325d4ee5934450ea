"""A cluster instance killed with ``kill -9`` behind a real nginx (SPEC B6, W3, W4).

Two ``mao-embed serve --redis`` processes behind nginx (round robin, WebSocket upgrade, the
README's configuration); the page is the real ``mao_page.client.SdkClient`` and
``Dispatcher`` on CPython, connecting through nginx, so its reconnect and resume code runs as
in a browser. The agent calls the other instance directly and through nginx.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from backend_fakes import AGENT_ID, PAGE_ORIGIN, USER_ID, WebsocketsTransport
from cluster_servers import Nginx, RedisServer, free_port
from mao_embed.security.tokens import issue_token
from mao_embed.testing import random_secret
from mao_page.client import Backoff, ClientState, Identity, SdkClient
from mao_page.dispatcher import Dispatcher
from mao_page.protocol import PageInfo, PageToolRequest, PageToolResult
from mcp import Client

FILL = {"snapshotId": "s1", "elementId": "e1", "value": "Ada"}


class Instance:
    """``mao-embed serve --redis URL --instance NAME`` in a subprocess."""

    def __init__(self, tmp: Path, name: str, redis_url: str, secret: str) -> None:
        self.name = name
        self.port = free_port()
        self._tmp = tmp
        self._args = ["--redis", redis_url, "--instance", name, "--db", str(tmp / f"{name}.db")]
        self._secret = secret
        self.process: subprocess.Popen[str] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Instance:
        self.launch()
        return self.wait_ready()

    def launch(self) -> None:
        env = {
            **os.environ,
            "MAO_EMBED_SECRET": self._secret,
            "MAO_EMBED_ORIGINS": PAGE_ORIGIN,
            "XDG_CONFIG_HOME": str(self._tmp / "config"),
            "XDG_STATE_HOME": str(self._tmp / "state"),
            "MAO_EMBED_SKIP_BUILD": "1",
        }
        env.pop("MAO_EMBED_API_KEY", None)
        env.pop("MAO_EMBED_REDIS_URL", None)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mao_embed.cli", "serve", "--host", "127.0.0.1",
             "--port", str(self.port), *self._args],
            env=env, stderr=subprocess.PIPE, text=True,
        )

    def wait_ready(self) -> Instance:
        assert self.process is not None and self.process.stderr is not None
        deadline = time.monotonic() + 120
        line = ""
        while "serving on" not in line:
            line = self.process.stderr.readline()
            assert line or self.process.poll() is None, "serve exited before announcing"
            assert time.monotonic() < deadline, "serve did not start"
        assert re.search(rf"cluster: instance {self.name} on redis://", line), line
        return self

    def kill9(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)


class Page:
    """The page runtime's client and dispatcher: fills wait until cancelled (a write in
    flight when its instance dies), every other tool answers at once."""

    def __init__(self, ws_url: str, secret: str) -> None:
        self.executed: list[str] = []
        self.sessions: list[str] = []
        self.changed = asyncio.Event()
        self._secret = secret
        self.dispatcher = Dispatcher(self._execute, lambda data: None, lambda: "v1")
        self.client = SdkClient(
            url=ws_url,
            identity=Identity(AGENT_ID, USER_ID, None, "test", token_refreshable=True),
            connect=WebsocketsTransport,
            token=self._token,
            page_info=lambda: PageInfo(url="https://shop.example/form", title="Form"),
            dispatcher=self.dispatcher,
            on_ready=self._ready,
            on_refused=lambda code, message: None,
            backoff=Backoff(initial_s=0.05, factor=1.5, cap_s=0.3),
        )
        self.task: asyncio.Task[None] | None = None

    async def _token(self) -> str:
        return issue_token(self._secret, user_id=USER_ID, agent_id=AGENT_ID, origin=PAGE_ORIGIN)

    def _ready(self, session_id: str) -> None:
        self.sessions.append(session_id)
        self.changed.set()

    async def _execute(self, request: PageToolRequest) -> PageToolResult:
        self.executed.append(request.request_id)
        self.changed.set()
        if request.tool.value == "page_fill":
            await asyncio.Event().wait()
        return PageToolResult(request_id=request.request_id, success=True, page_version="v1")

    async def wait_until(self, condition: Callable[[], bool], timeout_s: float = 20) -> None:
        async with asyncio.timeout(timeout_s):
            while not condition():
                self.changed.clear()
                await self.changed.wait()

    def start(self) -> Page:
        self.task = asyncio.get_running_loop().create_task(self.client.run())
        return self

    async def stop(self) -> None:
        self.client.stop()
        if self.task is not None:
            with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                await asyncio.wait_for(self.task, 5)


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
    page = Page(nginx.ws_url, secret).start()
    stranded: Page | None = None
    try:
        await page.wait_until(lambda: len(page.sessions) == 1)
        session_id = page.sessions[0]
        async with httpx.AsyncClient(timeout=30) as agent:
            # Through nginx: the listing, whichever instance answers it, names the page's.
            where = (await listing(agent, nginx.url))[session_id]
            doomed = next(i for i in instances if i.name == where)
            survivor = next(i for i in instances if i.name != where)
            # A second page on the same instance but not behind nginx: it cannot come back.
            stranded = Page(f"ws://127.0.0.1:{doomed.port}/ws/sdk", secret).start()
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
