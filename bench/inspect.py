"""Snapshot engine: our ``page_inspect`` vs a plain-JS walk vs Playwright's aria_snapshot().

Generated pages of about 1k, 5k, 10k and 20k DOM nodes (forms, tables, link lists, text, a few
open shadow roots, one same-origin iframe), at scroll position 0. One Chromium process for
everything; per size, the measurements alternate within each run:

* **inspect (full)**: the SDK's ``Inspector.inspect`` (collect primitive, column transport,
  scan, names, snapshot store, outline, text rendering) and the answer's JSON text as the SDK
  sends it (``PageToolResult.to_json``), running in Pyodide in the page, timed there with
  ``performance.now()``; ``includeOffscreen`` and the text form, so it covers the whole page
  like the plain walk and aria_snapshot.
* **inspect (viewport)**: the default call (no ``includeOffscreen``; SPEC S4), the text form
  too. It walks every element for its box but reads facts only for the rows ``viewportKeep``
  keeps (what intersects the viewport, its ancestors, the name sources), so it does less work
  than the two anchors by design: its ratios against them say what an agent's default call
  costs, not that the same work got faster.
* **plain JS**: the same walk collecting the same facts (``collectDocument``), no Python,
  the whole page. **plain JS (viewport)**: the same with ``viewportKeep``, the fair anchor
  of the viewport inspect (the same rows, no Python).
* **aria_snapshot**: ``page.locator("body").aria_snapshot()``, timed from the driver (the
  whole page).

Ratios are of the medians (``ratios``) and the median of the per-run ratios, each pair taken
in the same run (``ratiosPerRun``); only same-run ratios are comparable on a noisy machine.
Also: tokens per interactive element of the text form (our estimate: ~4 ASCII characters or
one other character per token), the growth of the wasm heap over all runs of a size, and each
inspect call's phases in the page (``phases``: walk, decode, scan, outline, render, other; ms,
exclusive, timed by wrapping the module functions the call looks up, see ``_PYTHON``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from mao_embed.assets import primitives_source

from .runner import RunContext, describe, fmt_ms, fmt_ratio, table

NAME = "inspect"
DESCRIPTION = "page_inspect in the page vs plain-JS walk vs aria_snapshot(), ~1k-20k nodes"

SIZES = (1_000, 5_000, 10_000, 20_000)
# name: (numerator, denominator), sample keys; each pair measured in the same run.
RATIOS = {
    "inspectOverPlainJs": ("inspectMs", "plainJsMs"),
    "inspectOverAriaSnapshot": ("inspectMs", "ariaSnapshotMs"),
    "ariaSnapshotOverInspect": ("ariaSnapshotMs", "inspectMs"),
    "defaultInspectOverPlainJs": ("inspectDefaultMs", "plainJsMs"),
    "defaultInspectOverAriaSnapshot": ("inspectDefaultMs", "ariaSnapshotMs"),
    "defaultInspectOverPlainJsViewport": ("inspectDefaultMs", "plainJsViewportMs"),
}
RATIO_NOTES = {
    "inspect": "includeOffscreen inspect: covers the whole page, as plain JS (the same facts, no "
    "Python) and aria_snapshot do.",
    "defaultInspect": (
        "default inspect (viewport only, SPEC S4): reads facts only for the rows viewportKeep "
        "keeps "
        "(viewportRows of rows), so it does less work than the whole-page plain JS walk and "
        "aria_snapshot; "
        "those two ratios are what the default call costs against them, not a like-for-like "
        "speed-up. "
        "defaultInspectOverPlainJsViewport compares it with the plain JS walk of the same rows."
    ),
}
# In-page phases of one inspect call (ms, exclusive; see _PYTHON's bench_inspect).
PHASES = ("walk", "decode", "scan", "outline", "render", "other")

_PYTHON = r"""
import json
import js
from mao_page.bridge import browser as bridge
from mao_page.snapshot import scanner
from mao_page.snapshot import inspector as inspector_module
from mao_page.snapshot.inspector import Inspector
from mao_page.protocol import InspectOptions, PageToolResult
from mao_page.snapshot.render import estimate_tokens
from mao_page.snapshot.store import SnapshotStore

