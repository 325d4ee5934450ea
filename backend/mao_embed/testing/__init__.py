"""Helpers to drive a real page with the SDK embedded: used by ``mao-embed demo``, our own
tests and the public pytest plugin (``mao_embed.pytest_plugin``).

Everything here goes through the outside contract: pages embed the SDK with the documented
snippet, and tools are called through the agent HTTP API (docs/agent-api.md).
"""

from __future__ import annotations

import html
import json
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

DEFAULT_CHROMIUM = "/usr/bin/chromium"

# Without these, headless Chromium keeps trying to reach Google hosts, which a test machine
# without internet answers slowly or not at all.
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost",
)


# Chromium keeps renderer shared memory in /dev/shm unless told otherwise; Playwright always
# tells it to use the temporary directory instead (a Docker /dev/shm of 64 MB is too small).
# On a disk close to full that swaps one crash for another, so where /dev/shm is roomy (the
# threshold Debian's own chromium wrapper uses) the tests give Chromium its default back.
_ROOMY_SHM = 4_080_218_931


def launch_chromium(playwright: Any, *, log: bool = False) -> Any:
    """Our Chromium through Playwright: ``CHROMIUM_ARGS``, /dev/shm when it is roomy, and with
    ``log`` Chromium's own error log on stderr (a renderer's failed CHECK says why there)."""
    args = [*CHROMIUM_ARGS, *(["--enable-logging=stderr"] if log else [])]
    ignore = ["--disable-dev-shm-usage"] if _free_bytes("/dev/shm") >= _ROOMY_SHM else []
    return playwright.chromium.launch(
        executable_path=chromium_path(), args=args, ignore_default_args=ignore
    )


def _free_bytes(path: str) -> int:
    try:
        stat = os.statvfs(path)
    except OSError:
        return 0
    return stat.f_bavail * stat.f_frsize


class RendererCrashes:
    """Chromium renderer crashes of the pages of watched browser contexts.

    A crashed renderer takes its page with it: Playwright calls on it fail with "Target
    crashed" and the page's session ends, so its pending tool calls answer ``disconnected``.
    Watching a context says so on stderr (shown with a failed test's captured output) and lets
    a test runner tell such a failure from the test's own (``tests/browser/conftest.py``
    reruns it once, and says so)."""

    def __init__(self) -> None:
        self._crashed: list[Any] = []
        self._contexts: list[Any] = []

    @property
    def count(self) -> int:
        """Crashes seen so far."""
        return len(self._crashed)

    def watch(self, context: Any) -> None:
        """Watch every page of a Playwright ``BrowserContext``, open now or later."""
        self._contexts.append(context)
        context.on("close", self._forget)
        context.on("page", self._watch_page)
        for page in context.pages:
            self._watch_page(page)

    def settle(self) -> None:
        """Take delivery of crash events still on their way. Playwright's sync API dispatches
        events only while it is being called, so a test that saw its page fail through the
        agent API alone (``disconnected``) has not heard of the crash yet: one round trip to
        the driver per open watched context."""
        from playwright.sync_api import Error

        for context in list(self._contexts):
            try:
                context.cookies()
            except Error:  # closed meanwhile (its browser went with a module's fixtures)
                self._forget(context)

    def _forget(self, context: Any) -> None:
        if context in self._contexts:
            self._contexts.remove(context)

    def crashed(self, page: Any) -> bool:
        return any(page is crashed for crashed in self._crashed)

    def _watch_page(self, page: Any) -> None:
        page.on("crash", self._on_crash)

    def _on_crash(self, page: Any) -> None:
        self._crashed.append(page)
        print(
            f"mao-embed: the Chromium renderer of {page.url} crashed; {machine_state()}",
            file=sys.stderr,
        )


