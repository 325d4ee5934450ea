"""Running the backend with uvicorn: in the foreground (CLI) or in a thread (tests, demo).

``start_in_thread`` is what the pytest plugin and ``mao-embed demo`` use: it binds (port 0
picks a free port), waits until the socket is listening, and hands back a ``RunningServer``
whose helpers run relay coroutines on the server's own event loop from any thread.
"""

from __future__ import annotations

import asyncio
import gc
import threading
from collections.abc import Callable, Collection, Coroutine
from concurrent.futures import Future
from dataclasses import replace
from typing import Any, TypeVar

import uvicorn
from mao_page.protocol import PageToolResult
from starlette.applications import Starlette

from mao_embed.app import create_app
from mao_embed.config import ServerConfig, server_origins
from mao_embed.relay.local import Relay, SessionInfo
from mao_embed.security.tokens import DEFAULT_TTL_S, issue_token
from mao_embed.testing.relay_probe import RelayProbe

T = TypeVar("T")

_STARTUP_TIMEOUT_S = 15.0
# CPython's defaults are (700, 10, 10): a young pass every 700 net allocations (a tool call
# makes a few hundred) and a full pass every 100 young ones. Request garbage dies young; the
# full passes, which walk every live session, run 10x less often.
_GC_THRESHOLDS = (10_000, 10, 100)


def uvicorn_config(app: Starlette, config: ServerConfig) -> uvicorn.Config:
    return uvicorn.Config(
        app,
        host=config.host,
        port=config.port,
        log_level="warning",
        lifespan="on",
        # Room above our own limit so oversized frames reach the app and get a readable
        # ``message_too_large`` error instead of a bare protocol close.
        ws_max_size=config.max_message_bytes * 2 + 64 * 1024,
        timeout_graceful_shutdown=3,
    )


def run_event_loop(main: Coroutine[Any, Any, None]) -> None:
    """Run the server's loop: uvloop when installed (it comes with ``uvicorn[standard]``, and
    is what ``uvicorn.run`` itself would pick), else asyncio's own."""
    try:
        import uvloop
    except ImportError:
        asyncio.run(main)
        return
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        runner.run(main)