_page_class = bridge.BrowserPage
_page_class.collect_main_document = _timed("collect", _page_class.collect_main_document)
bridge.decode_walk = _timed("decode", bridge.decode_walk)
inspector_module.scan_page = _timed("scan", inspector_module.scan_page)
scanner._outline = _timed("outline", scanner._outline)
inspector_module.render_text = _timed("render", inspector_module.render_text)

_inspector = Inspector(bridge.BrowserPage(js.window.__benchApi), SnapshotStore())

def bench_inspect(offscreen):
    _phases.clear()
    began = js.performance.now()
    options = InspectOptions(format="text", include_offscreen=offscreen, max_tokens=50000)
    snapshot = _inspector.inspect(options)
    # The answer as the SDK sends it (mao_page.session.tools.PageTools.run, then the dispatcher's
    # to_json).
    PageToolResult(request_id="bench", success=True, page_version=snapshot.page_version,
                   snapshot_id=snapshot.snapshot_id, result=snapshot.to_wire()).to_json()
    elapsed = js.performance.now() - began
    # Exclusive phases: walk (JS walk and encode), decode, scan (without the outline), outline,
    # render (text form), other (state, snapshot store, elements, the answer's JSON text).
    p = {k: _phases.get(k, 0.0) for k in ("collect", "decode", "scan", "outline", "render")}
    phases = {
        "walk": p["collect"] - p["decode"],
        "decode": p["decode"],
        "scan": p["scan"] - p["outline"],
        "outline": p["outline"],
        "render": p["render"],
    }
    phases["other"] = elapsed - sum(phases.values())
    tokens = estimate_tokens(snapshot.text)
    return json.dumps(
        [elapsed, len(snapshot.elements), tokens, snapshot.truncated, len(snapshot.text), phases]
    )
