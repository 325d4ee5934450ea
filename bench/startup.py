"""Start-up: navigation start -> Pyodide loaded -> Python ready -> session ready.

Each measured run opens two fresh Chromium processes (new, empty user-data-dir each):

* the product page, a business page with the documented snippet (``embed_snippet``) served
  from a second origin: first load = **cold**, then ``page.reload()`` in the same context =
  **warm** (HTTP cache and V8/wasm code cache filled by the first load);
* the anchor page, same origin and body, which loads Pyodide alone from the same backend
  (``import(pyodide.mjs)`` + ``loadPyodide({indexURL})``, no packages), cold then warm.

The order of the two alternates between runs so drift hits both alike. All times are read in
the page, relative to ``performance.timeOrigin`` (navigation start), from the marks the loader
sets: ``mao:pyodide-loaded`` (loadPyodide resolved, wheels included), ``mao:python-ready``
(``mao_page.runtime.boot()`` returned) and ``mao:session-ready`` (``signalReady``, the moment
``MaoChat.ready`` resolves); the anchor page sets ``anchor:pyodide-loaded``.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from typing import Any

from .runner import (
    NetworkRecorder,
    RunContext,
    describe,
    fmt_bytes,
    fmt_ms,
    fmt_ratio,
    short_name,
    table,
)

NAME = "startup"
DESCRIPTION = "navigation start -> Python ready -> session ready, cold browser and warm reload"

READY_TIMEOUT_MS = 90_000
TOP_ASSETS = 8
DEFAULT_SETTLE_MS = 1000

PAGE_BODY = (
    "<main><h1>Acme Store</h1><p>Benchmark page for Mao Embed start-up.</p>"
    "<form><label>Email <input type='email' name='email'></label>"
    "<button type='submit'>Subscribe</button></form></main>"
)

# Runs in the page once the thing being measured is ready; everything is relative to
# performance.timeOrigin (= navigation start for the document).
_COLLECT = """
  const nav = performance.getEntriesByType("navigation")[0];
  const marks = {};
  const markDetails = {};
  for (const m of performance.getEntriesByType("mark")) { marks[m.name] = m.startTime;
    if (m.detail) markDetails[m.name] = m.detail; }
  const resources = performance.getEntriesByType("resource").map((e) => ({
    name: e.name, initiatorType: e.initiatorType, startTime: e.startTime,
      responseEnd: e.responseEnd,
    transferSize: e.transferSize, encodedBodySize: e.encodedBodySize,
      decodedBodySize: e.decodedBodySize,
  }));
  return {
    timeOrigin: performance.timeOrigin,
    marks,
    markDetails,
    longTasks: (window.__benchLongTasks || []).map((t) => ({ startTime: t.startTime,
      duration: t.duration })),
    navigation: {
      type: nav.type, name: nav.name, startTime: nav.startTime, responseEnd: nav.responseEnd,
      domContentLoadedEventEnd: nav.domContentLoadedEventEnd, loadEventEnd: nav.loadEventEnd,
      transferSize: nav.transferSize,
        encodedBodySize: nav.encodedBodySize, decodedBodySize: nav.decodedBodySize,
    },
    resources,
  };
