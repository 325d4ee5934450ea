"""Relay under load: many SDK sessions, agent tool calls per second, latency, memory.

For each session count (default 100, 500, 1,000) and each of two servers:

* **mao**: the real backend (``mao_embed.app.create_app`` on the same uvicorn settings as
  ``mao-embed serve``: token check, Origin check, protocol validation, relay, rate limits,
  heartbeat, the audit log on disk with every answer given only after its record is in the
  audit journal, and the journal imported into SQLite on its thread, ``audit`` docstring);
* **echo**: a bare relay on the same stack (Starlette + uvicorn + the same WebSocket and HTTP
  implementations): ``POST /api/sessions/{id}/tools/{tool}`` forwards the body to that
  session's WebSocket and answers with what comes back, matched by id. No validation, no
  audit. The ratio mao/echo is what our relay costs on top of moving the bytes.

the load generator (a separate process from the server; ``python -m bench.relay_load
loadgen``) opens N protocol-faithful fake SDK sessions (hello with a signed token, answer
every ``page_tool_request`` with a ``page_tool_result``, answer pings) and then, as the agent,
calls ``page_fill`` over the HTTP API through a pool of keep-alive connections:

1. **open loop** at a fixed rate (default 1,000 calls/s) for ``--relay-seconds``: latency is
   measured from each call's *scheduled* start, so a stalled server shows up in p99 instead
   of slowing the generator (no coordinated omission);
2. **closed loop**: 64 calls in flight for the same time: the most calls/s the pair sustains.

Memory per idle session = (server RSS with N sessions connected and idle - RSS before) / N,
on a fresh server per session count. "held" = sessions the server lists in
``GET /api/sessions`` after connecting, and still lists after the load.

**CPU per call.** Both processes share a 2-core machine with whatever else runs (the load
average is recorded), so the closed loop's calls/s is bounded by the server *and* the
generator together: the generator spends about as much CPU per call as a bare echo server, so
the echo's maximum says more about the generator than about the echo. The relay's cost is
therefore also measured as server CPU time per call: utime + stime of the server process (all
threads, and its event-loop thread alone) from ``/proc/<pid>/stat`` over each phase, divided
by the calls in it. The open loop's figure is the headline: the same calls at the same rate
for both servers, so it compares the same work. The generator records its own CPU share of
each phase (near 1.0 = it, not the server, set the pace).

**Cluster** (``--cluster``): per round, the same load against one server ("single") and
against two instances of ``mao-embed serve --redis`` on one fresh ``redis-server``
("cluster"): pages are dealt to the two instances in turn, and every call goes to the
instance that does *not* hold its page, so each one crosses Redis twice (request, answer).
Both modes send an ``X-Request-Id`` per call (the cluster's idempotent path: the requestId is
claimed in Redis, its result kept there); the pages count every requestId they are sent, so
lost and duplicated calls are counted, not assumed. Server CPU is the sum over the
instances; Redis's own CPU is reported beside it.

**Rounds.** Each session count is measured ``--relay-rounds`` times, mao and echo alternating
(mao first in odd rounds, echo first in even ones), each on a fresh server, so both see the
same machine state; the summary gives the medians over rounds and the ratios of the medians.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .runner import RunContext, describe, fmt_ratio, percentile, table

NAME = "relay_load"
DESCRIPTION = "agent tool calls through the relay: calls/s, p50/p99, sessions held, vs bare echo"

ORIGIN = "https://shop.example"
SECRET = "bench-relay-load-secret"
USER = "bench-user"
AGENT = "bench-agent"
POOL = 64
FILL_BODY = json.dumps({"snapshotId": "s1", "elementId": "e1", "value": "Ada Lovelace"}).encode()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("relay_load")
    group.add_argument("--relay-sessions", default=None,
                       help="session counts, comma-separated (default 100,500,1000; "
                            "500,1000 with --cluster)")
    # 15 s: three of the audit importer's 5 s intervals per phase, so each phase pays for
    # importing about as many records as it made (with 6 s, one phase could end just before
    # an import and hand its cost to the next).
    group.add_argument("--relay-seconds", type=float, default=15.0,
                       help="seconds per load phase (default 15)")
    group.add_argument("--relay-rate", type=float, default=1000.0,
                       help="open-loop calls per second (default 1000)")
    group.add_argument("--relay-rounds", type=int, default=3,
                       help="mao/echo rounds per session count, alternating (default 3)")
    group.add_argument("--relay-chat-turns", type=int, default=60,
                       help="panel chat turns per store and round for the conversation "
                            "storage cost (bench/chat_turn.py; 0 skips it; default 60)")
    group.add_argument("--cluster", action="store_true",
                       help="relay_load: one server vs two --redis instances, calls landing on "
                            "the instance without the page (default levels 500,1000)")


# --------------------------------------------------------------------------- servers


def _raise_fd_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def _serve_mao(db: Path, redis_url: str | None = None, instance: str | None = None) -> None:
    from mao_embed.config import ServerConfig
    from mao_embed.server import serve_forever

    config = ServerConfig(
        host="127.0.0.1", port=0, secret=SECRET, allowed_origins=(ORIGIN,), db_path=db,
        sdk_dir=db.parent, demo_dir=db.parent, redis_url=redis_url, instance_name=instance,
    )
    serve_forever(config, lambda url: print(f"READY {url}", flush=True))


def _echo_app() -> Any:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route, WebSocketRoute
    from starlette.websockets import WebSocket, WebSocketDisconnect

    sockets: dict[str, WebSocket] = {}
    waiting: dict[str, asyncio.Future[Any]] = {}
    ids = itertools.count()

    async def page(websocket: WebSocket) -> None:
        await websocket.accept()
        await websocket.receive_text()  # hello, unchecked
        session_id = f"echo-{next(ids)}"
        sockets[session_id] = websocket
        await websocket.send_text(json.dumps({"type": "welcome", "sessionId": session_id}))
        try:
            while True:
                reply = json.loads(await websocket.receive_text())
                future = waiting.pop(reply.get("requestId"), None)
                if future is not None and not future.done():
                    future.set_result(reply)
        except WebSocketDisconnect:
            sockets.pop(session_id, None)

    async def call(request: Request) -> Response:
        websocket = sockets.get(request.path_params["session_id"])
        if websocket is None:
            return JSONResponse({"error": "no session"}, status_code=404)
        request_id = f"r{next(ids)}"
        future = asyncio.get_running_loop().create_future()
        waiting[request_id] = future
        body = json.loads(await request.body())
        await websocket.send_text(json.dumps({
            "type": "page_tool_request", "requestId": request_id,
            "sessionId": request.path_params["session_id"], "tool": request.path_params["tool"],
            "actions": [{"action": "fill", **body}],
        }))
        return JSONResponse(await future)

    async def sessions(request: Request) -> Response:
        return JSONResponse([{"sessionId": s} for s in sockets])

    return Starlette(routes=[
        WebSocketRoute("/ws/sdk", page),
        Route("/api/sessions", sessions, methods=["GET"]),
        Route("/api/sessions/{session_id}/tools/{tool}", call, methods=["POST"]),
    ])


def _serve_echo() -> None:
    import uvicorn
    from mao_embed.config import ServerConfig
    from mao_embed.server import run_event_loop, settle_garbage_collector, uvicorn_config

    app = _echo_app()
    # The same uvicorn settings as the real backend (loop, HTTP and WebSocket implementation).
    settings = uvicorn_config(app, ServerConfig(host="127.0.0.1", port=0, secret="x"))
    server = uvicorn.Server(settings)

    async def main() -> None:
        serving = asyncio.get_running_loop().create_task(server.serve())
        while not server.started and not serving.done():
            await asyncio.sleep(0.02)
        # The same process settings as the real server, so the ratio measures the relay.
        settle_garbage_collector()
        port = server.servers[0].sockets[0].getsockname()[1]
        print(f"READY http://127.0.0.1:{port}", flush=True)
        await serving

    run_event_loop(main())


# --------------------------------------------------------------------------- load generator


_CLOCK_TICK_S = 1 / os.sysconf("SC_CLK_TCK")


def _cpu_seconds(stat_path: str) -> float:
    """utime + stime from a ``/proc/.../stat`` file (fields 14 and 15 of proc(5)); the
    fields are counted after the command name, which may itself hold spaces."""
    fields = Path(stat_path).read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) * _CLOCK_TICK_S


class _CpuMeter:
    """CPU time of the server processes (all threads, summed over the instances of a
    cluster; their main threads, which run the event loops), of Redis if any, and of this
    generator over one phase."""

    def __init__(self, server_pids: list[int], redis_pid: int | None = None) -> None:
        self._processes = [f"/proc/{pid}/stat" for pid in server_pids]
        self._main_threads = [f"/proc/{pid}/task/{pid}/stat" for pid in server_pids]
        self._redis = f"/proc/{redis_pid}/stat" if redis_pid else None
        self._start = self._sample()

    def _sample(self) -> tuple[float, float, float, float, float]:
        return (sum(map(_cpu_seconds, self._processes)),
                sum(map(_cpu_seconds, self._main_threads)),
                _cpu_seconds(self._redis) if self._redis else 0.0,
                time.process_time(), time.perf_counter())

    def stop(self, calls: int) -> dict[str, float]:
        server, main_thread, redis, generator, wall = (
            end - start for end, start in zip(self._sample(), self._start, strict=True)
        )
        return {
            "serverCpuUsPerCall": server / max(calls, 1) * 1e6,
            "serverMainThreadCpuUsPerCall": main_thread / max(calls, 1) * 1e6,
            "redisCpuUsPerCall": redis / max(calls, 1) * 1e6,
            "serverCpuShare": server / wall,
            "generatorCpuShare": generator / wall,
        }



class _Page:
    """A protocol-faithful fake SDK session (what ``mao_page.session.client`` sends, nothing
    more)."""

    def __init__(self, url: str, token: str, index: int, received: dict[str, int],
                 home: int = 0) -> None:
        self.url = url
        self.token = token
        self.index = index
        # Every requestId any page was sent, with how many times (lost / duplicated calls).
        self.received = received
        # Which of the servers holds this page.
        self.home = home
        self.session_id = ""
        self.socket: Any = None
        self.task: asyncio.Task[None] | None = None

    async def connect(self) -> None:
        import websockets

        self.socket = await websockets.connect(
            self.url, origin=ORIGIN, ping_interval=None, max_size=None,  # type: ignore[arg-type]
            compression=None,
        )
        await self.socket.send(json.dumps({
            "type": "hello", "protocolVersion": 1, "token": self.token, "agentId": AGENT,
            "user": {"id": USER}, "page": {"url": f"https://shop.example/p{self.index}",
                                          "title": "Bench"}, "sdkVersion": "bench",
        }))
        welcome = json.loads(await self.socket.recv())
        if welcome.get("type") != "welcome":
            raise RuntimeError(f"session refused: {welcome}")
        self.session_id = welcome["sessionId"]
        self.task = asyncio.get_running_loop().create_task(self._serve())

    async def _serve(self) -> None:
        import websockets

        try:
            async for raw in self.socket:
                message = json.loads(raw)
                kind = message.get("type")
                if kind == "page_tool_request":
                    request_id = message["requestId"]
                    self.received[request_id] = self.received.get(request_id, 0) + 1
                    await self.socket.send(json.dumps({
                        "type": "page_tool_result", "requestId": message["requestId"],
                        "success": True, "pageVersion": "v1",
                        "result": {"steps": [{"index": 0, "action": "fill", "success": True}]},
                    }))
                elif kind == "ping":
                    await self.socket.send(json.dumps({"type": "pong", "ts": message["ts"]}))
        except websockets.ConnectionClosed:
            return


class _HttpConnection:
    """A minimal HTTP/1.1 keep-alive client: the generator must cost less than the server,
    and a general-purpose client costs several times more per request than this."""

    def __init__(self, host: str, port: int) -> None:
        self.host = host
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)

    async def post(
        self, path: str, body: bytes, request_id: str | None = None
    ) -> tuple[int, bytes]:
        assert self.reader is not None and self.writer is not None
        extra = f"X-Request-Id: {request_id}\r\n" if request_id else ""
        self.writer.write(
            f"POST {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n{extra}"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        status_line = await self.reader.readline()
        status = int(status_line.split()[1])
        length = 0
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        return status, await self.reader.readexactly(length)


async def _loadgen(args: argparse.Namespace) -> dict[str, Any]:
    from urllib.parse import urlsplit

    from mao_embed.security.tokens import issue_token

    bases = [urlsplit(url) for url in args.url.split(",")]
    ws_urls = [f"ws://{base.hostname}:{base.port}/ws/sdk" for base in bases]
    token = issue_token(SECRET, user_id=USER, agent_id=AGENT, ttl_s=3600)
    received: dict[str, int] = {}
    # Dealt to the servers in turn; a call goes to the next server after its page's, which
    # with two instances is the one without the page.
    pages = [_Page(ws_urls[i % len(ws_urls)], token, i, received, i % len(ws_urls))
             for i in range(args.sessions)]
    started = time.perf_counter()
    # Connect in waves, like pages loading over a few seconds, not a single SYN flood.
    for wave in range(0, len(pages), 100):
        await asyncio.gather(*(p.connect() for p in pages[wave : wave + 100]))
    connect_s = time.perf_counter() - started
    pools: list[asyncio.Queue[_HttpConnection]] = []
    for base in bases:
        pool: asyncio.Queue[_HttpConnection] = asyncio.Queue()
        for _ in range(POOL):
            connection = _HttpConnection(base.hostname or "127.0.0.1", base.port or 80)
            await connection.open()
            pool.put_nowait(connection)
        pools.append(pool)
    held_before = min([await _count_sessions(pool) for pool in pools])

    print(json.dumps({"phase": "connected"}), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)

    targets = itertools.cycle(
        (f"/api/sessions/{p.session_id}/tools/page_fill", pools[(p.home + 1) % len(pools)])
        for p in pages
    )
    numbers = itertools.count(1)
    errors = 0
    sent: list[str] = []

    async def one_call(scheduled: float, latencies: list[float]) -> None:
        nonlocal errors
        path, pool = next(targets)
        request_id = f"bench-{next(numbers)}" if args.request_ids else None
        if request_id is not None:
            sent.append(request_id)
        connection = await pool.get()
        try:
            status, body = await connection.post(path, FILL_BODY, request_id)
        finally:
            pool.put_nowait(connection)
        if status != 200 or b'"success":true' not in body:
            errors += 1
        latencies.append((time.perf_counter() - scheduled) * 1000)

    # Warm-up: fill caches, JIT-free but first-touch allocations, TCP windows.
    await asyncio.gather(*(one_call(time.perf_counter(), []) for _ in range(200)))

    server_pids = [int(pid) for pid in str(args.server_pid).split(",")]
    open_latencies: list[float] = []
    open_cpu = _CpuMeter(server_pids, args.redis_pid)
    interval = 1.0 / args.rate
    calls: list[asyncio.Task[None]] = []
    loop = asyncio.get_running_loop()
    t0 = time.perf_counter()
    n = 0
    while (now := time.perf_counter()) - t0 < args.seconds:
        due = t0 + n * interval
        if due > now:
            await asyncio.sleep(due - now)
            continue
        # Catch up on every call that is due: scheduled, not delayed by a slow server.
        calls.append(loop.create_task(one_call(due, open_latencies)))
        n += 1
    await asyncio.gather(*calls)
    open_elapsed = time.perf_counter() - t0
    open_cpu_figures = open_cpu.stop(len(open_latencies))
    open_errors, errors = errors, 0

    closed_latencies: list[float] = []
    stop_at = time.perf_counter() + args.seconds

    async def worker() -> None:
        while time.perf_counter() < stop_at:
            await one_call(time.perf_counter(), closed_latencies)

    closed_cpu = _CpuMeter(server_pids, args.redis_pid)
    t1 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(POOL)))
    closed_elapsed = time.perf_counter() - t1
    closed_cpu_figures = closed_cpu.stop(len(closed_latencies))
    held_after = min([await _count_sessions(pool) for pool in pools])
    for page in pages:
        await page.socket.close()
    return {
        "sessions": args.sessions,
        "servers": len(pools),
        # With requestIds: calls whose request never reached a page, and requests a page got
        # more than once (SPEC W2: must both be 0).
        "lostCalls": sum(1 for r in sent if r not in received) if args.request_ids else None,
        "duplicatedCalls": sum(1 for n in received.values() if n > 1),
        "connectS": round(connect_s, 2),
        "heldBefore": held_before,
        "heldAfter": held_after,
        "open": {
            "targetRate": args.rate,
            "calls": len(open_latencies),
            "callsPerS": len(open_latencies) / open_elapsed,
            "errors": open_errors,
            "p50Ms": percentile(open_latencies, 50),
            "p99Ms": percentile(open_latencies, 99),
            "maxMs": max(open_latencies, default=None),
            **open_cpu_figures,
        },
        "closed": {
            "inFlight": POOL,
            "calls": len(closed_latencies),
            "callsPerS": len(closed_latencies) / closed_elapsed,
            "errors": errors,
            "p50Ms": percentile(closed_latencies, 50),
            "p99Ms": percentile(closed_latencies, 99),
            **closed_cpu_figures,
        },
    }


async def _count_sessions(pool: asyncio.Queue[_HttpConnection]) -> int:
    connection = await pool.get()
    try:
        connection.writer.write(  # type: ignore[union-attr]
            f"GET /api/sessions HTTP/1.1\r\nHost: {connection.host}:{connection.port}\r\n"
            "\r\n".encode()
        )
        reader = connection.reader
        assert reader is not None
        await reader.readline()
        length = 0
        while (line := await reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        return len(json.loads(await reader.readexactly(length)))
    finally:
        pool.put_nowait(connection)


# --------------------------------------------------------------------------- orchestration


def _rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


def _spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "bench.relay_load", *args],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        cwd=Path(__file__).resolve().parent.parent,
    )


def _measure(mode: str, sessions: int, seconds: float, rate: float, tmp: Path) -> dict[str, Any]:
    server = _spawn("server", "--mode", mode, "--db", str(tmp / f"{mode}-{sessions}.db"))
    try:
        assert server.stdout is not None
        ready = server.stdout.readline()
        if not ready.startswith("READY "):
            raise RuntimeError(f"{mode} server did not start: {ready!r}")
        url = ready.split()[1]
        time.sleep(0.5)
        rss_before = _rss_bytes(server.pid)
        loadgen = _spawn("loadgen", "--url", url, "--sessions", str(sessions),
                         "--seconds", str(seconds), "--rate", str(rate),
                         "--server-pid", str(server.pid))
        assert loadgen.stdout is not None and loadgen.stdin is not None
        line = loadgen.stdout.readline()
        if json.loads(line or "{}").get("phase") != "connected":
            raise RuntimeError(f"load generator failed to connect {sessions} sessions")
        time.sleep(1.0)  # idle: heartbeat tasks started, nothing in flight
        rss_idle = _rss_bytes(server.pid)
        load_before = os.getloadavg()[0]
        loadgen.stdin.write("go\n")
        loadgen.stdin.flush()
        out, _ = loadgen.communicate(timeout=seconds * 4 + 120)
        result = json.loads(out.strip().splitlines()[-1])
        result["mode"] = mode
        result["serverRssBefore"] = rss_before
        result["serverRssIdle"] = rss_idle
        result["memoryPerIdleSession"] = (rss_idle - rss_before) / sessions
        result["loadAverage1m"] = [load_before, os.getloadavg()[0]]
        return result
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()


def _start_mao(name: str, db: Path, redis_url: str | None = None) -> tuple[Any, str]:
    extra = ["--redis", redis_url, "--instance", name] if redis_url else []
    server = _spawn("server", "--mode", "mao", "--db", str(db), *extra)
    assert server.stdout is not None
    ready = server.stdout.readline()
    if not ready.startswith("READY "):
        server.kill()
        raise RuntimeError(f"{name} server did not start: {ready!r}")
    return server, ready.split()[1]


def _start_redis(tmp: Path) -> tuple[Any, str]:
    import shutil
    import socket

    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("redis-server is not installed (scripts/bootstrap installs it)")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    redis = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", str(tmp)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while True:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return redis, f"redis://127.0.0.1:{port}/0"
        if time.monotonic() > deadline or redis.poll() is not None:
            raise RuntimeError("redis-server did not start")
        time.sleep(0.05)


def _stop(process: Any) -> None:
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()


def _measure_cluster(
    mode: str, sessions: int, seconds: float, rate: float, tmp: Path
) -> dict[str, Any]:
    """``single``: one server; ``cluster``: two ``--redis`` instances, each call landing on
    the instance without its page. Calls carry an ``X-Request-Id`` in both."""
    started: list[Any] = []
    redis_pid: int | None = None
    try:
        urls: list[str] = []
        redis_url = None
        if mode == "cluster":
            redis, redis_url = _start_redis(tmp)
            started.append(redis)
            redis_pid = redis.pid
        for index in range(2 if mode == "cluster" else 1):
            name = f"i{index}"
            server, url = _start_mao(name, tmp / f"{mode}-{sessions}-{name}.db", redis_url)
            started.append(server)
            urls.append(url)
        servers = started[1:] if mode == "cluster" else started
        time.sleep(0.5)
        rss_before = sum(_rss_bytes(server.pid) for server in servers)
        loadgen = _spawn("loadgen", "--url", ",".join(urls), "--sessions", str(sessions),
                         "--seconds", str(seconds), "--rate", str(rate), "--request-ids",
                         "--server-pid", ",".join(str(server.pid) for server in servers),
                         *(["--redis-pid", str(redis_pid)] if redis_pid else []))
        assert loadgen.stdout is not None and loadgen.stdin is not None
        line = loadgen.stdout.readline()
        if json.loads(line or "{}").get("phase") != "connected":
            raise RuntimeError(f"load generator failed to connect {sessions} sessions")
        time.sleep(1.0)
        rss_idle = sum(_rss_bytes(server.pid) for server in servers)
        load_before = os.getloadavg()[0]
        loadgen.stdin.write("go\n")
        loadgen.stdin.flush()
        out, _ = loadgen.communicate(timeout=seconds * 4 + 120)
        result = json.loads(out.strip().splitlines()[-1])
        result["mode"] = mode
        result["memoryPerIdleSession"] = (rss_idle - rss_before) / sessions
        result["loadAverage1m"] = [load_before, os.getloadavg()[0]]
        return result
    finally:
        for process in reversed(started):
            _stop(process)


def _run_cluster(ctx: RunContext, levels: list[int], seconds: float, rate: float,
                 rounds: int) -> dict[str, Any]:
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="mao-relay-cluster-") as tmp:
        for sessions in levels:
            for round_index in range(rounds):
                for mode in (("cluster", "single") if round_index % 2 == 0
                             else ("single", "cluster")):
                    ctx.log(f"[relay_load] {mode}: {sessions} sessions, "
                            f"round {round_index + 1}/{rounds}")
                    result = _measure_cluster(mode, sessions, seconds, rate, Path(tmp))
                    result["round"] = round_index
                    results.append(result)
    return {
        "config": {"runs": 1, "rounds": rounds, "sessionLevels": levels, "seconds": seconds,
                   "openLoopRate": rate, "pool": POOL, "cluster": True},
        "summary": _cluster_summary(results),
        "results": results,
    }


def _cluster_summary(results: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"levels": {}}
    for sessions in sorted({r["sessions"] for r in results}):
        cluster, single = (_select(results, "cluster", sessions),
                           _select(results, "single", sessions))
        if not cluster or not single:
            continue
        cpu, single_cpu = (_median(cluster, "open", "serverCpuUsPerCall"),
                           _median(single, "open", "serverCpuUsPerCall"))
        p99, single_p99 = _median(cluster, "open", "p99Ms"), _median(single, "open", "p99Ms")
        paired = {r["round"]: r for r in single}
        out["levels"][str(sessions)] = {
            "rounds": len(cluster),
            "held": all(r["heldAfter"] == sessions and r["heldBefore"] == sessions
                        for r in cluster),
            "openCallsPerS": _median(cluster, "open", "callsPerS"),
            "p50Ms": _median(cluster, "open", "p50Ms"),
            "p99Ms": p99,
            "singleP50Ms": _median(single, "open", "p50Ms"),
            "singleP99Ms": single_p99,
            "p99Ratio": p99 / single_p99,
            "cpuUsPerCall": cpu,
            "singleCpuUsPerCall": single_cpu,
            "cpuRatio": cpu / single_cpu,
            "cpuRatioPerRound": [
                r["open"]["serverCpuUsPerCall"] / paired[r["round"]]["open"]["serverCpuUsPerCall"]
                for r in cluster if r["round"] in paired
            ],
            "p99RatioPerRound": [
                r["open"]["p99Ms"] / paired[r["round"]]["open"]["p99Ms"]
                for r in cluster if r["round"] in paired
            ],
            "redisCpuUsPerCall": _median(cluster, "open", "redisCpuUsPerCall"),
            "maxCallsPerS": _median(cluster, "closed", "callsPerS"),
            "singleMaxCallsPerS": _median(single, "closed", "callsPerS"),
            "lostCalls": sum(r["lostCalls"] or 0 for r in cluster),
            "duplicatedCalls": sum(r["duplicatedCalls"] for r in cluster),
            "errors": sum(r["open"]["errors"] + r["closed"]["errors"] for r in cluster),
            "singleErrors": sum(r["open"]["errors"] + r["closed"]["errors"] for r in single),
            "loadAverage1m": [min(min(r["loadAverage1m"]) for r in cluster + single),
                              max(max(r["loadAverage1m"]) for r in cluster + single)],
        }
    return out


def run(ctx: RunContext) -> dict[str, Any]:
    options = ctx.options
    cluster = bool(options.get("cluster"))
    default_levels = "500,1000" if cluster else "100,500,1000"
    levels = [int(n) for n in str(options.get("relay_sessions") or default_levels).split(",")]
    seconds = float(options.get("relay_seconds", 15.0))
    rate = float(options.get("relay_rate", 1000.0))
    rounds = int(options.get("relay_rounds", 3))
    if cluster:
        return _run_cluster(ctx, levels, seconds, rate, rounds)
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="mao-relay-load-") as tmp:
        for sessions in levels:
            for round_index in range(rounds):
                # Alternate which server goes first, so neither always meets the machine
                # state the other left behind.
                for mode in ("mao", "echo") if round_index % 2 == 0 else ("echo", "mao"):
                    ctx.log(f"[relay_load] {mode}: {sessions} sessions, "
                            f"round {round_index + 1}/{rounds}")
                    result = _measure(mode, sessions, seconds, rate, Path(tmp))
                    result["round"] = round_index
                    results.append(result)
    outcome = {
        "config": {"runs": 1, "rounds": rounds, "sessionLevels": levels, "seconds": seconds,
                   "openLoopRate": rate, "pool": POOL},
        "summary": _summary(results),
        "results": results,
    }
    chat_turns = int(options.get("relay_chat_turns", 60) or 0)
    if chat_turns > 0:
        # What storing the panel's conversation adds to a chat turn (SPEC U5; goal <= 5%).
        from bench import chat_turn

        outcome["chatTurn"] = chat_turn.measure(chat_turns, rounds, log=ctx.log)
    return outcome


def _select(results: list[dict[str, Any]], mode: str, sessions: int) -> list[dict[str, Any]]:
    return [r for r in results if (r["mode"], r["sessions"]) == (mode, sessions)]


def _median(rows: list[dict[str, Any]], phase: str, key: str) -> float:
    return statistics.median(row[phase][key] for row in rows)


def _summary(results: list[dict[str, Any]]) -> dict[str, Any]:
    levels = sorted({r["sessions"] for r in results})
    out: dict[str, Any] = {"levels": {}}
    for sessions in levels:
        mao, echo = _select(results, "mao", sessions), _select(results, "echo", sessions)
        if not mao or not echo:
            continue
        cpu = _median(mao, "open", "serverCpuUsPerCall")
        echo_cpu = _median(echo, "open", "serverCpuUsPerCall")
        paired = {r["round"]: r for r in echo}
        out["levels"][str(sessions)] = {
            "rounds": len(mao),
            "held": all(r["heldAfter"] == sessions and r["heldBefore"] == sessions for r in mao),
            "openCallsPerS": _median(mao, "open", "callsPerS"),
            "p50Ms": _median(mao, "open", "p50Ms"),
            "p99Ms": _median(mao, "open", "p99Ms"),
            "maxCallsPerS": _median(mao, "closed", "callsPerS"),
            "echoP50Ms": _median(echo, "open", "p50Ms"),
            "echoP99Ms": _median(echo, "open", "p99Ms"),
            "echoMaxCallsPerS": _median(echo, "closed", "callsPerS"),
            # Saturated throughputs: bounded by server and generator together on 2 cores.
            "costRatio": _median(echo, "closed", "callsPerS") / _median(mao, "closed",
                                                                        "callsPerS"),
            # Server CPU per call at the same fixed rate: the relay's own cost.
            "cpuUsPerCall": cpu,
            "echoCpuUsPerCall": echo_cpu,
            "cpuCostRatio": cpu / echo_cpu,
            "cpuCostRatioPerRound": [
                r["open"]["serverCpuUsPerCall"] / paired[r["round"]]["open"]["serverCpuUsPerCall"]
                for r in mao if r["round"] in paired
            ],
            "mainThreadCpuUsPerCall": _median(mao, "open", "serverMainThreadCpuUsPerCall"),
            "echoMainThreadCpuUsPerCall": _median(echo, "open", "serverMainThreadCpuUsPerCall"),
            "closedCpuUsPerCall": _median(mao, "closed", "serverCpuUsPerCall"),
            "echoClosedCpuUsPerCall": _median(echo, "closed", "serverCpuUsPerCall"),
            "closedServerCpuShare": _median(mao, "closed", "serverCpuShare"),
            "echoClosedServerCpuShare": _median(echo, "closed", "serverCpuShare"),
            "closedGeneratorCpuShare": _median(mao, "closed", "generatorCpuShare"),
            "echoClosedGeneratorCpuShare": _median(echo, "closed", "generatorCpuShare"),
            "p50Ratio": _median(mao, "open", "p50Ms") / _median(echo, "open", "p50Ms"),
            "memoryPerIdleSession": statistics.median(r["memoryPerIdleSession"] for r in mao),
            "echoMemoryPerIdleSession": statistics.median(
                r["memoryPerIdleSession"] for r in echo
            ),
            "loadAverage1m": [min(min(r["loadAverage1m"]) for r in mao + echo),
                              max(max(r["loadAverage1m"]) for r in mao + echo)],
            "errors": sum(r["open"]["errors"] + r["closed"]["errors"] for r in mao),
        }
    out["memoryPerIdleSession"] = describe(
        r["memoryPerIdleSession"] for r in results if r["mode"] == "mao"
    )
    return out


def headline(result: dict[str, Any]) -> dict[str, Any]:
    levels = result["summary"]["levels"]
    if result["config"].get("cluster"):
        return {level: {k: levels[level][k] for k in (
            "held", "p99Ms", "singleP99Ms", "p99Ratio", "cpuUsPerCall", "singleCpuUsPerCall",
            "cpuRatio", "lostCalls", "duplicatedCalls")} for level in levels}
    figures: dict[str, Any] = {
        level: {k: levels[level][k] for k in ("held", "openCallsPerS", "p50Ms", "p99Ms",
                                               "maxCallsPerS", "costRatio", "cpuUsPerCall",
                                               "cpuCostRatio", "memoryPerIdleSession")}
        for level in levels
    }
    if "chatTurn" in result:
        figures["chatTurn"] = result["chatTurn"]["summary"]
    return figures


def _cluster_table(result: dict[str, Any]) -> str:
    rows = []
    for level, row in result["summary"]["levels"].items():
        rows.append([
            level, "yes" if row["held"] else "NO", f"{row['openCallsPerS']:,.0f}",
            f"{row['p50Ms']:.1f} / {row['singleP50Ms']:.1f}",
            f"{row['p99Ms']:.1f} / {row['singleP99Ms']:.1f}", fmt_ratio(row["p99Ratio"]),
            f"{row['cpuUsPerCall']:,.0f} / {row['singleCpuUsPerCall']:,.0f}",
            fmt_ratio(row["cpuRatio"]), f"{row['redisCpuUsPerCall']:,.0f}",
            f"{row['maxCallsPerS']:,.0f} / {row['singleMaxCallsPerS']:,.0f}",
            f"{row['lostCalls']} / {row['duplicatedCalls']}", str(row["errors"]),
            "{:.1f}-{:.1f}".format(*row["loadAverage1m"]),
        ])
    config = result["config"]
    return (
        f"relay_load --cluster: 2 instances + Redis vs 1 server, open loop at "
        f"{config['openLoopRate']:,.0f} calls/s, {config['seconds']:.0f} s per phase, medians "
        f"of {config['rounds']} alternating rounds\n"
    ) + table(
        ["sessions", "held", "calls/s", "p50 ms (cluster / single)", "p99 ms (cluster / single)",
         "p99 ratio", "server CPU us/call (cluster / single)", "CPU ratio", "Redis CPU us/call",
         "max calls/s (cluster / single)", "lost / duplicated", "errors", "load avg"],
        rows,
    )


def summary_table(result: dict[str, Any]) -> str:
    if result["config"].get("cluster"):
        return _cluster_table(result)
    rows = []
    for level, row in result["summary"]["levels"].items():
        rows.append([
            level, "yes" if row["held"] else "NO",
            f"{row['openCallsPerS']:,.0f}", f"{row['p50Ms']:.1f}", f"{row['p99Ms']:.1f}",
            f"{row['echoP50Ms']:.1f}", f"{row['echoP99Ms']:.1f}",
            f"{row['maxCallsPerS']:,.0f}", f"{row['echoMaxCallsPerS']:,.0f}",
            fmt_ratio(row["costRatio"]),
            f"{row['cpuUsPerCall']:,.0f} ({row['mainThreadCpuUsPerCall']:,.0f})",
            f"{row['echoCpuUsPerCall']:,.0f} ({row['echoMainThreadCpuUsPerCall']:,.0f})",
            fmt_ratio(row["cpuCostRatio"]),
            f"{row['closedGeneratorCpuShare']:.2f} / {row['echoClosedGeneratorCpuShare']:.2f}",
            f"{row['memoryPerIdleSession'] / 1024:,.1f} kB",
            f"{row['echoMemoryPerIdleSession'] / 1024:,.1f} kB",
            "{:.1f}-{:.1f}".format(*row["loadAverage1m"]), str(row["errors"]),
        ])
    config = result["config"]
    text = (
        f"relay_load: open loop at {config['openLoopRate']:,.0f} calls/s, "
        f"{config['seconds']:.0f} s per phase, medians of {config.get('rounds', 1)} "
        "alternating rounds\n"
    ) + table(
        ["sessions", "held", "calls/s", "p50 ms", "p99 ms", "echo p50", "echo p99",
         "max calls/s", "echo max", "cost (echo/mao max)", "CPU us/call (loop)",
         "echo CPU us/call", "CPU cost (mao/echo)", "generator CPU closed (mao/echo)",
         "RSS/idle session", "echo RSS", "load avg", "errors"],
        rows,
    )
    if "chatTurn" in result:
        from bench import chat_turn

        text += "\n" + chat_turn.summary_table(result["chatTurn"])
    return text


# --------------------------------------------------------------------------- entry points


def main(argv: list[str] | None = None) -> int:
    """Subprocess entry points: ``server`` and ``loadgen`` (run by ``run``), and ``standalone``
    to run this benchmark without the browser harness and print the table."""
    parser = argparse.ArgumentParser(prog="python -m bench.relay_load")
    commands = parser.add_subparsers(dest="command", required=True)
    server = commands.add_parser("server")
    server.add_argument("--mode", choices=["mao", "echo"], required=True)
    server.add_argument("--db", type=Path, required=True)
    server.add_argument("--redis")
    server.add_argument("--instance")
    loadgen = commands.add_parser("loadgen")
    loadgen.add_argument("--url", required=True)
    loadgen.add_argument("--sessions", type=int, required=True)
    loadgen.add_argument("--seconds", type=float, required=True)
    loadgen.add_argument("--rate", type=float, required=True)
    loadgen.add_argument("--server-pid", required=True, help="comma-separated")
    loadgen.add_argument("--redis-pid", type=int)
    loadgen.add_argument("--request-ids", action="store_true")
    standalone = commands.add_parser("standalone")
    add_arguments(standalone)
    standalone.add_argument("--output", type=Path, help="also write the result as JSON here")
    args = parser.parse_args(argv)
    _raise_fd_limit()
    if args.command == "server":
        if args.mode == "mao":
            _serve_mao(args.db, args.redis, args.instance)
        else:
            _serve_echo()
        return 0
    if args.command == "loadgen":
        with contextlib.suppress(ImportError):
            import uvloop

            uvloop.install()
        print(json.dumps(asyncio.run(_loadgen(args))), flush=True)
        return 0
    ctx = RunContext(runs=1, warmup=0, servers=None, playwright=None, profiles_dir=Path("."),
                     options=vars(args), log=lambda *a: print(*a, file=sys.stderr, flush=True))
    result = run(ctx)
    if args.output is not None:
        args.output.write_text(json.dumps(
            {"benchmark": NAME, "loadAverageAtEnd": os.getloadavg(), **result}, indent=1
        ) + "\n")
    print(summary_table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
