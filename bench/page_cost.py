"""Page cost: what a business page pays for Mao Embed, against the same page without it.

The page is a generated order-list admin page with its own script (``bench/order_page.py``),
~1,600 elements, in three variants alternated within each run, each in a fresh Chromium
process with an empty profile:

* **bare**: the page alone, the anchor of every figure;
* **eager**: the page with the documented snippet (``embed_snippet``) and ``boot: "eager"``,
  ``mode: "main-thread"``: the SDK as it was before boot on first use and the worker, the
  anchor of the first-use ratios;
* **default**: the snippet without a boot option. Where ``init()`` only registers the session
  and boots Python on first use, this is the lazy page; where the loader ignores ``boot`` (or
  has no ``MaoChat.boot``), it boots at ``init()`` like eager, and the figures say so
  (``bootsEagerly``).

Figures, each with its same-run anchor (the bare page) as a difference or a ratio, medians over
the runs:

1. **A page view without use**: from navigation to the session registered (``GET
   /api/sessions`` lists it, ``connectedAt``; eager: ``MaoChat.ready``; bare: the load event),
   then 5 s idle. Bytes on the wire (every response the page's CDP session saw, encoded length,
   ``runner.NetworkRecorder``; WebSocket payload added), Total Blocking Time (sum over long
   tasks of duration - 50 ms, from a buffered ``longtask`` observer installed before any
   script), the longest task, and the RSS of the page's renderer process (``RendererMemory``).
2. **First use** on a warm cache (a second page in the same browser): ``MaoChat.boot()``
   (falling back to awaiting ``MaoChat.ready`` when there is no ``boot``) -> ready + 3 s, and
   clicking the panel's "Open panel" launcher -> ready + 3 s (only when the default page is
   lazy and shows the launcher). Meanwhile real clicks on the page's Refresh button every
   ~100 ms: the delay of each press (``performance.now() - event.timeStamp`` of its
   ``pointerdown`` in a capture listener installed before any script) - p95 and max; the
   longest task; the time to ready from the trigger, over the eager page's time to ready from
   navigation on a warm cache. When the default page boots eagerly the trigger is the
   navigation itself.
3. **Agent work** on a ~10,000-element version of the page, booted (the default mode, and
   ``mode: "main-thread"`` alternated with it: the call's wall time in the default mode over
   the main thread's is the "no slower" ratio): a whole-page
   ``page_inspect`` (``includeOffscreen``) and a 10-action batch (fills and clicks) through the
   HTTP API, while real clicks run; the call's wall time from the agent's side and the click
   delay p95 meanwhile, against the bare 10k page's click delay.
4. **Memory after boot**: the renderer's RSS at ready + 3 s of the first use, minus bare.

Real clicks and the SDK's takeover rule: real pointer input on the page while an agent's task
is open pauses the task (SPEC U3; docs/panel.md): a click on a page button stops a batch at its
next step, and one that lands before an inspect reaches the page gets it refused
(``user_takeover``). So during agent work the clicks land on a quiet spot of the open panel
(inside the SDK host, which the rule ignores; ``panel_quiet_point``): the press waits in the
same main-thread queue as one on a page button, so its delay measures the same thing. The bare
10k page's anchor clicks hit its Refresh button.

Playwright's ``mouse.click`` is used as is: it blocks until the page handled the press, so a
click that meets a long task waits for all of it and the next one starts after; one sample per
long task, not a queue of clicks behind it (the max is exact, the p95 leans low when tasks are
long and few).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from .order_page import FIRST_ORDER, order_page
from .runner import (
    NetworkRecorder,
    RunContext,
    describe,
    fmt_bytes,
    fmt_ms,
    fmt_ratio,
    percentile,
    short_name,
    table,
)
from .startup import LONG_TASKS_INIT

NAME = "page_cost"
DESCRIPTION = (
    "what the page pays: bare / eager / default page view, first use, agent work on 10k "
    "elements, memory"
)

VARIANTS = ("bare", "eager", "default")
AGENT_VARIANTS = ("bare", "default", "main-thread")
PAGE_ELEMENTS = 1_600
AGENT_PAGE_ELEMENTS = 10_000
IDLE_MS = 5_000  # a page view without use: this long after registration (bare: load)
AFTER_READY_MS = 3_000  # first use: clicks go on this long after ready
SETTLE_BEFORE_USE_MS = 1_000  # a lazy page sits registered this long before its first use
CLICK_INTERVAL_S = 0.1
IDLE_CLICKS_S = 3.0  # the bare page's own click delay, same clicker
INSPECT_CALLS = 3  # whole-page inspects per run (one is over within a few clicks)
READY_TIMEOUT_S = 120.0
LONG_TASK_MS = 50.0  # TBT counts what a task runs beyond this
# The runtime's files: a page that fetched one of them booted (or began to).
RUNTIME_FILES = ("pyodide.mjs", "pyodide.asm.wasm", "snapshot.bin")

# Goals (the issue's "Goal and benchmark"): metric key -> (limit, unit). A goal is met when the
# median over the runs is at or under the limit.
GOALS: dict[str, tuple[float, str]] = {
    "default.pageView.bytesAdded": (100_000, "bytes"),
    "default.pageView.tbtAddedMs": (20, "ms"),
    "default.pageView.rssAdded": (30e6, "bytes"),
    "firstUse.boot.longestTaskMs": (50, "ms"),
    "firstUse.boot.clickP95Ms": (50, "ms"),
    "firstUse.boot.readyOverEagerWarm": (1.0, "ratio"),
    "firstUse.panel.longestTaskMs": (50, "ms"),
    "firstUse.panel.clickP95Ms": (50, "ms"),
    "firstUse.panel.readyOverEagerWarm": (1.0, "ratio"),
    "agent.inspect.clickP95Ms": (50, "ms"),
    "agent.batch.clickP95Ms": (50, "ms"),
    "agent.inspect.wallOverMainThread": (1.0, "ratio"),
    "agent.batch.wallOverMainThread": (1.0, "ratio"),
    "memory.default.rssAdded": (120e6, "bytes"),
}

# Installed before any page script, next to the long-task observer: the delay of every real
# press, as the page's first handler sees it (the input delay of a click; INP's first part).
# ``sdk`` marks presses inside the SDK host (the panel), which the takeover rule ignores.
INPUT_DELAYS_INIT = (
    "window.__benchInputs = []; addEventListener('pointerdown', (event) => { "
    "if (!event.isTrusted) return; const delayMs = performance.now() - event.timeStamp; "
    "const sdk = event.composedPath().some((node) => node.localName === 'mao-embed-host'); "
    "window.__benchInputs.push({ at: event.timeStamp, delayMs, sdk }); }, true);"
)

# After navigation, on the SDK pages: when MaoChat.ready settles, in page time, kept in the
# page and said on the console. The driver learns it from the console message, which reaches it
# during its next call, without asking the page: a question would wait for the main thread, so
# the click right after it would not meet the task that kept the page busy.
SIGNAL = "mao-bench:"
WATCH_READY_JS = """() => {
  window.__benchReady = null;
  MaoChat.ready.then(() => {
    window.__benchReady = performance.now();
    console.debug("mao-bench:ready " + window.__benchReady);
  }, (error) => {
    console.debug("mao-bench:failed " + String((error && (error.code || error.message)) || error));
  });
}"""

# First use through the API: MaoChat.boot() where the loader has it (it returns MaoChat.ready,
# which WATCH_READY_JS already follows), else nothing to call: ready comes on its own.
TRIGGER_BOOT_JS = """() => {
  window.__benchTrigger = performance.now();
  const hasBoot = typeof MaoChat.boot === "function";
  if (hasBoot) Promise.resolve(MaoChat.boot()).catch(() => {});
  return hasBoot;
}"""

COLLECT_JS = """() => {
  const nav = performance.getEntriesByType("navigation")[0];
  const marks = {};
  for (const m of performance.getEntriesByType("mark")) marks[m.name] = m.startTime;
  return {
    nowMs: performance.now(),
    loadMs: nav ? nav.loadEventEnd : null,
    marks,
    longTasks: (window.__benchLongTasks || []).map((t) => [t.startTime, t.duration]),
    inputs: window.__benchInputs || [],
    elements: document.getElementsByTagName("*").length,
    readyMs: window.__benchReady ?? null,
    triggerMs: window.__benchTrigger ?? null,
    hasBoot: typeof window.MaoChat === "object" && typeof MaoChat.boot === "function",
  };
}"""


# --------------------------------------------------------------------------- renderer memory


class RendererMemory:
    """Resident memory of the renderer process that runs one page, read from ``/proc``.

    Not from CDP: ``SystemInfo.getProcessInfo`` reports CPU time only, and
    ``Performance.getMetrics`` / ``performance.memory`` count the JavaScript heap, not wasm
    memory or the renderer's own allocations. Chromium puts the profile directory on every
    child process's command line, so the renderers of one cold browser are the processes with
    ``--type=renderer`` and its ``--user-data-dir``. Which of them runs the page (a spare
    renderer, or the one of a page just closed, may be alive too) is told by CPU time: the
    page's renderer is the one that worked since ``begin()`` (parsing, layout, scripts) while
    the others idled. VmRSS counts the Chromium binary's pages the process touched as well;
    they are the same for the bare page, so differences against it cancel them (the anonymous
    and file-backed parts are kept apart in the JSON)."""

    def __init__(self, context: Any) -> None:
        self._marker = f"--user-data-dir={context._mao_profile}".encode()
        self._cpu_at_begin: dict[int, int] = {}
        self._pid: int | None = None

    def begin(self) -> None:
        self._cpu_at_begin = self._renderers()
        self._pid = None

    def read(self) -> dict[str, int | None]:
        if self._pid is None or not Path(f"/proc/{self._pid}").exists():
            now = self._renderers()
            worked = {pid: cpu - self._cpu_at_begin.get(pid, 0) for pid, cpu in now.items()}
            self._pid = max(worked, key=worked.__getitem__) if worked else None
        if self._pid is None:
            return {"pid": None, "rss": None}
        fields = _proc_status(self._pid)
        return {
            "pid": self._pid,
            "rss": fields.get("VmRSS"),
            "rssAnon": fields.get("RssAnon"),
            "rssFile": fields.get("RssFile"),
            "rssShmem": fields.get("RssShmem"),
        }

    def _renderers(self) -> dict[int, int]:
        """pid -> CPU time (clock ticks, user + system) of this browser's page renderers."""
        found = {}
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                # Chromium rewrites its command line into one space-separated process title.
                args = (entry / "cmdline").read_bytes().replace(b"\0", b" ").split()
                if b"--type=renderer" not in args or self._marker not in args:
                    continue
                if b"--top-chrome-webui" in args or b"--extension-process" in args:
                    continue
                stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:  # the process ended while being read
                continue
            found[int(entry.name)] = int(stat[11]) + int(stat[12])  # utime + stime
        return found