def settle_garbage_collector() -> None:
    """Keep the garbage collector's full passes off the request path, where they were the
    largest source of tail latency under load.

    Everything alive once the server is up (imported modules, pydantic schemas, the MCP SDK's
    types: hundreds of thousands of objects) lives as long as the process. CPython's full
    collections walked all of it: measured under load at 500 sessions, 6 full passes took
    1.8 s, the longest 890 ms, which was the relay's p99. ``gc.freeze()`` moves those objects
    out of the collector's view, and the thresholds make collections rarer (young ones still
    free request garbage promptly). Objects created later are collected as usual.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(*_GC_THRESHOLDS)


def serve_forever(config: ServerConfig, announce: Callable[[str], None] | None = None) -> None:
    """Run in the foreground until interrupted (``mao-embed serve``).

    ``announce`` receives the listening URL once bound (the real port when ``port`` is 0).
    """
    app = create_app(config)
    server = uvicorn.Server(uvicorn_config(app, config))

    async def main() -> None:
        serving = asyncio.get_running_loop().create_task(server.serve())
        while not server.started and not serving.done():
            await asyncio.sleep(0.02)
        if server.started:
            settle_garbage_collector()
            port = server.servers[0].sockets[0].getsockname()[1]
            if config.demo:
                app.state.origins.add(*server_origins(port))
            if announce is not None:
                announce(f"http://{config.host}:{port}")
        await serving

    run_event_loop(main())


class RunningServer:
    """A backend serving on a background thread. Stop it with ``stop()`` or ``with``."""

    def __init__(
        self,
        config: ServerConfig,
        app: Starlette,
        server: uvicorn.Server,
        thread: threading.Thread,
        loop: asyncio.AbstractEventLoop,
        port: int,
    ) -> None:
        self.config = config
        self.app = app
        self.port = port
        self.loop = loop
        self._server = server
        self._thread = thread
        self._probe: RelayProbe | None = None

    @property
    def host(self) -> str:
        return "127.0.0.1" if self.config.host in ("0.0.0.0", "", "::") else self.config.host

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://{self.host}:{self.port}/ws/sdk"

    @property
    def relay(self) -> Relay:
        return self.app.state.relay  # type: ignore[no-any-return]

    def issue_token(
        self, user_id: str, agent_id: str, *, origin: str | None = None, ttl_s: int = DEFAULT_TTL_S
    ) -> str:
        return issue_token(
            self.config.secret, user_id=user_id, agent_id=agent_id, origin=origin, ttl_s=ttl_s
        )

    def allow_origin(self, *origins: str) -> None:
        """Add page origins to the allowlist of the running server (e.g. a test page host)."""
        self.app.state.origins.add(*origins)

    def run(self, coroutine: Coroutine[Any, Any, T], timeout_s: float | None = None) -> T:
        """Run a coroutine on the server's event loop from another thread and return its value."""
        future: Future[T] = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        return future.result(timeout=timeout_s)

    async def run_async(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Await a coroutine that runs on the server's loop, from another event loop (tests)."""
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coroutine, self.loop))

    def call_tool(
        self,
        session_id: str,
        tool: str,
        args: dict[str, Any] | None = None,
        *,
        request_id: str | None = None,
        timeout_ms: int | None = None,
    ) -> PageToolResult:
        """Blocking ``Relay.call_tool`` for synchronous callers (pytest, the demo agent)."""
        return self.run(
            self.relay.call_tool(
                session_id, tool, args or {}, request_id=request_id, timeout_ms=timeout_ms
            )
        )

    def sessions(self) -> list[SessionInfo]:
        return self.run(_value(self.relay.sessions))

    def wait_for_session(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        exclude: Collection[str] = (),
        timeout_s: float = 30.0,
    ) -> SessionInfo:
        return self.run(
            self.relay.wait_for_session(
                user_id=user_id, agent_id=agent_id, exclude=exclude, timeout_s=timeout_s
            )
        )

    @property
    def probe(self) -> RelayProbe:
        """Test-only access to the relay (``mao_embed.testing.relay_probe``)."""
        if self._probe is None:
            self._probe = RelayProbe(self.relay)
        return self._probe

    def send_raw(self, session_id: str, message: dict[str, Any]) -> None:
        """A frame sent to the page exactly as given (tests of the page's own checks)."""
        self.run(self.probe.send_raw(session_id, message))

    def drop_connection(self, session_id: str) -> None:
        """Cut a page's connection from the backend's side (chaos tests)."""
        self.run(self.probe.drop_connection(session_id))

    def raw_results(
        self, session_id: str, request_id: str, *, count: int = 1, timeout_s: float = 10.0
    ) -> list[PageToolResult]:
        return self.run(
            self.probe.raw_results(session_id, request_id, count=count, timeout_s=timeout_s)
        )

    def stop(self, timeout_s: float = 10.0, *, wait: bool = True) -> None:
        """Shut down: pages get close 1001, pending requests end ``disconnected``.

        ``wait=False`` only signals the shutdown (uvicorn needs ~0.2 s to wind down), which
        lets a test suite start its next server meanwhile.
        """
        if not self._thread.is_alive():
            return
        self._server.should_exit = True
        if not wait:
            return
        self._thread.join(timeout=timeout_s)
        if self._thread.is_alive():
            self._server.force_exit = True
            self._thread.join(timeout=timeout_s)

    def __enter__(self) -> RunningServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def start_in_thread(config: ServerConfig) -> RunningServer:
    """Start serving ``config`` on a daemon thread; return once the socket is listening.

    With ``config.port == 0`` the OS picks a free port, reported by ``RunningServer.port``.
    In demo mode the server's own origins (with the real port) are allowed, as the CLI does.
    """
    app = create_app(config)
    server = uvicorn.Server(uvicorn_config(app, config))
    ready: Future[asyncio.AbstractEventLoop] = Future()

    def run() -> None:
        # Runner cancels leftover tasks (open streams, SSE watchers) before closing the loop.
        with asyncio.Runner() as runner:
            runner.run(_serve(server, runner.get_loop(), ready))

    thread = threading.Thread(target=run, name=f"mao-embed-server-{config.port}", daemon=True)
    thread.start()
    try:
        loop = ready.result(timeout=_STARTUP_TIMEOUT_S)
    except TimeoutError:
        server.should_exit = True
        raise RuntimeError("mao-embed server did not start listening in time") from None
    port = server.servers[0].sockets[0].getsockname()[1]
    running = RunningServer(replace(config, port=port), app, server, thread, loop, port)
    if config.demo:
        running.allow_origin(*server_origins(port))
    return running


async def _serve(
    server: uvicorn.Server,
    loop: asyncio.AbstractEventLoop,
    ready: Future[asyncio.AbstractEventLoop],
) -> None:
    async def announce_when_started() -> None:
        while not server.started:
            await asyncio.sleep(0.01)
        ready.set_result(loop)

    watcher = loop.create_task(announce_when_started())
    try:
        await server.serve()
    except SystemExit as exit_:
        # uvicorn calls sys.exit when it cannot bind (port in use, bad host); report that to
        # the caller waiting in start_in_thread instead of killing the thread silently.
        if not ready.done():
            ready.set_exception(
                RuntimeError(f"mao-embed server could not start (exit {exit_.code})")
            )
    finally:
        watcher.cancel()
    if not ready.done():
        ready.set_exception(RuntimeError("mao-embed server exited before it started listening"))


async def _value(function: Any) -> Any:
    return function()
