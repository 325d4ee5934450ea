"""Read tools: ``page_extract`` of a whole page vs a plain-JS walk of its rendered text.

The inspect benchmark's generated page (``bench.inspect.generate_body``: sections of a form,
a table, a link list and text, open shadow roots, one same-origin iframe), ~10k nodes by
default, at scroll position 0. One Chromium process; within each run, alternately:

* **extract**: the SDK's ``PageReader.extract`` of the whole page (read.js walk, the tree,
  the Markdown, the first part) and the answer's JSON text as the SDK sends it
  (``PageToolResult.to_json``), in Pyodide in the page, timed there with ``performance.now()``.
* **plain walk** (the anchor of the goal, <= 2x): the same document's rendered text by a walk
  in plain JavaScript, no Python: the composed tree (shadow roots, slots, the same-origin
  frame), computed display and visibility per element, text joined.
* **innerText**: ``document.body.innerText`` plus each same-origin iframe's body
  ``innerText`` (it does not enter frames by itself): the browser's own native text walk, a
  floor no walk in JavaScript reaches, reported for scale.

Also: the Markdown's length (``totalChars``), the number of parts an agent pages through at
the default ``maxChars`` and the largest part in tokens (``render.estimate_tokens``), and the
phases of one extract (walk: read.js and the crossing; decode: its JSON parsed in Python;
prune: ``pagetext.prune``,
only when something is flagged aria-hidden or private; markdown; other: paging, the answer),
the **later part** (the next ``fromChar`` of the same, unchanged page: answered from the
first part's Markdown), the median of the per-run ratios beside the ratio of the medians,
and the load average before and after.
"""

from __future__ import annotations

import os
from typing import Any

from .inspect import bench_page, generate_body, run_sizes
from .runner import RunContext, describe, fmt_ms, fmt_ratio, table

NAME = "extract"
DESCRIPTION = (
    "page_extract of a whole ~10k-node page vs a plain-JS walk of its text (and innerText)"
)
SIZES = (10_000,)
GOAL_RATIO = 2.0
PHASES = ("walk", "decode", "prune", "markdown", "other")

_PYTHON = r"""
import json
import js
from mao_page.bridge import browser as bridge
from mao_page.read import extract, pagetext, reader as reader_module
from mao_page.snapshot.inspector import Inspector
from mao_page.protocol import ExtractOptions, PageToolRequest, ToolName
from mao_page.snapshot.render import estimate_tokens
from mao_page.snapshot.store import SnapshotStore

bridge.BrowserPage.read_text = _timed("walk", bridge.BrowserPage.read_text)


class _TimedJson:
    # bridge.read_text's json.loads of the walk, timed apart from the walk in JavaScript.
    loads = staticmethod(_timed("decode", json.loads))


bridge.json = _TimedJson
pagetext.prune = _timed("prune", pagetext.prune)
extract.render_markdown = _timed("markdown", extract.render_markdown)

_page = bridge.BrowserPage(js.window.__benchApi)
_reader = reader_module.PageReader(_page, Inspector(_page, SnapshotStore()))

def _request(from_char):
    return PageToolRequest(request_id="bench", session_id="bench", tool=ToolName.EXTRACT,
                           extract=ExtractOptions(from_char=from_char))

def bench_extract():
    _phases.clear()
    began = js.performance.now()
    answer = _reader.extract(_request(0))
    answer.to_json()
    elapsed = js.performance.now() - began
    decode = _phases.get("decode", 0.0)
    phases = {
        "walk": _phases.get("walk", 0.0) - decode,
        "decode": decode,
        "prune": _phases.get("prune", 0.0),
        "markdown": _phases.get("markdown", 0.0),
    }
    phases["other"] = elapsed - sum(phases.values())
    # The next part, as an agent asks for it: the page has not changed, so no second walk.
    began = js.performance.now()
    _reader.extract(_request(answer.result["nextFromChar"])).to_json()
    later = js.performance.now() - began
    return json.dumps([elapsed, answer.result["totalChars"], phases, later])

def bench_pages():
    # Every part an agent would fetch, at the default maxChars: sizes and tokens.
    parts = []
    start = 0
    while True:
        result = _reader.extract(_request(start)).result
        parts.append([len(result["markdown"]), estimate_tokens(result["markdown"])])
        if result.get("nextFromChar") is None:
            return json.dumps([parts, result["totalChars"], result.get("truncated", False)])
        start = result["nextFromChar"]
"""