def machine_state() -> str:
    """What a crash report needs from the machine: free memory, load, the largest processes,
    and the kernel's last word on killed processes. A renderer that the kernel kills for memory
    (SIGKILL) or that dies on a failed allocation says nothing on its own stderr."""
    facts = []
    try:
        meminfo = dict(line.split(":", 1) for line in open("/proc/meminfo", encoding="ascii"))
        facts.append(
            f"MemAvailable {meminfo['MemAvailable'].strip()} of {meminfo['MemTotal'].strip()}"
        )
        facts.append(f"load {open('/proc/loadavg', encoding='ascii').read().split()[:3]}")
    except (OSError, KeyError, ValueError):
        pass
    facts.append(
        ", ".join(
            f"{path} {_free_bytes(path) // 2**20} MB free"
            for path in ("/dev/shm", tempfile.gettempdir())
        )
    )
    processes = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(
                line.split(":", 1)
                for line in status.read_text(encoding="utf-8", errors="replace").splitlines()
                if ":" in line
            )
            processes.append((int(fields.get("VmRSS", "0 kB").split()[0]), fields["Name"].strip()))
        except (OSError, KeyError, ValueError):
            continue
    processes.sort(reverse=True)
    facts.append(
        "largest RSS " + ", ".join(f"{name} {rss // 1024} MB" for rss, name in processes[:6])
    )
    try:
        kernel = subprocess.run(
            ["dmesg"], capture_output=True, text=True, timeout=5
        ).stdout.splitlines()
        killed = [
            line for line in kernel if "oom" in line.lower() or "killed process" in line.lower()
        ]
        facts.append(f"kernel: {killed[-3:] if killed else 'no OOM kill logged'}")
    except (OSError, subprocess.SubprocessError):
        facts.append("kernel log unreadable")
    return "; ".join(facts)


renderer_crashes = RendererCrashes()


def chromium_path() -> str:
    return os.environ.get("MAO_CHROMIUM", DEFAULT_CHROMIUM)


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def embed_snippet(
    server_url: str, *, agent_id: str, user_id: str, token: str, extra: dict[str, Any] | None = None
) -> str:
    """The business-page snippet (README "Embedding"), exactly as a site would write it."""
    options = {
        "serverUrl": server_url,
        "agentId": agent_id,
        "user": {"id": user_id},
        "token": token,
        **(extra or {}),
    }
    return (
        f'<script src="{html.escape(server_url)}/sdk/mao-chat.js"></script>\n'
        f"<script>MaoChat.init({json.dumps(options)});</script>"
    )


def with_open_panel(init: dict[str, Any] | None) -> dict[str, Any]:
    """Init options for a test page: the panel shown open (booting on first use, the SDK
    otherwise starts as its launcher), unless the test chose ``ui`` or an eager boot. Tests
    then boot it with ``MaoChat.boot()``, one of the first-use triggers."""
    options = dict(init or {})
    if "ui" not in options and options.get("boot") != "eager":
        options["ui"] = {"collapsed": False}
    # The suite runs in either runtime mode (SPEC E6): MAO_EMBED_TEST_MODE=worker|main-thread.
    mode = os.environ.get("MAO_EMBED_TEST_MODE")
    if mode and "mode" not in options:
        options["mode"] = mode
    return options


class _ThreadedUvicorn:
    """A uvicorn server on its own thread; stops cleanly."""

    def __init__(self, app: Any, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host = host
        self.port = port or free_port(host)
        config = uvicorn.Config(app, host=host, port=self.port, log_level="warning", lifespan="on")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, name=f"uvicorn-{self.port}", daemon=True
        )

    def start(self, timeout: float = 10.0) -> None:
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError(f"server on port {self.port} did not start")
            time.sleep(0.02)

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)