"""

_WITH_TIMEOUT = (
    "(p, ms, what) => Promise.race([p, new Promise((_, reject) => "
    "setTimeout(() => reject(new Error(what + ' not ready within ' + ms + ' ms')), ms))])"
)

# Installed before any page script (context.add_init_script): every task of 50 ms or more the
# main thread ran, the page's input waits behind each of them.
LONG_TASKS_INIT = (
    "window.__benchLongTasks = []; try { new PerformanceObserver((list) => "
    "window.__benchLongTasks.push(...list.getEntries())).observe({ type: 'longtask', buffered: "
    "true }); } catch (e) {}"
)

PRODUCT_JS = (
    f"async (ms) => {{ await ({_WITH_TIMEOUT})(MaoChat.ready, ms, 'MaoChat.ready'); {_COLLECT} }}"
)
ANCHOR_JS = (
    f"async (ms) => {{ await ({_WITH_TIMEOUT})(window.anchorReady, ms, 'loadPyodide()'); "
    f"{_COLLECT} }}"
)


def add_arguments(parser: Any) -> None:
    group = parser.add_argument_group("startup")
    group.add_argument(
        "--settle-ms",
        type=int,
        default=DEFAULT_SETTLE_MS,
        help=f"pause between the cold load and the warm reload, so cache writes finish (default "
        f"{DEFAULT_SETTLE_MS})",
    )


def anchor_page(asset_base: str) -> str:
    base = json.dumps(asset_base)
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'><title>Pyodide alone</title>"
        "</head>"
        f"<body>{PAGE_BODY}\n<script>\n"
        f"window.anchorReady = import({base} + 'pyodide.mjs')\n"
        f"  .then(({{ loadPyodide }}) => loadPyodide({{ indexURL: {base} }}))\n"
        "  .then((py) => { performance.mark('anchor:pyodide-loaded', "
        "{ detail: { wasmHeapBytes: py._module.HEAPU8.length } }); return true; });\n"
        "</script></body></html>"
    )


def _sample(
    kind: str, data: dict[str, Any], network: dict[str, Any], ctx: RunContext, wall_s: float
) -> dict[str, Any]:
    marks = data["marks"]
    nav = data["navigation"]
    build_id = ctx.servers.build_id
    timing = {}
    for r in data["resources"]:
        timing.setdefault(r["name"], r)
    files = []
    for f in network["files"]:
        rt = timing.get(f["url"])
        files.append(
            {
                "name": short_name(f["url"], build_id=build_id),
                "url": f["url"],
                "type": f["type"],
                "status": f["status"],
                "fromCache": f["fromCache"],
                "encoding": f["encoding"],
                "wireBytes": f["wireBytes"],
                "decodedBytes": f["decodedBytes"],
                "startMs": rt["startTime"] if rt else (0.0 if f["url"] == nav["name"] else None),
                "endMs": rt["responseEnd"]
                if rt
                else (nav["responseEnd"] if f["url"] == nav["name"] else None),
                "inPageTransferSize": rt["transferSize"] if rt else None,
                "inPageEncodedBodySize": rt["encodedBodySize"] if rt else None,
            }
        )
    sdk_prefix = ctx.servers.backend.url + "/sdk/"
    sdk_files = [f for f in files if f["url"].startswith(sdk_prefix) and f["wireBytes"] is not None]
    in_page_entries = [nav, *data["resources"]]
    ready_mark = "mao:session-ready" if kind == "product" else "anchor:pyodide-loaded"
    ready_at = marks.get(ready_mark)
    heap_mark = "mao:python-ready" if kind == "product" else "anchor:pyodide-loaded"
    sample = {
        "navigationType": nav["type"],
        "responseEndMs": nav["responseEnd"],
        "domContentLoadedMs": nav["domContentLoadedEventEnd"],
        "bytes": {
            # Bytes on the wire for every request of the page up to "ready" (document included).
            "wire": network["wireBytes"],
            "decoded": network["decodedBytes"],
            "sdkWire": sum(f["wireBytes"] for f in sdk_files),
            "requests": network["requests"],
            "fromCache": network["fromCache"],
            "unfinished": network["unfinished"],
            # What the page itself can see: cross-origin entries without Timing-Allow-Origin
            # report 0, so these undercount unless the server sends that header.
            "inPageTransferSize": sum(e["transferSize"] or 0 for e in in_page_entries),
            "inPageEncodedBodySize": sum(e["encodedBodySize"] or 0 for e in in_page_entries),
            "inPageEntriesWithoutSizes": sum(
                1 for e in data["resources"] if not e["encodedBodySize"]
            ),
        },
        "websocket": network["websocket"],
        "wallS": round(wall_s, 3),
        # Longest main-thread task from navigation start to ready (0 when none reached 50 ms).
        "longestTaskMs": max(
            (
                t["duration"]
                for t in data["longTasks"]
                if ready_at is None or t["startTime"] < ready_at
            ),
            default=0.0,
        ),
        "wasmHeapBytes": (data["markDetails"].get(heap_mark) or {}).get("wasmHeapBytes"),
        "timeOrigin": data["timeOrigin"],
        "marks": marks,
        "files": files,
    }
    if kind == "product":
        sample["pyodideLoadedMs"] = marks.get("mao:pyodide-loaded")
        # Set when the runtime was restored from the build's memory snapshot (docs/startup.md).
        sample["snapshotRestored"] = "mao:snapshot-restored" in marks
        # Only when the loader installs our wheels after loadPyodide() (not inside it).
        sample["packagesLoadedMs"] = marks.get("mao:packages-loaded")
        sample["pythonReadyMs"] = marks.get("mao:python-ready")
        sample["sessionReadyMs"] = marks.get("mao:session-ready")
        python, session = sample["pythonReadyMs"], sample["sessionReadyMs"]
        loaded = (
            sample["packagesLoadedMs"]
            if sample["packagesLoadedMs"] is not None
            else sample["pyodideLoadedMs"]
        )
        # From the last loading mark to boot() returned: import of mao_page.runtime (pydantic
        # included) and the Controller; then the WebSocket hello/welcome.
        sample["importBootMs"] = (
            python - loaded if python is not None and loaded is not None else None
        )
        sample["handshakeMs"] = (
            session - python if session is not None and python is not None else None
        )
    else:
        sample["pyodideLoadedMs"] = marks.get("anchor:pyodide-loaded")
    return sample


def _measure_pair(
    ctx: RunContext, kind: str, url: str, user_id: str | None, settle_s: float
) -> dict[str, Any]:
    """Cold load in a brand-new browser, then a warm reload in the same context."""
    script = PRODUCT_JS if kind == "product" else ANCHOR_JS
    context = ctx.cold_browser()
    try:
        context.add_init_script(LONG_TASKS_INIT)
        page = context.pages[0] if context.pages else context.new_page()
        recorder = NetworkRecorder(context, page)
        out: dict[str, Any] = {}
        for phase in ("cold", "warm"):
            recorder.reset()
            started = time.monotonic()
            if phase == "cold":
                page.goto(url, wait_until="domcontentloaded")
            else:
                page.reload(wait_until="domcontentloaded")
            data = page.evaluate(script, READY_TIMEOUT_MS)
            wall = time.monotonic() - started
            recorder.drain()
            sample = _sample(kind, data, recorder.snapshot(), ctx, wall)
            if user_id is not None:
                sample["serverSawSession"] = any(
                    s.user_id == user_id and s.ready for s in ctx.servers.backend.sessions()
                )
            out[phase] = sample
            if phase == "cold" and settle_s > 0:
                page.wait_for_timeout(settle_s * 1000)
        recorder.detach()
        return out
    finally:
        ctx.close_browser(context)


def run(ctx: RunContext) -> dict[str, Any]:
    servers = ctx.servers
    settle_s = ctx.options.get("settle_ms", DEFAULT_SETTLE_MS) / 1000
    anchor_url = servers.pages.add("/bench/pyodide-alone.html", anchor_page(servers.asset_base))
    from mao_embed.testing import embed_snippet, page_html

    runs = []
    total = ctx.warmup + ctx.runs
    for i in range(total):
        warmup = i < ctx.warmup
        user_id = f"bench-startup-{i}"
        token = servers.backend.issue_token(user_id, "bench-agent", origin=servers.pages.origin)
        snippet = embed_snippet(
            servers.backend.url, agent_id="bench-agent", user_id=user_id, token=token
        )
        product_url = servers.pages.add(
            f"/bench/startup-{i}.html",
            page_html(PAGE_BODY, snippet, title="Acme Store (startup bench)"),
        )
        order = ("product", "anchor") if i % 2 == 0 else ("anchor", "product")
        record: dict[str, Any] = {
            "index": i,
            "warmup": warmup,
            "order": list(order),
            "loadAverage1m": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        }
        for kind in order:
            if kind == "product":
                record["product"] = _measure_pair(ctx, "product", product_url, user_id, settle_s)
            else:
                record["anchor"] = _measure_pair(ctx, "anchor", anchor_url, None, settle_s)
        for phase in ("cold", "warm"):
            p, a = record["product"][phase], record["anchor"][phase]
            record.setdefault("ratio", {})[phase] = (
                p["sessionReadyMs"] / a["pyodideLoadedMs"]
                if p.get("sessionReadyMs") and a.get("pyodideLoadedMs")
                else None
            )
        runs.append(record)
        label = "warm-up" if warmup else f"run {i - ctx.warmup + 1}/{ctx.runs}"
        pc, pw = record["product"]["cold"], record["product"]["warm"]
        ac, aw = record["anchor"]["cold"], record["anchor"]["warm"]
        ctx.log(
            f"  {label:>9}: session ready cold {fmt_ms(pc['sessionReadyMs'])}, warm "
            f"{fmt_ms(pw['sessionReadyMs'])}"
            f" | Pyodide alone cold {fmt_ms(ac['pyodideLoadedMs'])}, warm "
            f"{fmt_ms(aw['pyodideLoadedMs'])}"
            f" | {fmt_bytes(pc['bytes']['wire'])} cold, {fmt_bytes(pw['bytes']['wire'])} warm"
        )
    measured = [r for r in runs if not r["warmup"]]
    return {
        "config": {
            "runs": ctx.runs,
            "warmup": ctx.warmup,
            "settleMs": int(settle_s * 1000),
            "readyTimeoutMs": READY_TIMEOUT_MS,
            "productUrl": "/bench/startup-<i>.html",
            "anchorUrl": anchor_url,
            "assetBase": servers.asset_base,
        },
        "summary": summarize(measured),
        "runs": runs,
    }


_PRODUCT_METRICS = (
    "pyodideLoadedMs",
    "packagesLoadedMs",
    "pythonReadyMs",
    "sessionReadyMs",
    "importBootMs",
    "handshakeMs",
    "domContentLoadedMs",
    "longestTaskMs",
    "wasmHeapBytes",
)


def summarize(measured: list[dict[str, Any]]) -> dict[str, Any]:
    summary: dict[str, Any] = {"product": {}, "anchor": {}, "ratio": {}, "largestAssets": []}
    for phase in ("cold", "warm"):
        samples = [r["product"][phase] for r in measured]
        anchors = [r["anchor"][phase] for r in measured]
        summary["product"][phase] = {
            m: describe(s.get(m) for s in samples) for m in _PRODUCT_METRICS
        }
        summary["product"][phase]["wireBytes"] = describe(s["bytes"]["wire"] for s in samples)
        summary["product"][phase]["sdkWireBytes"] = describe(s["bytes"]["sdkWire"] for s in samples)
        summary["product"][phase]["decodedBytes"] = describe(s["bytes"]["decoded"] for s in samples)
        summary["product"][phase]["inPageTransferSize"] = describe(
            s["bytes"]["inPageTransferSize"] for s in samples
        )
        summary["product"][phase]["inPageEncodedBodySize"] = describe(
            s["bytes"]["inPageEncodedBodySize"] for s in samples
        )
        summary["product"][phase]["requests"] = describe(s["bytes"]["requests"] for s in samples)
        summary["product"][phase]["serverSawSessionEveryRun"] = all(
            s.get("serverSawSession") for s in samples
        )
        summary["product"][phase]["snapshotRestoredRuns"] = sum(
            1 for s in samples if s.get("snapshotRestored")
        )
        summary["anchor"][phase] = {
            "pyodideLoadedMs": describe(s.get("pyodideLoadedMs") for s in anchors),
            "wireBytes": describe(s["bytes"]["wire"] for s in anchors),
            "longestTaskMs": describe(s.get("longestTaskMs") for s in anchors),
            "wasmHeapBytes": describe(s.get("wasmHeapBytes") for s in anchors),
        }
        ready = summary["product"][phase]["sessionReadyMs"]["median"]
        alone = summary["anchor"][phase]["pyodideLoadedMs"]["median"]
        summary["ratio"][phase] = {
            "sessionReadyOverPyodideAlone": {
                "ofMedians": ready / alone if ready and alone else None,
                "perRun": describe(r["ratio"][phase] for r in measured),
            }
        }
    summary["largestAssets"] = _largest_assets(measured)
    return summary


def _largest_assets(measured: list[dict[str, Any]]) -> list[dict[str, Any]]:
    per_name: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for r in measured:
        for phase in ("cold", "warm"):
            for f in r["product"][phase]["files"]:
                per_name.setdefault(f["name"], {"cold": [], "warm": []})[phase].append(f)
    rows = []
    for name, phases in per_name.items():
        cold, warm = phases["cold"], phases["warm"]
        if not cold:
            continue

        def common(files: list[dict[str, Any]], key: str) -> Any:
            values = Counter(str(f[key]) for f in files).most_common(1)
            return None if not values or values[0][0] == "None" else values[0][0]

        def download_ms(files: list[dict[str, Any]]) -> float | None:
            return describe(
                f["endMs"] - f["startMs"]
                for f in files
                if f["endMs"] is not None and f["startMs"] is not None
            )["median"]

        rows.append(
            {
                "name": name,
                "coldWireBytes": describe(f["wireBytes"] for f in cold)["median"],
                "decodedBytes": describe(f["decodedBytes"] for f in cold)["median"],
                "encoding": common(cold, "encoding"),
                "coldFetchMs": download_ms(cold),
                "coldEndMs": describe(f["endMs"] for f in cold)["median"],
                "warmWireBytes": describe(f["wireBytes"] for f in warm)["median"],
                "warmStatus": common(warm, "fromCache") or common(warm, "status"),
                "warmFetchMs": download_ms(warm),
            }
        )
    rows.sort(key=lambda row: -(row["coldWireBytes"] or 0))
    return rows


def headline(result: dict[str, Any]) -> dict[str, Any]:
    s = result["summary"]
    return {
        "coldSessionReadyMedianMs": s["product"]["cold"]["sessionReadyMs"]["median"],
        "warmSessionReadyMedianMs": s["product"]["warm"]["sessionReadyMs"]["median"],
        "coldPythonReadyMedianMs": s["product"]["cold"]["pythonReadyMs"]["median"],
        "warmPythonReadyMedianMs": s["product"]["warm"]["pythonReadyMs"]["median"],
        "coldPyodideAloneMedianMs": s["anchor"]["cold"]["pyodideLoadedMs"]["median"],
        "warmPyodideAloneMedianMs": s["anchor"]["warm"]["pyodideLoadedMs"]["median"],
        "coldRatioVsPyodideAlone": s["ratio"]["cold"]["sessionReadyOverPyodideAlone"]["ofMedians"],
        "warmRatioVsPyodideAlone": s["ratio"]["warm"]["sessionReadyOverPyodideAlone"]["ofMedians"],
        "coldWireBytesMedian": s["product"]["cold"]["wireBytes"]["median"],
        "warmWireBytesMedian": s["product"]["warm"]["wireBytes"]["median"],
        "coldLongestTaskMedianMs": s["product"]["cold"]["longestTaskMs"]["median"],
        "warmLongestTaskMedianMs": s["product"]["warm"]["longestTaskMs"]["median"],
        "wasmHeapBytesMedian": s["product"]["cold"]["wasmHeapBytes"]["median"],
        "snapshotRestoredRuns": s["product"]["cold"]["snapshotRestoredRuns"]
        + s["product"]["warm"]["snapshotRestoredRuns"],
    }


def _ms_row(label: str, stats: dict[str, Any]) -> list[str]:
    """A table row: the label, then the median, p90, min and max in milliseconds."""
    return [label, *(fmt_ms(stats[key]) for key in ("median", "p90", "min", "max"))]


def summary_table(result: dict[str, Any]) -> str:
    s = result["summary"]
    cfg = result["config"]
    env = result.get("environment", {})
    out = [
        f"startup: {cfg['runs']} runs (+{cfg['warmup']} warm-up discarded), {env.get('chromium')}, "
        f"Pyodide {env.get('pyodide')}, build {result.get('buildId')}, {env.get('cpuCount')} CPUs",
        "times from navigation start (performance.timeOrigin), in the page",
        "",
    ]
    rows = []
    labels = [
        ("pyodideLoadedMs", "Pyodide loaded      mao:pyodide-loaded"),
        ("packagesLoadedMs", "wheels loaded       mao:packages-loaded"),
        ("pythonReadyMs", "Python ready        mao:python-ready"),
        ("sessionReadyMs", "session ready       mao:session-ready"),
        ("importBootMs", "  phase: last load mark -> Python ready"),
        ("handshakeMs", "  phase: Python ready -> session ready"),
    ]
    for phase in ("cold", "warm"):
        for key, label in labels:
            d = s["product"][phase][key]
            if not d["n"]:
                continue  # a mark this loader does not set
            rows.append(_ms_row(f"{phase}  {label}", d))
        d = s["anchor"][phase]["pyodideLoadedMs"]
        rows.append(_ms_row(f"{phase}  anchor: loadPyodide() alone (no packages)", d))
        r = s["ratio"][phase]["sessionReadyOverPyodideAlone"]
        rows.append(
            [
                f"{phase}  ratio session ready / anchor",
                fmt_ratio(r["ofMedians"]) + " *",
                fmt_ratio(r["perRun"]["p90"]),
                fmt_ratio(r["perRun"]["min"]),
                fmt_ratio(r["perRun"]["max"]),
            ]
        )
    for phase in ("cold", "warm"):
        for who, stats in (("session", s["product"][phase]), ("anchor", s["anchor"][phase])):
            label = f"{phase}  longest main-thread task, {who}"
            rows.append(_ms_row(label, stats["longestTaskMs"]))
    for who, stats in (("session", s["product"]["cold"]), ("anchor", s["anchor"]["cold"])):
        d = stats["wasmHeapBytes"]
        rows.append(
            [
                f"wasm heap after boot, {who}",
                fmt_bytes(d["median"]),
                fmt_bytes(d["p90"]),
                fmt_bytes(d["min"]),
                fmt_bytes(d["max"]),
            ]
        )
    out.append(table(["", "median", "p90", "min", "max"], rows))
    out.append(
        "* ratio of the medians; p90/min/max are of the per-run ratios (paired within a run)"
    )
    restored = (
        s["product"]["cold"]["snapshotRestoredRuns"] + s["product"]["warm"]["snapshotRestoredRuns"]
    )
    out.append(f"restored from the memory snapshot: {restored} of {2 * cfg['runs']} product loads")
    loads = [
        r["loadAverage1m"]
        for r in result["runs"]
        if not r["warmup"] and r.get("loadAverage1m") is not None
    ]
    if loads:
        out.append(
            f"1-min load average during the runs: {min(loads):.1f} .. {max(loads):.1f} "
            f"({env.get('cpuCount')} CPUs); other work on the machine inflates the times"
        )
    out.append("")
    rows = []
    for phase in ("cold", "warm"):
        for key, label in (
            ("wireBytes", "bytes on the wire, all requests"),
            ("sdkWireBytes", "  of which /sdk/ assets"),
            ("decodedBytes", "bytes after decoding"),
            ("inPageTransferSize", "in-page transferSize sum"),
        ):
            d = s["product"][phase][key]
            rows.append(
                [
                    f"{phase}  {label}",
                    fmt_bytes(d["median"]),
                    fmt_bytes(d["p90"]),
                    fmt_bytes(d["min"]),
                    fmt_bytes(d["max"]),
                ]
            )
        d = s["product"][phase]["requests"]
        rows.append(
            [
                f"{phase}  requests",
                f"{d['median']:.0f}",
                f"{d['p90']:.0f}",
                f"{d['min']:.0f}",
                f"{d['max']:.0f}",
            ]
        )
    for phase in ("cold", "warm"):
        d = s["anchor"][phase]["wireBytes"]
        rows.append(
            [
                f"{phase}  anchor bytes on the wire",
                fmt_bytes(d["median"]),
                fmt_bytes(d["p90"]),
                fmt_bytes(d["min"]),
                fmt_bytes(d["max"]),
            ]
        )
    out.append(table(["", "median", "p90", "min", "max"], rows))
    out.append(
        "in-page sizes are 0 for the cross-origin /sdk/ files (no Timing-Allow-Origin); wire bytes "
        "come from CDP"
    )
    out.append("")
    rows = []
    for a in s["largestAssets"][:TOP_ASSETS]:
        rows.append(
            [
                a["name"],
                fmt_bytes(a["coldWireBytes"]),
                fmt_bytes(a["decodedBytes"]),
                a["encoding"] or "-",
                fmt_ms(a["coldFetchMs"]),
                fmt_ms(a["coldEndMs"]),
                fmt_bytes(a["warmWireBytes"]),
                a["warmStatus"] or "-",
            ]
        )
    out.append(f"largest assets (median over runs), top {TOP_ASSETS}")
    out.append(
        table(
            [
                "file",
                "cold wire",
                "decoded",
                "enc",
                "cold fetch",
                "cold done at",
                "warm wire",
                "warm",
            ],
            rows,
            align="lrrlrrrl",
        )
    )
    if not (
        s["product"]["cold"]["serverSawSessionEveryRun"]
        and s["product"]["warm"]["serverSawSessionEveryRun"]
    ):
        out.append("WARNING: the backend did not list a ready session for every run")
    return "\n".join(out)