_SCRIPT = """
const extract = py.globals.get('bench_extract');
const pages = py.globals.get('bench_pages');
window.__bench = {
  extract: () => JSON.parse(extract()),
  pages: () => JSON.parse(pages()),
  innerText: () => {
    const t = performance.now();
    let chars = document.body.innerText.length;
    for (const frame of document.querySelectorAll('iframe')) {
      const doc = frame.contentDocument;
      if (doc && doc.body) chars += doc.body.innerText.length;
    }
    return [performance.now() - t, chars];
  },
  // The same rendered text, by a walk in plain JavaScript: the composed tree (shadow roots,
  // slots, same-origin frames), computed display and visibility per element, a space
  // around block boxes. What page_extract's walk reads, without Python or Markdown.
  plainWalk: () => {
    const t = performance.now();
    const out = [];
    const stack = [[document.body, null]];
    while (stack.length) {
      const [node, parentStyle] = stack.pop();
      if (node === 0) { out.push(' '); continue; }
      if (node.nodeType === 3) {
        if (!parentStyle || parentStyle.visibility === 'visible') out.push(node.data);
        continue;
      }
      if (node.nodeType !== 1) continue;
      const style = getComputedStyle(node);
      const display = style.display;
      if (display === 'none') continue;
      const block = !display.startsWith('inline') && display !== 'contents';
      if (block) { out.push(' '); stack.push([0, null]); }
      if (node.localName === 'iframe') {
        const doc = node.contentDocument;
        if (doc && doc.body) stack.push([doc.body, null]);
        continue;
      }
      const kids = node.shadowRoot ? node.shadowRoot.childNodes
        : node.localName === 'slot' && node.assignedNodes().length
          ? node.assignedNodes({ flatten: true }) : node.childNodes;
      for (let i = kids.length - 1; i >= 0; i--) stack.push([kids[i], style]);
    }
    const text = out.join('');
    return [performance.now() - t, text.length];
  },
};
"""


def _measure_size(ctx: RunContext, context: Any, size: int) -> dict[str, Any]:
    url = ctx.servers.pages.add(
        f"/bench/extract-{size}.html",
        bench_page(
            "extract benchmark", generate_body(size), ctx.servers.asset_base, _PYTHON, _SCRIPT
        ),
    )
    page = context.new_page()
    try:
        page.goto(url, wait_until="load")
        page.wait_for_function("() => window.__benchReady === true", timeout=180_000)
        page.wait_for_timeout(300)
        nodes = page.evaluate("() => window.__benchNodes()")
        load_before = os.getloadavg()
        samples: list[dict[str, Any]] = []
        for run in range(ctx.warmup + ctx.runs):
            # Alternate the order, so that no one of them always comes first.
            measured_run: dict[str, Any] = {"warmup": run < ctx.warmup}
            for name in (
                ("extract", "plainWalk", "innerText")
                if run % 2
                else ("innerText", "plainWalk", "extract")
            ):
                if name == "extract":
                    extract_ms, total_chars, phases, later_ms = page.evaluate(
                        "() => window.__bench.extract()"
                    )
                    measured_run.update(
                        extractMs=extract_ms,
                        totalChars=total_chars,
                        phases=phases,
                        laterPartMs=later_ms,
                    )
                else:
                    ms, chars = page.evaluate(f"() => window.__bench.{name}()")
                    measured_run.update({f"{name}Ms": ms, f"{name}Chars": chars})
            samples.append(measured_run)
        load_after = os.getloadavg()
        parts, total, truncated = page.evaluate("() => window.__bench.pages()")
    finally:
        page.close()
    measured = [s for s in samples if not s["warmup"]]
    stats = {
        key: describe(s[key] for s in measured)
        for key in ("extractMs", "laterPartMs", "plainWalkMs", "innerTextMs")
    }
    ratio = stats["extractMs"]["median"] / stats["plainWalkMs"]["median"]
    per_run = describe(s["extractMs"] / s["plainWalkMs"] for s in measured)["median"]
    result = {
        "targetNodes": size,
        "domNodes": nodes,
        "totalChars": total,
        "truncated": truncated,
        "innerTextChars": measured[-1]["innerTextChars"],
        "parts": len(parts),
        "largestPartChars": max(chars for chars, _ in parts),
        "largestPartTokens": max(tokens for _, tokens in parts),
        "stats": stats,
        "phases": {name: describe(s["phases"][name] for s in measured) for name in PHASES},
        "plainWalkChars": measured[-1]["plainWalkChars"],
        "extractOverPlainWalk": ratio,
        "extractOverPlainWalkPerRun": per_run,
        "laterPartOverPlainWalk": stats["laterPartMs"]["median"] / stats["plainWalkMs"]["median"],
        "loadAverage": {"before": load_before, "after": load_after},
        "extractOverInnerText": stats["extractMs"]["median"] / stats["innerTextMs"]["median"],
        "goalRatio": GOAL_RATIO,
        "samples": samples,
    }
    ctx.log(
        f"[bench] extract {size}: nodes {nodes}, extract {stats['extractMs']['median']:.0f} ms, "
        f"plain walk "
        f"{stats['plainWalkMs']['median']:.0f} ms ({ratio:.2f}x; per run {per_run:.2f}x), later "
        f"part "
        f"{stats['laterPartMs']['median']:.0f} ms, innerText {stats['innerTextMs']['median']:.0f} "
        f"ms "
        f"({result['extractOverInnerText']:.2f}x), {total:,} chars in {len(parts)} parts, largest "
        f"{result['largestPartTokens']} tokens; phases (median ms) "
        + ", ".join(f"{name} {result['phases'][name]['median']:.0f}" for name in PHASES)
        + f"; load average {load_before[0]:.1f} -> {load_after[0]:.1f}"
    )
    return result