"""

_SCRIPT = """
const inspect = py.globals.get('bench_inspect');
window.__bench = {
  heap: () => py._module.HEAPU8.length,
  inspect: (offscreen) => JSON.parse(inspect(offscreen)),
  plainJs: () => { const t = performance.now(); const r = window.__maoDom.collectDocument(document,
    null);
                   return [performance.now() - t, r.nodes.length]; },
  plainJsViewport: () => { const t = performance.now(); const dom = window.__maoDom;
                           const r = dom.collectDocument(document, null, dom.viewportKeep(document,
                             null));
                           return [performance.now() - t, r.nodes.length]; },
};
"""


def _primitives_js() -> str:
    # The generated tables and the primitives, as the loader joins them (mao_embed.assets).
    return "(() => {\n" + primitives_source() + "\nwindow.__maoDom = MaoDom;\n})();"


def generate_body(target_nodes: int) -> str:
    """A business-like page of about ``target_nodes`` elements: repeated sections of a form,
    a table with action buttons, a list of links and paragraphs; every fifth section has a
    widget in an open shadow root; one same-origin iframe with a small form."""
    parts = [
        "<header><nav aria-label='Main'><ul>"
        + "".join(f"<li><a href='/p{i}'>Page {i}</a></li>" for i in range(8))
        + "</ul></nav></header><main><h1>Operations dashboard</h1>",
        "<iframe title='Quick entry' style='width:500px;height:160px' srcdoc=\""
        "<form><label>Amount <input name=amount></label><label>Memo <input name=memo></label>"
        '<button>Add</button></form>"></iframe>',
    ]
    used = 30
    section = 0
    while used < target_nodes:
        section += 1
        parts.append(
            f"<section aria-label='Section {section}'><h2>Section {section}</h2>"
            f"<p>Summary of section {section}: <b>{section * 7}</b> items need review.</p>"
            f"<form aria-label='Filter {section}'><label>Search <input name='q{section}' "
            f"placeholder='Find'></label>"
            f"<label>Status <select name='s{section}'><option>Open</option><option>Closed</option>"
            f"</select></label>"
            f"<label><input type='checkbox' name='c{section}'> Only mine</label><button "
            f"type='submit'>Apply</button></form>"
            "<table><tr><th>Id</th><th>Customer</th><th>Amount</th><th></th></tr>"
            + "".join(
                f"<tr><td>{section}-{r}</td><td>Customer {r}</td><td>{r * 3}.00</td>"
                f"<td><button type='button'>Edit {section}-{r}</button></td></tr>"
                for r in range(6)
            )
            + "</table><ul>"
            + "".join(
                f"<li><a href='/item/{section}/{i}'>Item {section}.{i}</a> <span>note</span></li>"
                for i in range(5)
            )
            + "</ul>"
            + (
                f"<mao-bench-widget data-n='{section}'></mao-bench-widget>"
                if section % 5 == 0
                else ""
            )
            + "</section>"
        )
        used += 88 + (4 if section % 5 == 0 else 0)
    parts.append("</main><footer><a href='/privacy'>Privacy</a></footer>")
    parts.append(
        "<script>customElements.define('mao-bench-widget', class extends HTMLElement { "
        "connectedCallback() {"
        " const r = this.attachShadow({mode: 'open'}); r.innerHTML = '<label>Note <input></label>"
        "<button>Save note</button>'; } });</script>"
    )
    return "".join(parts)


# The start of every benchmark page's module script: Pyodide with the SDK's wheel, the bench
# API over the primitives, the phase timer, then the benchmark's Python (``python``).
_BOOT = """
const base = %(base)s;
const { loadPyodide } = await import(base + 'pyodide.mjs');
const py = await loadPyodide({ indexURL: base, lockFileURL: base + 'pyodide-lock.json' });
await py.loadPackage(['mao-embed-page']);
window.__benchApi = { primitives: window.__maoDom, window, sdkHost: null };
py.runPython(%(python)s);
window.__benchNodes = () => {
  let n = 0;
  const count = (root) => { for (const el of root.querySelectorAll('*')) { n++;
    if (el.shadowRoot) count(el.shadowRoot); } };
  count(document);
  const frame = document.querySelector('iframe');
  if (frame && frame.contentDocument) count(frame.contentDocument);
  return n;
};
"""
# In-page phase timer: ``_timed(name, fn)`` wraps a module-level function the tool call looks
# up at call time and adds its time to ``_phases[name]``.
_PHASE_TIMER = r"""
import js

_phases = {}

def _timed(name, fn):
    def timed(*args, **kwargs):
        began = js.performance.now()
        try:
            return fn(*args, **kwargs)
        finally:
            _phases[name] = _phases.get(name, 0.0) + js.performance.now() - began
    return timed
