"""Shared pieces for the benchmarks: statistics, the servers, cold browsers, network bytes,
result files and text tables.

Every benchmark module exposes ``NAME``, ``DESCRIPTION``, ``run(ctx) -> dict`` and
``summary_table(result) -> str`` and optionally ``headline(result) -> dict`` (what goes into
``latest.json``). The runner (``python -m bench``) owns the servers, the result directory and the
printing; a benchmark only measures.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

REPO_DIR = Path(__file__).resolve().parent.parent
RESULTS_DIR = Path(__file__).resolve().parent / "results"
RESULT_FORMAT = 1


# --------------------------------------------------------------------------- statistics


def percentile(values: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default), q in [0, 100]."""
    data = sorted(values)
    if not data:
        return math.nan
    if len(data) == 1:
        return float(data[0])
    pos = (len(data) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(data) - 1)
    return float(data[lo] + (data[hi] - data[lo]) * (pos - lo))


def describe(values: Iterable[float | None]) -> dict[str, float | int | None]:
    """median, p90, min, max, mean and n of the values that are present."""
    data = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    if not data:
        return {"n": 0, "median": None, "p90": None, "min": None, "max": None, "mean": None}
    return {
        "n": len(data),
        "median": statistics.median(data),
        "p90": percentile(data, 90),
        "min": min(data),
        "max": max(data),
        "mean": statistics.fmean(data),
    }


# --------------------------------------------------------------------------- formatting


def fmt_ms(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f} ms"


def fmt_bytes(value: float | None) -> str:
    if value is None:
        return "-"
    value = float(value)
    for unit, scale in (("MB", 1e6), ("kB", 1e3)):
        if abs(value) >= scale:
            return f"{value / scale:,.2f} {unit}"
    return f"{value:,.0f} B"


def fmt_ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def table(
    headers: Sequence[str], rows: Sequence[Sequence[str]], *, align: str | None = None
) -> str:
    """Plain fixed-width table; ``align`` is one char per column, "l" or "r" (default: first
    column left, the rest right)."""
    align = align or ("l" + "r" * (len(headers) - 1))
    widths = [max(len(str(c)) for c in col) for col in zip(headers, *rows, strict=True)]

    def line(cells: Sequence[str]) -> str:
        out = []
        for cell, width, a in zip(cells, widths, align, strict=True):
            out.append(str(cell).ljust(width) if a == "l" else str(cell).rjust(width))
        return "  ".join(out).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(headers), rule, *(line(r) for r in rows)])


# --------------------------------------------------------------------------- environment


def _run_text(cmd: list[str]) -> str | None:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def environment_info() -> dict[str, Any]:
    from importlib.metadata import PackageNotFoundError, version

    from mao_embed.testing import chromium_path

    try:
        playwright_version: str | None = version("playwright")
    except PackageNotFoundError:  # pragma: no cover - playwright is a declared dependency
        playwright_version = None
    chromium = _run_text([chromium_path(), "--version"])
    lock = json.loads((REPO_DIR / "loader_js" / "package-lock.json").read_text())
    pyodide_version = lock["packages"]["node_modules/pyodide"]["version"]
    commit = _run_text(["git", "-C", str(REPO_DIR), "rev-parse", "--short", "HEAD"])
    dirty = _run_text(["git", "-C", str(REPO_DIR), "status", "--porcelain", "--untracked-files=no"])
    return {
        "chromium": chromium.splitlines()[-1] if chromium else None,
        "chromiumPath": chromium_path(),
        "playwright": playwright_version,
        "pyodide": pyodide_version,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpuCount": os.cpu_count(),
        "loadAverage": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "gitCommit": commit,
        "gitDirty": bool(dirty),
    }


@dataclass
class Servers:
    """The backend and a page server on a second port (pages are cross-origin, as on a
    real site). ``asset_base`` is the versioned asset directory the loader uses."""

    backend: Any  # mao_embed.server.RunningServer
    pages: Any  # mao_embed.testing.PageServer
    build_id: str

    @property
    def asset_base(self) -> str:
        return f"{self.backend.url}/sdk/{self.build_id}/"