def _proc_status(pid: int) -> dict[str, int]:
    """The ``kB`` lines of ``/proc/PID/status``, in bytes."""
    out = {}
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return out
    for line in text.splitlines():
        key, _, value = line.partition(":")
        parts = value.split()
        if len(parts) == 2 and parts[1] == "kB":
            out[key] = int(parts[0]) * 1024
    return out


# --------------------------------------------------------------------------- one page load


@dataclass
class Load:
    """One page in one browser: its recorder, its renderer, its clock."""

    page: Any
    recorder: NetworkRecorder
    memory: RendererMemory
    time_origin_ms: float  # performance.timeOrigin: navigation start, epoch ms
    user_id: str | None
    signals: dict[str, str]  # what the page said on the console (WATCH_READY_JS)

    def page_ms(self) -> float:
        """Now, in the page's time (ms since navigation start)."""
        return time.time() * 1000 - self.time_origin_ms

    def ready(self) -> float | None:
        """Page time at which MaoChat.ready resolved, or None yet; raises if it rejected."""
        if "failed" in self.signals:
            raise RuntimeError(f"MaoChat.ready rejected: {self.signals['failed']}")
        return float(self.signals["ready"]) if "ready" in self.signals else None

    def wait_until(self, page_ms: float) -> None:
        rest = page_ms - self.page_ms()
        if rest > 0:
            self.page.wait_for_timeout(rest)

    def collect(self) -> dict[str, Any]:
        data = self.page.evaluate(COLLECT_JS)
        self.recorder.drain()
        data["network"] = self.recorder.snapshot()
        data["memory"] = self.memory.read()
        return data