"""


def bench_page(title: str, body: str, asset_base: str, python: str, script: str) -> str:
    """A benchmark page: ``body``, the primitives, then Pyodide running ``python`` (after the
    phase timer) and ``script``, which sets ``window.__bench``; ``window.__benchReady`` last."""
    boot = _BOOT % {"base": json.dumps(asset_base), "python": json.dumps(_PHASE_TIMER + python)}
    return (
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{title}</title></head>"
        f"<body>"
        f"{body}<script src='/bench/primitives.js'></script>"
        f"<script type='module'>{boot}{script}window.__benchReady = true;\n</script></body></html>"
    )


def _measure_size(ctx: RunContext, context: Any, size: int) -> dict[str, Any]:
    pages = ctx.servers.pages
    url = pages.add(
        f"/bench/inspect-{size}.html",
        bench_page(
            "inspect benchmark", generate_body(size), ctx.servers.asset_base, _PYTHON, _SCRIPT
        ),
    )
    page = context.new_page()
    try:
        page.goto(url, wait_until="load")
        page.wait_for_function("() => window.__benchReady === true", timeout=180_000)
        page.wait_for_timeout(300)
        nodes = page.evaluate("() => window.__benchNodes()")
        heap_before = page.evaluate("() => window.__bench.heap()")
        samples: list[dict[str, Any]] = []
        for run in range(ctx.warmup + ctx.runs):
            inspect_ms, elements, tokens, truncated, chars, phases = page.evaluate(
                "() => window.__bench.inspect(true)"
            )
            default_ms, default_elements, _, _, _, default_phases = page.evaluate(
                "() => window.__bench.inspect(false)"
            )
            plain_ms, rows = page.evaluate("() => window.__bench.plainJs()")
            plain_viewport_ms, viewport_rows = page.evaluate(
                "() => window.__bench.plainJsViewport()"
            )
            began = time.perf_counter()
            aria = page.locator("body").aria_snapshot()
            aria_ms = (time.perf_counter() - began) * 1000
            samples.append(
                {
                    "warmup": run < ctx.warmup,
                    "inspectMs": inspect_ms,
                    "inspectDefaultMs": default_ms,
                    "plainJsMs": plain_ms,
                    "plainJsViewportMs": plain_viewport_ms,
                    "ariaSnapshotMs": aria_ms,
                    "elements": elements,
                    "defaultElements": default_elements,
                    "tokens": tokens,
                    "truncated": truncated,
                    "textChars": chars,
                    "rows": rows,
                    "viewportRows": viewport_rows,
                    "ariaSnapshotChars": len(aria),
                    "phases": phases,
                    "defaultPhases": default_phases,
                }
            )
        heap_after = page.evaluate("() => window.__bench.heap()")
    finally:
        page.close()
    measured = [s for s in samples if not s["warmup"]]
    stats = {
        key: describe(s[key] for s in measured)
        for key in (
            "inspectMs",
            "inspectDefaultMs",
            "plainJsMs",
            "plainJsViewportMs",
            "ariaSnapshotMs",
        )
    }
    last = measured[-1]
    median = {key: stats[key]["median"] for key in stats}
    phase_stats = {
        mode: {name: describe(s[mode][name] for s in measured) for name in PHASES}
        for mode in ("phases", "defaultPhases")
    }
    result = {
        "targetNodes": size,
        "domNodes": nodes,
        "rows": last["rows"],
        "viewportRows": last["viewportRows"],
        "interactiveElements": last["elements"],
        "interactiveInViewport": last["defaultElements"],
        "textTokens": last["tokens"],
        "textChars": last["textChars"],
        "textTruncated": last["truncated"],
        "tokensPerInteractiveElement": round(last["tokens"] / max(1, last["elements"]), 2),
        "ariaSnapshotChars": last["ariaSnapshotChars"],
        "stats": stats,
        "phases": phase_stats["phases"],
        "defaultPhases": phase_stats["defaultPhases"],
        "ratios": {name: median[a] / median[b] for name, (a, b) in RATIOS.items()},
        "ratiosPerRun": {
            name: describe(x[a] / x[b] for x in measured)["median"]
            for name, (a, b) in RATIOS.items()
        },
        "ratioNotes": RATIO_NOTES,
        "wasmHeap": {
            "beforeBytes": heap_before,
            "afterBytes": heap_after,
            "growthBytes": heap_after - heap_before,
            "inspectCalls": 2 * len(samples),
        },
        "samples": samples,
    }
    ctx.log(
        f"[bench] inspect {size}: nodes {nodes}, inspect {median['inspectMs']:.0f} ms, plain JS "
        f"{median['plainJsMs']:.0f} ms, "
        f"aria_snapshot {median['ariaSnapshotMs']:.0f} ms, {result['tokensPerInteractiveElement']} "
        f"tokens/element; full phases (median ms) "
        + ", ".join(f"{name} {phase_stats['phases'][name]['median']:.0f}" for name in PHASES)
    )
    return result


def run_sizes(
    ctx: RunContext,
    sizes_option: str,
    default_sizes: tuple[int, ...],
    measure_size: Callable[[RunContext, Any, int], dict[str, Any]],
) -> dict[str, Any]:
    """``measure_size(ctx, context, size)`` for each size (``--<sizes_option>``, else the
    defaults), in one cold browser, with the primitives served at /bench/primitives.js."""
    ctx.servers.pages.add(
        "/bench/primitives.js", _primitives_js(), {"content-type": "text/javascript; charset=utf-8"}
    )
    sizes = [
        int(s)
        for s in str(ctx.options.get(sizes_option) or ",".join(map(str, default_sizes))).split(",")
    ]
    context = ctx.cold_browser()
    try:
        results = [measure_size(ctx, context, size) for size in sizes]
    finally:
        ctx.close_browser(context)
    return {"config": {"runs": ctx.runs, "warmup": ctx.warmup, "sizes": sizes}, "sizes": results}


def run(ctx: RunContext) -> dict[str, Any]:
    return run_sizes(ctx, "inspect_sizes", SIZES, _measure_size)


def add_arguments(parser: Any) -> None:
    parser.add_argument(
        "--inspect-sizes", help="comma-separated target node counts (default 1000,5000,10000,20000)"
    )


def headline(result: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for size in result["sizes"]:
        key = f"n{size['targetNodes']}"
        out[key] = {
            "inspectMedianMs": size["stats"]["inspectMs"]["median"],
            "plainJsMedianMs": size["stats"]["plainJsMs"]["median"],
            "ariaSnapshotMedianMs": size["stats"]["ariaSnapshotMs"]["median"],
            "defaultInspectMedianMs": size["stats"]["inspectDefaultMs"]["median"],
            **{name: round(value, 2) for name, value in size["ratios"].items()},
            "tokensPerInteractiveElement": size["tokensPerInteractiveElement"],
            "wasmHeapGrowthBytes": size["wasmHeap"]["growthBytes"],
        }
    return out


def summary_table(result: dict[str, Any]) -> str:
    rows = []
    for size in result["sizes"]:
        s, r = size["stats"], size["ratios"]
        rows.append(
            [
                f"{size['domNodes']:,}",
                f"{size['interactiveElements']:,}",
                fmt_ms(s["inspectMs"]["median"]),
                fmt_ms(s["inspectDefaultMs"]["median"]),
                fmt_ms(s["plainJsMs"]["median"]),
                fmt_ms(s["ariaSnapshotMs"]["median"]),
                fmt_ms(s["plainJsViewportMs"]["median"]),
                f"{size['viewportRows']:,}/{size['rows']:,}",
                fmt_ratio(r["inspectOverPlainJs"]),
                fmt_ratio(r["inspectOverAriaSnapshot"]),
                fmt_ratio(r["defaultInspectOverPlainJs"]),
                fmt_ratio(r["defaultInspectOverAriaSnapshot"]),
                fmt_ratio(r["defaultInspectOverPlainJsViewport"]),
                f"{size['tokensPerInteractiveElement']:.1f}",
                f"{size['wasmHeap']['growthBytes'] / 2**20:.1f} MiB",
            ]
        )
    cfg = result["config"]
    return (
        f"inspect: median of {cfg['runs']} runs (+{cfg['warmup']} warm-up), one browser; ratios of "
        f"medians, same run.\n"
        "full = includeOffscreen inspect (the whole page, as plain JS and aria_snapshot); vp = the "
        "default\n"
        "inspect (viewport only): it reads facts for 'vp rows' rows only, so vp/JS and vp/aria "
        "compare less work\n"
        "with more; vp/JS (vp) compares it with the plain JS walk of the same rows.\n"
        + table(
            [
                "DOM nodes",
                "interactive",
                "inspect (full)",
                "inspect (viewport)",
                "plain JS",
                "aria_snapshot",
                "plain JS (vp)",
                "vp rows",
                "full/JS",
                "full/aria",
                "vp/JS",
                "vp/aria",
                "vp/JS (vp)",
                "tokens/el",
                "heap growth",
            ],
            rows,
        )
    )