@dataclass
class PageServer:
    """Serves business pages from memory on their own origin (a different port from the
    backend, so the SDK is exercised cross-origin as on a real site)."""

    host: str = "127.0.0.1"
    pages: dict[str, tuple[str, dict[str, str]]] = field(default_factory=dict)
    _server: _ThreadedUvicorn | None = None

    @property
    def origin(self) -> str:
        assert self._server is not None, "PageServer not started"
        return f"http://{self.host}:{self._server.port}"

    def start(self) -> PageServer:
        async def serve(request: Request) -> Response:
            path = "/" + request.path_params["path"]
            if path not in self.pages:
                return Response("not found", status_code=404)
            body, headers = self.pages[path]
            if callable(body):  # a server-rendered page: given the submitted form, if any
                form = dict(await request.form()) if request.method == "POST" else {}
                return HTMLResponse(body({**request.query_params, **form}), headers=headers)
            return HTMLResponse(body, headers=headers)

        app = Starlette(routes=[Route("/{path:path}", serve, methods=["GET", "POST"])])
        self._server = _ThreadedUvicorn(app, self.host)
        self._server.start()
        return self

    def add(
        self,
        path: str,
        body: str | Callable[[dict[str, Any]], str],
        headers: dict[str, str] | None = None,
        *,
        content_type: str | None = None,
    ) -> str:
        """Serve ``body`` at ``path``; HTML unless ``content_type`` (or a Content-Type header)
        says otherwise, e.g. ``content_type="text/javascript"`` for a script. A callable body
        renders the page from the request's query and posted form (GET and POST)."""
        if not path.startswith("/"):
            path = "/" + path
        headers = dict(headers or {})
        if content_type is not None:
            headers["Content-Type"] = content_type
        self.pages[path] = (body, headers)
        return self.origin + path

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()


def page_html(body: str, snippet: str, *, title: str = "Test page", head: str = "") -> str:
    return (
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>"
        f"{html.escape(title)}</title>{head}</head>"
        f"<body>{body}\n{snippet}</body></html>"
    )


class AgentClient:
    """The agent's side: the HTTP API (docs/agent-api.md), nothing else."""

    def __init__(self, server_url: str, api_key: str | None = None, timeout: float = 60.0) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(base_url=server_url, headers=headers, timeout=timeout)

    def sessions(self) -> list[dict[str, Any]]:
        response = self._http.get("/api/sessions")
        response.raise_for_status()
        return response.json()

    def tools(self) -> list[dict[str, Any]]:
        response = self._http.get("/api/tools")
        response.raise_for_status()
        return response.json()

    def call(
        self,
        session_id: str,
        tool: str,
        args: dict[str, Any] | None = None,
        *,
        request_id: str | None = None,
    ) -> dict[str, Any]:
        headers = {"X-Request-Id": request_id} if request_id else {}
        response = self._http.post(
            f"/api/sessions/{session_id}/tools/{tool}", json=args or {}, headers=headers
        )
        return response.json()

    def session(self, session_id: str) -> dict[str, Any]:
        """``GET /api/sessions/{id}``: the session, with the site's instructions if any."""
        response = self._http.get(f"/api/sessions/{session_id}")
        response.raise_for_status()
        return response.json()

    def site_tools(self, session_id: str) -> list[dict[str, Any]]:
        """The page's site tools (docs/site-tools.md)."""
        response = self._http.get(f"/api/sessions/{session_id}/site-tools")
        response.raise_for_status()
        return response.json()

    def call_site_tool(
        self,
        session_id: str,
        name: str,
        args: dict[str, Any] | None = None,
        *,
        timeout_ms: int | None = None,
    ) -> dict[str, Any]:
        headers = {"X-Timeout-Ms": str(timeout_ms)} if timeout_ms else {}
        response = self._http.post(
            f"/api/sessions/{session_id}/site-tools/{name}", json=args or {}, headers=headers
        )
        return response.json()

    def call_raw(
        self, session_id: str, tool: str, content: bytes, *, headers: dict[str, str] | None = None
    ) -> httpx.Response:
        return self._http.post(
            f"/api/sessions/{session_id}/tools/{tool}", content=content,
            headers={"Content-Type": "application/json", **(headers or {})},
        )

    def wait_for_session(
        self,
        *,
        url: str | None = None,
        user_id: str | None = None,
        timeout: float = 60.0,
        exclude: set[str] | None = None,
        ready: bool | None = True,
    ) -> dict[str, Any]:
        """The first session matching; ``ready``: whose runtime has booted (True), has not
        (False), either (None)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for session in self.sessions():
                if exclude and session["sessionId"] in exclude:
                    continue
                if url is not None and session.get("url") != url:
                    continue
                if user_id is not None and session.get("userId") != user_id:
                    continue
                if ready is None or session.get("ready", True) == ready:
                    return session
            time.sleep(0.1)
        raise TimeoutError(f"no SDK session for {url or user_id} within {timeout} s")

    def close(self) -> None:
        self._http.close()


def random_secret() -> str:
    return secrets.token_urlsafe(32)