def open_load(
    context: Any, memory: RendererMemory, url: str, user_id: str | None, *, sdk: bool
) -> Load:
    """A new page in ``context`` (the others closed, so their renderers go), navigated to
    ``url`` up to its load event."""
    page = context.new_page()
    for other in context.pages:
        if other is not page:
            other.close()
    recorder = NetworkRecorder(context, page)
    signals: dict[str, str] = {}

    def read_signal(message: Any) -> None:
        if message.text.startswith(SIGNAL):
            name, _, value = message.text[len(SIGNAL):].partition(" ")
            signals[name] = value

    page.on("console", read_signal)
    memory.begin()
    page.goto(url, wait_until="load", timeout=READY_TIMEOUT_S * 1000)
    time_origin = page.evaluate("performance.timeOrigin")
    if sdk:
        page.evaluate(WATCH_READY_JS)
    return Load(page, recorder, memory, time_origin, user_id, signals)


def cold_context(ctx: RunContext) -> tuple[Any, RendererMemory]:
    context = ctx.cold_browser()
    context.add_init_script(LONG_TASKS_INIT)
    context.add_init_script(INPUT_DELAYS_INIT)
    return context, RendererMemory(context)


def wait_registered(load: Load, agent: Any) -> dict[str, Any]:
    """Poll ``GET /api/sessions`` until the page's session is listed; its ``connectedAt`` in
    page time is when it registered."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        for session in agent.sessions():
            if session.get("userId") == load.user_id:
                connected = datetime.fromisoformat(session["connectedAt"].replace("Z", "+00:00"))
                return {
                    "sessionId": session["sessionId"],
                    "ready": session.get("ready"),
                    "registeredMs": connected.timestamp() * 1000 - load.time_origin_ms,
                }
        load.page.wait_for_timeout(50)
    raise TimeoutError(f"no session for {load.user_id} within {READY_TIMEOUT_S:.0f} s")


def session_ready(agent: Any, user_id: str) -> bool | None:
    for session in agent.sessions():
        if session.get("userId") == user_id:
            return session.get("ready")
    return None


def wait_ready(load: Load) -> float:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while (ready := load.ready()) is None:
        if time.monotonic() > deadline:
            raise TimeoutError(f"MaoChat.ready not settled within {READY_TIMEOUT_S:.0f} s")
        load.page.wait_for_timeout(50)
    return ready


def ready_at(data: dict[str, Any]) -> float | None:
    """When the session was ready: the loader's mark if it sets one, else when the page saw
    MaoChat.ready resolve."""
    return data["marks"].get("mao:session-ready", data["readyMs"])


# --------------------------------------------------------------------------- clicks


def click_point(page: Any, locator: Any) -> tuple[float, float]:
    box = locator.bounding_box()
    if box is None:
        raise RuntimeError(f"nothing to click: {locator} has no box")
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def click_until(page: Any, point: tuple[float, float], stop: Callable[[], bool]) -> int:
    """Real clicks at ``point`` every ``CLICK_INTERVAL_S`` (or at once after one that waited
    longer) until ``stop()``; returns how many."""
    clicks = 0
    while not stop():
        began = time.monotonic()
        page.mouse.click(*point)
        clicks += 1
        rest = CLICK_INTERVAL_S - (time.monotonic() - began)
        if rest > 0:
            time.sleep(rest)
    return clicks


def click_for(page: Any, point: tuple[float, float], seconds: float) -> int:
    end = time.monotonic() + seconds
    return click_until(page, point, lambda: time.monotonic() >= end)


def click_until_ready(load: Load, point: tuple[float, float], after_ms: float) -> float:
    """Click until MaoChat.ready has resolved and ``after_ms`` more passed; returns ready's
    page time (as the page saw it)."""
    deadline = time.monotonic() + READY_TIMEOUT_S

    def stop() -> bool:
        if time.monotonic() > deadline:
            raise TimeoutError(f"MaoChat.ready not settled within {READY_TIMEOUT_S:.0f} s")
        ready = load.ready()
        return ready is not None and load.page_ms() >= ready + after_ms

    click_until(load.page, point, stop)
    ready = load.ready()
    assert ready is not None  # stop() returned True
    return ready


# --------------------------------------------------------------------------- window figures


def tasks_in(data: dict[str, Any], start: float, end: float) -> list[float]:
    return [d for s, d in data["longTasks"] if start <= s < end]


def task_figures(data: dict[str, Any], start: float, end: float) -> dict[str, Any]:
    durations = tasks_in(data, start, end)
    return {
        "tbtMs": sum(max(0.0, d - LONG_TASK_MS) for d in durations),
        "longestTaskMs": max(durations, default=0.0),
        "longTasks": len(durations),
    }


def click_figures(
    data: dict[str, Any], start: float, end: float, *, sdk: bool = False
) -> dict[str, Any]:
    delays = [i["delayMs"] for i in data["inputs"] if i["sdk"] == sdk and start <= i["at"] <= end]
    return {"delays": delays, **delay_figures(delays)}


def delay_figures(delays: list[float]) -> dict[str, Any]:
    return {
        "clicks": len(delays),
        "clickMedianMs": percentile(delays, 50) if delays else None,
        "clickP95Ms": percentile(delays, 95) if delays else None,
        "clickMaxMs": max(delays) if delays else None,
    }


def network_figures(data: dict[str, Any], build_id: str) -> dict[str, Any]:
    net = data["network"]
    names = [short_name(f["url"], build_id=build_id) for f in net["files"]]
    return {
        "wireBytes": net["wireBytes"] + net["websocket"]["payloadBytes"],
        "httpWireBytes": net["wireBytes"],
        "websocketPayloadBytes": net["websocket"]["payloadBytes"],
        "requests": net["requests"],
        "unfinished": net["unfinished"],
        "runtimeFetched": any(n.rsplit("/", 1)[-1] in RUNTIME_FILES for n in names),
        "files": [
            {"name": n, "wireBytes": f["wireBytes"], "fromCache": f["fromCache"]}
            for n, f in zip(names, net["files"], strict=True)
        ],
    }


# --------------------------------------------------------------------------- the variants


@dataclass
class Pages:
    """The run's pages: one URL, user and token per load, so each load is its own session."""

    ctx: RunContext
    body: str
    agent_body: str

    def url(
        self, run: int, variant: str, load: str, *, agent_page: bool = False
    ) -> tuple[str, str]:
        from mao_embed.testing import embed_snippet, page_html

        srv = self.ctx.servers
        user_id = f"bench-page-cost-{run}-{variant}-{load}"
        snippet = ""
        if variant != "bare":
            token = srv.backend.issue_token(user_id, "bench-agent", origin=srv.pages.origin)
            extra = {
                "eager": {"boot": "eager", "mode": "main-thread"},
                "main-thread": {"mode": "main-thread"},
            }.get(variant)
            snippet = embed_snippet(
                srv.backend.url, agent_id="bench-agent", user_id=user_id, token=token, extra=extra
            )
        body = self.agent_body if agent_page else self.body
        url = srv.pages.add(
            f"/bench/page-cost/{run}-{variant}-{load}.html",
            page_html(body, snippet, title="Orders - admin"),
        )
        return url, user_id