def snapshot_assets(target: Path, attempts: int = 5) -> str:
    """Build the SDK assets if needed and copy them to ``target``; returns the build id.

    The backend serves the copy: ``mao_embed/_sdk`` is shared with anything else running in
    this checkout (tests, the demo, other builds), and a rebuild replaces it wholesale, which
    would change the build under a running benchmark.
    """
    from mao_embed.assets import SDK_DIR, ensure_built

    for _ in range(attempts):
        build_id = ensure_built().build_id
        shutil.rmtree(target, ignore_errors=True)
        try:
            shutil.copytree(SDK_DIR, target)
            manifest = json.loads((target / "manifest.json").read_text())
        except (OSError, ValueError, shutil.Error):
            time.sleep(1)
            continue
        complete = manifest.get("buildId") == build_id and all(
            (target / name).is_file() for name in manifest.get("files", {})
        )
        if complete:
            return build_id
        time.sleep(1)
    raise RuntimeError(f"could not take a consistent copy of {SDK_DIR} (rebuilt concurrently?)")


@contextmanager
def servers() -> Iterator[Servers]:
    from mao_embed.config import ServerConfig
    from mao_embed.server import start_in_thread
    from mao_embed.testing import PageServer, random_secret

    tmp = Path(tempfile.mkdtemp(prefix="mao-bench-"))
    pages = None
    backend = None
    try:
        build_id = snapshot_assets(tmp / "sdk")
        pages = PageServer().start()
        config = ServerConfig(
            host="127.0.0.1",
            port=0,
            secret=random_secret(),
            allowed_origins=(pages.origin,),
            db_path=tmp / "audit.db",
            sdk_dir=tmp / "sdk",
        )
        backend = start_in_thread(config)
        yield Servers(backend=backend, pages=pages, build_id=build_id)
    finally:
        if backend is not None:
            backend.stop()
        if pages is not None:
            pages.stop()
        shutil.rmtree(tmp, ignore_errors=True)


@dataclass
class RunContext:
    """What a benchmark gets from the runner."""

    runs: int
    warmup: int
    servers: Servers
    playwright: Any  # playwright.sync_api.Playwright
    profiles_dir: Path
    options: dict[str, Any] = field(default_factory=dict)
    log: Any = print

    def cold_browser(self, **context_options: Any) -> Any:
        """A new Chromium process with a fresh, empty user-data-dir (empty HTTP cache, empty
        code cache). Returns the persistent BrowserContext; closing it ends the process."""
        from mao_embed.testing import CHROMIUM_ARGS, chromium_path

        profile = Path(tempfile.mkdtemp(prefix="profile-", dir=self.profiles_dir))
        context = self.playwright.chromium.launch_persistent_context(
            str(profile),
            executable_path=chromium_path(),
            args=list(CHROMIUM_ARGS),
            headless=True,
            viewport={"width": 1280, "height": 800},
            **context_options,
        )
        context._mao_profile = profile  # removed by close_browser
        return context

    @staticmethod
    def close_browser(context: Any) -> None:
        profile = getattr(context, "_mao_profile", None)
        context.close()
        if profile is not None:
            shutil.rmtree(profile, ignore_errors=True)


# --------------------------------------------------------------------------- network bytes