def run(ctx: RunContext) -> dict[str, Any]:
    return run_sizes(ctx, "extract_sizes", SIZES, _measure_size)


def add_arguments(parser: Any) -> None:
    parser.add_argument(
        "--extract-sizes", help="comma-separated target node counts (default 10000)"
    )


def headline(result: dict[str, Any]) -> dict[str, Any]:
    return {
        f"n{size['targetNodes']}": {
            "extractMedianMs": size["stats"]["extractMs"]["median"],
            "plainWalkMedianMs": size["stats"]["plainWalkMs"]["median"],
            "innerTextMedianMs": size["stats"]["innerTextMs"]["median"],
            "extractOverPlainWalk": round(size["extractOverPlainWalk"], 2),
            "extractOverPlainWalkPerRun": round(size["extractOverPlainWalkPerRun"], 2),
            "laterPartMedianMs": size["stats"]["laterPartMs"]["median"],
            "extractOverInnerText": round(size["extractOverInnerText"], 2),
            "largestPartTokens": size["largestPartTokens"],
            "parts": size["parts"],
        }
        for size in result["sizes"]
    }


def summary_table(result: dict[str, Any]) -> str:
    rows = []
    for size in result["sizes"]:
        s = size["stats"]
        rows.append(
            [
                f"{size['domNodes']:,}",
                fmt_ms(s["extractMs"]["median"]),
                fmt_ms(s["laterPartMs"]["median"]),
                fmt_ms(s["plainWalkMs"]["median"]),
                fmt_ms(s["innerTextMs"]["median"]),
                fmt_ratio(size["extractOverPlainWalk"]),
                fmt_ratio(size["extractOverPlainWalkPerRun"]),
                fmt_ratio(size["extractOverInnerText"]),
                f"{size['totalChars']:,}",
                f"{size['plainWalkChars']:,}",
                str(size["parts"]),
                str(size["largestPartTokens"]),
                " / ".join(f"{size['phases'][name]['median']:.0f}" for name in PHASES),
                " / ".join(
                    f"{value:.1f}"
                    for value in (size["loadAverage"]["before"][0], size["loadAverage"]["after"][0])
                ),
            ]
        )
    cfg = result["config"]
    return (
        f"extract: median of {cfg['runs']} runs (+{cfg['warmup']} warm-up), one browser; ratio of "
        f"medians, same run "
        f"(goal: extract / plain-JS walk <= {GOAL_RATIO}x).\n"
        + table(
            [
                "DOM nodes",
                "page_extract",
                "later part",
                "plain walk",
                "innerText",
                "/walk",
                "/walk per run",
                "/innerText",
                "Markdown chars",
                "walk chars",
                "parts",
                "max tokens/part",
                "walk / decode / prune / md / other ms",
                "load before / after",
            ],
            rows,
        )
    )