def page_view(load: Load, end_ms: float, build_id: str) -> dict[str, Any]:
    """The page view's figures: wait until ``end_ms`` + IDLE_MS, then read them."""
    window_end = end_ms + IDLE_MS
    load.wait_until(window_end)
    data = load.collect()
    return {
        "endMs": end_ms,
        "windowEndMs": window_end,
        "loadMs": data["loadMs"],
        "elements": data["elements"],
        **network_figures(data, build_id),
        **task_figures(data, 0.0, window_end),
        "pyodideLoaded": "mao:pyodide-loaded" in data["marks"],
        "hasBoot": data["hasBoot"],
        "memory": data["memory"],
    }


def load_event_ms(load: Load) -> float:
    return load.page.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd")


def refresh_button(page: Any) -> tuple[float, float]:
    return click_point(page, page.locator("#refresh"))


def measure_bare(ctx: RunContext, pages: Pages, run: int) -> dict[str, Any]:
    context, memory = cold_context(ctx)
    try:
        url, _ = pages.url(run, "bare", "cold")
        load = open_load(context, memory, url, None, sdk=False)
        view = page_view(load, load_event_ms(load), ctx.servers.build_id)
        start = load.page_ms()
        click_for(load.page, refresh_button(load.page), IDLE_CLICKS_S)
        data = load.collect()
        return {"pageView": view, "idleClicks": click_figures(data, start, load.page_ms())}
    finally:
        ctx.close_browser(context)


def first_use(load: Load, agent: Any, trigger: str) -> dict[str, Any]:
    """Boot by ``trigger`` ("navigation": it is booting already; "boot": MaoChat.boot();
    "panel": the launcher) and click the page's button until ready + AFTER_READY_MS."""
    point = refresh_button(load.page)
    registration = None
    has_boot = None
    if trigger == "navigation":
        trigger_ms = 0.0
    else:
        registration = wait_registered(load, agent)
        load.wait_until(registration["registeredMs"] + SETTLE_BEFORE_USE_MS)
        if trigger == "boot":
            has_boot = load.page.evaluate(TRIGGER_BOOT_JS)
            trigger_ms = load.page.evaluate("window.__benchTrigger")
        else:
            before = load.page_ms()
            load.page.get_by_role("button", name="Open panel", exact=True).click()
            presses = [
                i["at"] for i in load.page.evaluate("window.__benchInputs")
                if i["sdk"] and i["at"] >= before - 50
            ]
            trigger_ms = presses[0] if presses else before
    ready = click_until_ready(load, point, AFTER_READY_MS)
    data = load.collect()
    ready_ms = ready_at(data) or ready
    end = ready + AFTER_READY_MS
    return {
        "trigger": trigger,
        "hasBoot": has_boot,
        "registration": registration,
        "triggerMs": trigger_ms,
        "readyAtMs": ready_ms,
        "readyMs": ready_ms - trigger_ms,
        **task_figures(data, trigger_ms, end),
        **click_figures(data, trigger_ms, end),
        "memory": data["memory"],
    }


def measure_eager(ctx: RunContext, pages: Pages, run: int) -> dict[str, Any]:
    context, memory = cold_context(ctx)
    try:
        url, user_id = pages.url(run, "eager", "cold")
        load = open_load(context, memory, url, user_id, sdk=True)
        ready = wait_ready(load)
        view = page_view(load, ready, ctx.servers.build_id)
        url, user_id = pages.url(run, "eager", "warm")
        warm = first_use(open_load(context, memory, url, user_id, sdk=True), None, "navigation")
        return {"pageView": view, "warm": warm}
    finally:
        ctx.close_browser(context)