class NetworkRecorder:
    """Bytes per request as the browser's network stack saw them (CDP ``Network`` domain).

    In-page Resource Timing reports 0 for the sizes of cross-origin responses that carry no
    ``Timing-Allow-Origin`` header, which is the case for the SDK assets on a business page,
    so the byte counts come from here. ``wireBytes`` is ``loadingFinished.encodedDataLength``:
    status line + headers + (compressed) body as received, 0 for a cache hit.
    """

    def __init__(self, context: Any, page: Any) -> None:
        self._cdp = context.new_cdp_session(page)
        self.requests: dict[str, dict[str, Any]] = {}
        self.websocket = {"framesSent": 0, "framesReceived": 0, "payloadBytes": 0}
        on = self._cdp.on
        on("Network.requestWillBeSent", self._will_send)
        on("Network.responseReceived", self._response)
        on("Network.requestServedFromCache", self._from_cache)
        on("Network.dataReceived", self._data)
        on("Network.loadingFinished", self._finished)
        on("Network.loadingFailed", self._failed)
        on("Network.webSocketFrameSent", self._ws_sent)
        on("Network.webSocketFrameReceived", self._ws_received)
        self._cdp.send("Network.enable")

    def reset(self) -> None:
        self.requests.clear()
        self.websocket = {"framesSent": 0, "framesReceived": 0, "payloadBytes": 0}

    def drain(self) -> None:
        """One round trip so events already emitted by the browser are dispatched."""
        self._cdp.send("Runtime.evaluate", {"expression": "0"})

    def detach(self) -> None:
        from playwright.sync_api import Error as PlaywrightError

        # Detaching from a page that already closed raises; there is nothing left to detach.
        with contextlib.suppress(PlaywrightError):
            self._cdp.detach()

    def _entry(self, request_id: str) -> dict[str, Any]:
        return self.requests.setdefault(
            request_id,
            {
                "url": None,
                "type": None,
                "status": None,
                "fromCache": None,
                "encoding": None,
                "decodedBytes": 0,
                "wireBytes": None,
                "failed": False,
            },
        )

    def _will_send(self, event: dict[str, Any]) -> None:
        entry = self._entry(event["requestId"])
        entry["url"] = event["request"]["url"]
        entry["type"] = event.get("type")

    def _response(self, event: dict[str, Any]) -> None:
        entry = self._entry(event["requestId"])
        response = event["response"]
        entry["url"] = entry["url"] or response.get("url")
        entry["status"] = response.get("status")
        headers = {k.lower(): v for k, v in (response.get("headers") or {}).items()}
        entry["encoding"] = headers.get("content-encoding")
        if response.get("fromDiskCache"):
            entry["fromCache"] = "disk"
        elif response.get("fromPrefetchCache"):
            entry["fromCache"] = "prefetch"
        elif entry["fromCache"] is None:
            entry["fromCache"] = None if response.get("status") != 304 else "revalidated"

    def _from_cache(self, event: dict[str, Any]) -> None:
        self._entry(event["requestId"])["fromCache"] = "memory"

    def _data(self, event: dict[str, Any]) -> None:
        self._entry(event["requestId"])["decodedBytes"] += event.get("dataLength", 0)

    def _finished(self, event: dict[str, Any]) -> None:
        self._entry(event["requestId"])["wireBytes"] = event.get("encodedDataLength", 0)

    def _failed(self, event: dict[str, Any]) -> None:
        self._entry(event["requestId"])["failed"] = True

    def _ws_sent(self, event: dict[str, Any]) -> None:
        self.websocket["framesSent"] += 1
        self.websocket["payloadBytes"] += len(event["response"].get("payloadData", ""))

    def _ws_received(self, event: dict[str, Any]) -> None:
        self.websocket["framesReceived"] += 1
        self.websocket["payloadBytes"] += len(event["response"].get("payloadData", ""))

    def snapshot(self) -> dict[str, Any]:
        files = [
            dict(r) for r in self.requests.values() if r["url"] and not r["url"].startswith("data:")
        ]
        finished = [r for r in files if r["wireBytes"] is not None]
        return {
            "wireBytes": sum(r["wireBytes"] for r in finished),
            "decodedBytes": sum(r["decodedBytes"] for r in finished),
            "requests": len(files),
            "unfinished": len(files) - len(finished),
            "fromCache": sum(1 for r in files if r["fromCache"] in ("disk", "memory", "prefetch")),
            "websocket": dict(self.websocket),
            "files": files,
        }


def short_name(url: str, *, build_id: str | None = None) -> str:
    """``http://127.0.0.1:1234/sdk/<build>/wheels/x.whl`` -> ``sdk/wheels/x.whl``."""
    parts = urlsplit(url)
    path = parts.path.lstrip("/")
    if build_id:
        path = path.replace(f"sdk/{build_id}/", "sdk/")
    return path or "/"


# --------------------------------------------------------------------------- results


def now_iso() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n")
    tmp.replace(path)


def update_index(
    results_dir: Path, name: str, result: dict[str, Any], headline: dict[str, Any]
) -> Path:
    """``latest.json``: one entry per benchmark, the newest run of each; entries of benchmarks
    not run this time are kept."""
    index_path = results_dir / "latest.json"
    try:
        index = json.loads(index_path.read_text())
        if not isinstance(index.get("benchmarks"), dict):
            raise ValueError
    except (OSError, ValueError):
        index = {"format": RESULT_FORMAT, "benchmarks": {}}
    index["format"] = RESULT_FORMAT
    index["updatedAt"] = now_iso()
    index["benchmarks"][name] = {
        "file": f"{name}.json",
        "startedAt": result.get("startedAt"),
        "durationS": result.get("durationS"),
        "runs": result.get("config", {}).get("runs"),
        "gitCommit": result.get("environment", {}).get("gitCommit"),
        "headline": headline,
    }
    write_json(index_path, index)
    return index_path


class Stopwatch:
    def __init__(self) -> None:
        self.start = time.monotonic()

    def elapsed(self) -> float:
        return time.monotonic() - self.start


def eprint(*args: Any) -> None:
    print(*args, file=sys.stderr, flush=True)