def measure_default(ctx: RunContext, pages: Pages, run: int, agent: Any) -> dict[str, Any]:
    context, memory = cold_context(ctx)
    try:
        url, user_id = pages.url(run, "default", "cold")
        load = open_load(context, memory, url, user_id, sdk=True)
        registration = wait_registered(load, agent)
        view = page_view(load, registration["registeredMs"], ctx.servers.build_id)
        view["registration"] = registration
        view["sessionReadyAtEnd"] = session_ready(agent, user_id)
        # A default page that fetched the runtime, or whose session is ready, without being
        # used, boots at init(): then its first use is its navigation.
        eager = bool(view["runtimeFetched"] or view["pyodideLoaded"] or view["sessionReadyAtEnd"])
        out: dict[str, Any] = {"pageView": view, "bootsEagerly": eager}
        if not eager:
            # The lazy page's first use on a cold cache; it also fills the cache for the warm
            # first uses below, as the eager page's cold load does for its warm one.
            out["bootCold"] = first_use(load, agent, "boot")
        url, user_id = pages.url(run, "default", "boot")
        out["boot"] = first_use(
            open_load(context, memory, url, user_id, sdk=True),
            agent,
            "navigation" if eager else "boot",
        )
        if eager:
            out["panel"] = {"skipped": "the default page boots at init(): no first use to open"}
            return out
        url, user_id = pages.url(run, "default", "panel")
        load = open_load(context, memory, url, user_id, sdk=True)
        if not load.page.get_by_role("button", name="Open panel", exact=True).is_visible():
            out["panel"] = {"skipped": "no visible 'Open panel' launcher on the default page"}
            return out
        out["panel"] = first_use(load, agent, "panel")
        return out
    finally:
        ctx.close_browser(context)


# --------------------------------------------------------------------------- agent work


def batch_actions(snapshot: dict[str, Any]) -> list[dict[str, Any]]:
    """Ten steps: four fills on the new-order form, then Flag on the first five rows and View
    on the first (the column headers are buttons named like the form's fields, hence the
    role)."""

    def ref(label: str, *, button: bool) -> dict[str, str]:
        [element] = [
            e for e in snapshot["elements"]
            if e["label"] == label and (e["role"] == "button") == button
        ]
        return {"snapshotId": snapshot["snapshotId"], "elementId": element["elementId"]}

    first = FIRST_ORDER
    fills = (
        ("Customer", "Northwind Traders"),
        ("Email", "orders@northwind.example"),
        ("Amount", "129.50"),
        ("Note", "Deliver before noon"),
    )
    return [
        *({"action": "fill", **ref(label, button=False), "value": v} for label, v in fills),
        *({"action": "click", **ref(f"Flag order {first + n}", button=True)} for n in range(5)),
        {"action": "click", **ref(f"View order {first}", button=True)},
    ]


def timed_call(agent: Any, session_id: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    began = time.perf_counter()
    answer = agent.call(session_id, tool, args)
    wall = (time.perf_counter() - began) * 1000
    error = answer.get("error") or {}
    steps = (answer.get("result") or {}).get("steps")
    return {
        "wallMs": wall,
        "success": bool(answer.get("success")),
        "error": error.get("code"),
        "stoppedAt": answer.get("stoppedAt"),
        "steps": len(steps) if steps is not None else None,
        "answer": answer,
    }


def call_while_clicking(
    load: Load,
    pool: ThreadPoolExecutor,
    point: tuple[float, float],
    call: Callable[[], dict[str, Any]],
) -> dict[str, Any]:
    """``call()`` on a thread while the main thread clicks at ``point`` (in the SDK panel)."""
    start = load.page_ms()
    future = pool.submit(call)
    click_until(load.page, point, future.done)
    end = load.page_ms()
    result = future.result()
    data = load.collect()
    result.pop("answer")
    return {**result, **click_figures(data, start, end, sdk=True), **task_figures(data, start, end)}


def pooled(calls: list[dict[str, Any]]) -> dict[str, Any]:
    """Several calls' figures as one: the median wall time, the clicks of all of them."""
    delays = [d for call in calls for d in call["delays"]]
    return {
        "wallMs": describe(c["wallMs"] for c in calls)["median"],
        "success": all(c["success"] for c in calls),
        "error": next((c["error"] for c in calls if not c["success"]), None),
        **delay_figures(delays),
        "longestTaskMs": max(c["longestTaskMs"] for c in calls),
        "tbtMs": sum(c["tbtMs"] for c in calls),
    }


def panel_quiet_point(page: Any) -> tuple[float, float]:
    """A point inside the SDK panel with no control under it that stays put while the panel
    grows: the panel is anchored at the bottom of the viewport and its footer's buttons sit at
    the right, so the footer row left of them. (A point on the heading moves up as the action
    log grows, onto the level buttons, and a click there changes the authorization.)"""
    region = page.get_by_role("region", name="Mao Embed", exact=True)
    panel = region.bounding_box()
    pause = region.get_by_role("button", name="Pause", exact=True).bounding_box()
    if panel is None or pause is None:
        raise RuntimeError("the SDK panel is not open: nowhere to click inside it")
    # The footer row, left to right up to Pause (the footer holds other buttons too: New
    # conversation, Delete), then the panel's left padding above it.
    row_y = pause["y"] + pause["height"] / 2
    candidates = [(panel["x"] + x, row_y) for x in range(4, int(pause["x"] - panel["x"]), 6)]
    candidates += [(panel["x"] + 3, row_y - dy) for dy in range(8, 200, 8)]
    for point in candidates:
        under = page.evaluate(
            """([x, y]) => {
              const host = document.querySelector("mao-embed-host");
              const node = host && host.shadowRoot.elementFromPoint(x, y);
              if (!node) return "nothing";
              const control = node.closest(
                "button, input, textarea, select, a, summary, [role=radio], [role=button]");
              return control ? control.outerHTML.slice(0, 80) : null;
            }""",
            list(point),
        )
        if under is None:
            return point
    raise RuntimeError("no quiet point in the SDK panel: every candidate is on a control")


def measure_agent_bare(ctx: RunContext, pages: Pages, run: int) -> dict[str, Any]:
    context, memory = cold_context(ctx)
    try:
        url, _ = pages.url(run, "bare", "agent", agent_page=True)
        load = open_load(context, memory, url, None, sdk=False)
        load.page.wait_for_timeout(SETTLE_BEFORE_USE_MS)
        start = load.page_ms()
        click_for(load.page, refresh_button(load.page), IDLE_CLICKS_S)
        data = load.collect()
        end = load.page_ms()
        return {
            "elements": data["elements"],
            **click_figures(data, start, end),
            **task_figures(data, start, end),
        }
    finally:
        ctx.close_browser(context)


def measure_agent_default(
    ctx: RunContext, pages: Pages, run: int, agent: Any, variant: str = "default"
) -> dict[str, Any]:
    context, memory = cold_context(ctx)
    try:
        url, user_id = pages.url(run, variant, "agent", agent_page=True)
        load = open_load(context, memory, url, user_id, sdk=True)
        session = wait_registered(load, agent)["sessionId"]
        load.page.evaluate(TRIGGER_BOOT_JS)
        wait_ready(load)
        page = load.page
        # The user grants full access in the panel (under "ask each time" every step would
        # wait for a card); a collapsed panel is opened first.
        launcher = page.get_by_role("button", name="Open panel", exact=True)
        if launcher.is_visible():
            launcher.click()
        page.get_by_role("radio", name="Full access", exact=True).click()
        page.wait_for_timeout(SETTLE_BEFORE_USE_MS)
        elements = page.evaluate("document.getElementsByTagName('*').length")
        prepare = timed_call(agent, session, "page_inspect", {"includeOffscreen": True})
        if not prepare["success"]:
            raise RuntimeError(f"page_inspect failed: {prepare['error']}")
        snapshot = prepare.pop("answer")["result"]
        actions = batch_actions(snapshot)
        point = panel_quiet_point(page)
        with ThreadPoolExecutor(max_workers=1) as pool:
            batch = call_while_clicking(
                load, pool, point,
                lambda: timed_call(agent, session, "page_click", {"actions": actions}),
            )
            inspects = [
                call_while_clicking(
                    load, pool, point,
                    lambda: timed_call(agent, session, "page_inspect", {"includeOffscreen": True}),
                )
                for _ in range(INSPECT_CALLS)
            ]
        return {
            "elements": elements,
            "interactiveElements": len(snapshot["elements"]),
            "firstInspectMs": prepare["wallMs"],
            "batch": batch,
            "inspect": pooled(inspects),
            "inspectCalls": inspects,
        }
    finally:
        ctx.close_browser(context)


# --------------------------------------------------------------------------- the run


def _difference(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or not b else a / b


def derive(record: dict[str, Any]) -> dict[str, float | None]:
    """One run's figures against its anchors (flat keys, as in GOALS)."""
    bare = record["bare"]["pageView"]
    out: dict[str, float | None] = {
        "bare.pageView.wireBytes": bare["wireBytes"],
        "bare.pageView.tbtMs": bare["tbtMs"],
        "bare.pageView.longestTaskMs": bare["longestTaskMs"],
        "bare.pageView.rss": bare["memory"]["rss"],
        "bare.idleClicks.clickP95Ms": record["bare"]["idleClicks"]["clickP95Ms"],
        "bare.idleClicks.clickMaxMs": record["bare"]["idleClicks"]["clickMaxMs"],
    }
    for variant in ("eager", "default"):
        view = record[variant]["pageView"]
        out[f"{variant}.pageView.endMs"] = view["endMs"]
        out[f"{variant}.pageView.bytesAdded"] = view["wireBytes"] - bare["wireBytes"]
        out[f"{variant}.pageView.tbtAddedMs"] = view["tbtMs"] - bare["tbtMs"]
        out[f"{variant}.pageView.longestTaskMs"] = view["longestTaskMs"]
        out[f"{variant}.pageView.rssAdded"] = _difference(
            view["memory"]["rss"], bare["memory"]["rss"]
        )
    warm = record["eager"]["warm"]
    for name, use in (
        ("eagerWarm", warm),
        ("boot", record["default"]["boot"]),
        ("panel", record["default"]["panel"]),
        ("bootCold", record["default"].get("bootCold", {"skipped": "boots eagerly"})),
    ):
        if "skipped" in use:
            continue
        out[f"firstUse.{name}.readyMs"] = use["readyMs"]
        out[f"firstUse.{name}.readyOverEagerWarm"] = _ratio(use["readyMs"], warm["readyMs"])
        out[f"firstUse.{name}.longestTaskMs"] = use["longestTaskMs"]
        out[f"firstUse.{name}.tbtMs"] = use["tbtMs"]
        out[f"firstUse.{name}.clickP95Ms"] = use["clickP95Ms"]
        out[f"firstUse.{name}.clickMaxMs"] = use["clickMaxMs"]
    agent = record["agent"]
    out["agent.bare.clickP95Ms"] = agent["bare"]["clickP95Ms"]
    out["agent.bare.clickMaxMs"] = agent["bare"]["clickMaxMs"]
    for call in ("inspect", "batch"):
        figures = agent["default"][call]
        out[f"agent.{call}.wallMs"] = figures["wallMs"]
        out[f"agent.{call}.clickP95Ms"] = figures["clickP95Ms"]
        out[f"agent.{call}.clickMaxMs"] = figures["clickMaxMs"]
        out[f"agent.{call}.longestTaskMs"] = figures["longestTaskMs"]
        main = agent["main-thread"][call]
        out[f"agent.mainThread.{call}.wallMs"] = main["wallMs"]
        out[f"agent.mainThread.{call}.clickP95Ms"] = main["clickP95Ms"]
        out[f"agent.mainThread.{call}.longestTaskMs"] = main["longestTaskMs"]
        out[f"agent.{call}.wallOverMainThread"] = _ratio(figures["wallMs"], main["wallMs"])
    out["agent.firstInspectMs"] = agent["default"]["firstInspectMs"]
    out["memory.default.rssAdded"] = _difference(
        record["default"]["boot"]["memory"]["rss"], bare["memory"]["rss"]
    )
    out["memory.eager.rssAdded"] = _difference(
        record["eager"]["pageView"]["memory"]["rss"], bare["memory"]["rss"]
    )
    return out


def run(ctx: RunContext) -> dict[str, Any]:
    from mao_embed.testing import AgentClient

    body, elements = order_page(PAGE_ELEMENTS)
    agent_body, agent_elements = order_page(AGENT_PAGE_ELEMENTS)
    pages = Pages(ctx, body, agent_body)
    agent = AgentClient(ctx.servers.backend.url, timeout=READY_TIMEOUT_S)
    runs = []
    try:
        for i in range(ctx.warmup + ctx.runs):
            order = VARIANTS[i % 3:] + VARIANTS[: i % 3]
            record: dict[str, Any] = {
                "index": i,
                "warmup": i < ctx.warmup,
                "order": list(order),
                "loadAverage1m": os.getloadavg()[0],
            }
            for variant in order:
                if variant == "bare":
                    record["bare"] = measure_bare(ctx, pages, i)
                elif variant == "eager":
                    record["eager"] = measure_eager(ctx, pages, i)
                else:
                    record["default"] = measure_default(ctx, pages, i, agent)
            agent_order = AGENT_VARIANTS[i % 3:] + AGENT_VARIANTS[: i % 3]
            record["agent"] = {}
            for variant in agent_order:
                record["agent"][variant] = (
                    measure_agent_bare(ctx, pages, i)
                    if variant == "bare"
                    else measure_agent_default(ctx, pages, i, agent, variant)
                )
            record["loadAverage1mAfter"] = os.getloadavg()[0]
            record["derived"] = derive(record)
            runs.append(record)
            ctx.log(_progress(record, ctx))
    finally:
        agent.close()
    measured = [r for r in runs if not r["warmup"]]
    return {
        "config": {
            "runs": ctx.runs,
            "warmup": ctx.warmup,
            "pageElements": elements,
            "agentPageElements": agent_elements,
            "idleMs": IDLE_MS,
            "afterReadyMs": AFTER_READY_MS,
            "clickIntervalMs": CLICK_INTERVAL_S * 1000,
            "assetBase": ctx.servers.asset_base,
            "goals": {key: {"limit": limit, "unit": unit} for key, (limit, unit) in GOALS.items()},
        },
        "summary": summarize(measured),
        "runs": runs,
    }


def _progress(record: dict[str, Any], ctx: RunContext) -> str:
    d = record["derived"]
    label = "warm-up" if record["warmup"] else f"run {record['index'] - ctx.warmup + 1}/{ctx.runs}"
    return (
        f"  {label:>9}: default view {_fmt(d['default.pageView.bytesAdded'], 'bytes')}, "
        f"TBT +{fmt_ms(d['default.pageView.tbtAddedMs'])}, "
        f"RSS {_fmt(d['default.pageView.rssAdded'], 'bytes')}"
        f" | boot ready {fmt_ms(d.get('firstUse.boot.readyMs'))} "
        f"(eager warm {fmt_ms(d.get('firstUse.eagerWarm.readyMs'))}), click p95 "
        f"{fmt_ms(d.get('firstUse.boot.clickP95Ms'))}"
        f" | inspect {fmt_ms(d['agent.inspect.wallMs'])} p95 "
        f"{fmt_ms(d['agent.inspect.clickP95Ms'])}, batch {fmt_ms(d['agent.batch.wallMs'])} p95 "
        f"{fmt_ms(d['agent.batch.clickP95Ms'])}"
        f" | load {record['loadAverage1m']:.1f}"
    )


def summarize(measured: list[dict[str, Any]]) -> dict[str, Any]:
    keys: list[str] = []
    for record in measured:
        keys.extend(k for k in record["derived"] if k not in keys)
    figures = {key: describe(r["derived"].get(key) for r in measured) for key in keys}
    goals = {}
    for key, (limit, unit) in GOALS.items():
        median = figures.get(key, {}).get("median")
        goals[key] = {
            "limit": limit,
            "unit": unit,
            "median": median,
            "met": None if median is None else median <= limit,
        }
    defaults = [r["default"] for r in measured]
    return {
        "figures": figures,
        "goals": goals,
        "defaultBootsEagerly": sum(1 for d in defaults if d["bootsEagerly"]),
        "defaultHasBoot": sum(1 for d in defaults if d["pageView"]["hasBoot"]),
        "panelSkipped": sorted(
            {d["panel"]["skipped"] for d in defaults if "skipped" in d["panel"]}
        ),
        "agentCalls": {
            call: {
                "succeeded": sum(1 for r in measured if r["agent"]["default"][call]["success"]),
                "errors": sorted(
                    {str(r["agent"]["default"][call]["error"]) for r in measured
                     if not r["agent"]["default"][call]["success"]}
                ),
            }
            for call in ("inspect", "batch")
        },
    }


def headline(result: dict[str, Any]) -> dict[str, Any]:
    s = result["summary"]
    out = {key: stats["median"] for key, stats in s["figures"].items()}
    out["goalsMet"] = sum(1 for g in s["goals"].values() if g["met"])
    out["goalsMeasured"] = sum(1 for g in s["goals"].values() if g["met"] is not None)
    out["defaultBootsEagerly"] = s["defaultBootsEagerly"]
    return out


# --------------------------------------------------------------------------- the table


def _fmt(value: float | None, unit: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if unit == "bytes":
        return ("+" if value >= 0 else "") + fmt_bytes(value) if value else "0 B"
    if unit == "ratio":
        return fmt_ratio(value)
    return fmt_ms(value)


# (label, metric key for the default page / the SDK figure, key for eager, key for the anchor,
# unit). The anchor column is the bare page's own figure in the same runs.
ROWS: tuple[tuple[str, str | None, str | None, str | None, str], ...] = (
    ("page view: bytes added (bare: total)", "default.pageView.bytesAdded",
     "eager.pageView.bytesAdded", "bare.pageView.wireBytes", "bytes"),
    ("page view: TBT added (bare: TBT)", "default.pageView.tbtAddedMs",
     "eager.pageView.tbtAddedMs", "bare.pageView.tbtMs", "ms"),
    ("page view: longest task", "default.pageView.longestTaskMs",
     "eager.pageView.longestTaskMs", "bare.pageView.longestTaskMs", "ms"),
    ("page view: renderer RSS added (bare: RSS)", "default.pageView.rssAdded",
     "eager.pageView.rssAdded", "bare.pageView.rss", "bytes"),
    ("page view: ends at (registered / ready / load)", "default.pageView.endMs",
     "eager.pageView.endMs", None, "ms"),
    ("first use boot(): time to ready", "firstUse.boot.readyMs", "firstUse.eagerWarm.readyMs",
     None, "ms"),
    ("first use boot(): ready / eager warm ready", "firstUse.boot.readyOverEagerWarm", None, None,
     "ratio"),
    ("first use boot(), cold cache: time to ready", "firstUse.bootCold.readyMs",
     "eager.pageView.endMs", None, "ms"),
    ("first use boot(): longest task", "firstUse.boot.longestTaskMs",
     "firstUse.eagerWarm.longestTaskMs", None, "ms"),
    ("first use boot(): click delay p95 (bare: idle)", "firstUse.boot.clickP95Ms",
     "firstUse.eagerWarm.clickP95Ms", "bare.idleClicks.clickP95Ms", "ms"),
    ("first use boot(): click delay max (bare: idle)", "firstUse.boot.clickMaxMs",
     "firstUse.eagerWarm.clickMaxMs", "bare.idleClicks.clickMaxMs", "ms"),
    ("first use panel: time to ready", "firstUse.panel.readyMs", None, None, "ms"),
    ("first use panel: ready / eager warm ready", "firstUse.panel.readyOverEagerWarm", None, None,
     "ratio"),
    ("first use panel: longest task", "firstUse.panel.longestTaskMs", None, None, "ms"),
    ("first use panel: click delay p95", "firstUse.panel.clickP95Ms", None, None, "ms"),
    ("agent 10k: inspect wall time", "agent.inspect.wallMs", None, None, "ms"),
    ("agent 10k: inspect click p95 (bare 10k: idle)", "agent.inspect.clickP95Ms", None,
     "agent.bare.clickP95Ms", "ms"),
    ("agent 10k: inspect longest task", "agent.inspect.longestTaskMs", None, None, "ms"),
    ("agent 10k: 10-action batch wall time", "agent.batch.wallMs", None, None, "ms"),
    ("agent 10k: batch click p95 (panel clicks)", "agent.batch.clickP95Ms", None,
     "agent.bare.clickP95Ms", "ms"),
    ("agent 10k: batch longest task", "agent.batch.longestTaskMs", None, None, "ms"),
    ("agent 10k: inspect wall, default / main-thread", "agent.inspect.wallOverMainThread", None,
     None, "ratio"),
    ("agent 10k: batch wall, default / main-thread", "agent.batch.wallOverMainThread", None,
     None, "ratio"),
    ("agent 10k main-thread: inspect click p95", "agent.mainThread.inspect.clickP95Ms", None,
     None, "ms"),
    ("agent 10k main-thread: inspect longest task", "agent.mainThread.inspect.longestTaskMs",
     None, None, "ms"),
    ("memory after boot: RSS added", "memory.default.rssAdded", "memory.eager.rssAdded", None,
     "bytes"),
)


def summary_table(result: dict[str, Any]) -> str:
    s = result["summary"]
    cfg = result["config"]
    env = result.get("environment", {})
    figures, goals = s["figures"], s["goals"]

    def median(key: str | None) -> float | None:
        return figures.get(key, {}).get("median") if key else None

    rows = []
    for label, key, eager_key, anchor_key, unit in ROWS:
        anchor_unit = "ms" if unit == "ratio" else unit
        anchor = median(anchor_key)
        anchor_text = "-" if anchor is None else (
            fmt_bytes(anchor) if anchor_unit == "bytes" else fmt_ms(anchor)
        )
        goal = goals.get(key or "")
        if goal is None:
            goal_text, met = "", ""
        else:
            limit = goal["limit"]
            goal_text = "<= " + (
                fmt_bytes(limit) if unit == "bytes" else fmt_ratio(limit) if unit == "ratio"
                else fmt_ms(limit)
            )
            met = "-" if goal["met"] is None else ("yes" if goal["met"] else "NO")
        rows.append([label, _fmt(median(key), unit), _fmt(median(eager_key), unit), anchor_text,
                     goal_text, met])
    loads = [r["loadAverage1m"] for r in result["runs"] if not r["warmup"]]
    measured = len(loads)
    out = [
        f"page_cost: {cfg['runs']} runs (+{cfg['warmup']} warm-up), medians over runs of each "
        f"run's figure against its anchor; {env.get('chromium')}, build {result.get('buildId')}, "
        f"commit {env.get('gitCommit')}{' (dirty)' if env.get('gitDirty') else ''}",
        f"page: {cfg['pageElements']:,} elements (agent work: {cfg['agentPageElements']:,}); "
        f"fresh Chromium per variant and run; page view = to registered (eager: ready; bare: "
        f"load) + {cfg['idleMs'] / 1000:.0f} s",
        "",
        table(["figure", "default", "eager", "bare (anchor)", "goal", "met"], rows),
        "",
        f"default page booted at init() in {s['defaultBootsEagerly']} of {measured} runs "
        f"(MaoChat.boot defined in {s['defaultHasBoot']}); first use of such a page is its "
        f"navigation, and the panel-open case is skipped",
    ]
    for reason in s["panelSkipped"]:
        out.append(f"panel first use skipped: {reason}")
    for call, info in s["agentCalls"].items():
        if info["errors"]:
            out.append(
                f"agent {call}: {info['succeeded']} of {measured} succeeded; errors "
                f"{info['errors']}"
            )
    if loads:
        out.append(
            f"1-min load average at the start of each run: {min(loads):.1f} .. {max(loads):.1f} "
            f"({env.get('cpuCount')} CPUs)"
        )
    return "\n".join(out)
