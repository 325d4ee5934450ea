"""page_screenshot (1280x800 viewport) on ~2k and ~10k-element pages, against the raw library
call and html2canvas on the same page in the same run (the goal: ours <= 1.3x the raw call).

Three ways to get the same viewport as a WebP (quality 0.85, 1 image pixel per CSS pixel),
each timed in the page with ``performance.now()``:

* **ours**: ``page_screenshot`` through the agent HTTP API; the figure is the tool's own
  ``durationMs`` (request handled in the page: scan for masks, render, masks, encode), so the
  relay and HTTP overhead stay out of the ratio. The round trip is recorded too.
* **raw snapdom**: the library served by our backend, called as a page would:
  ``snapdom(documentElement, {clip: "viewport", exclude: [SDK host], excludeMode: "remove"})``,
  ``toCanvas()``, ``toDataURL("image/webp", 0.85)``. The exclude predicate also makes it
  capture afresh each time (the library memoizes unchanged captures otherwise), like ours.
* **html2canvas** 1.4.1: installed from npm at bench time into ``build/bench-npm/`` (never
  committed, never served by the product), injected into the page by Playwright; the same
  viewport (``x/y = scroll``, ``ignoreElements`` = the SDK host), same encoding.

The order of the three alternates per run. One browser for the whole benchmark; each tool
gets one warm-up capture first (library import, font and style caches).

Pages (``--screenshot-pages``, default all): ``2k`` and ``10k`` at the top, and ``10k-bottom``:
the ~10k page scrolled to 200 px above its bottom, where a capture that clones everything
above the viewport pays for the whole page (html2canvas is left out there: it renders the
whole document regardless and takes many seconds).
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import time
from dataclasses import dataclass
from typing import Any

from .runner import REPO_DIR, RunContext, describe, fmt_bytes, fmt_ms, fmt_ratio, table

NAME = "screenshot"
DESCRIPTION = (
    "page_screenshot vs raw snapdom vs html2canvas, 1280x800 viewport, ~2k and ~10k elements"
)

HTML2CANVAS = "html2canvas@1.4.1"
NPM_DIR = REPO_DIR / "build" / "bench-npm"
# page -> (cards, scrolled to near the bottom, html2canvas too); a card is about 12 elements
PAGES = {"2k": (170, False, True), "10k": (850, False, True), "10k-bottom": (850, True, False)}
QUALITY = 0.85


def _page_body(cards: int) -> str:
    items = []
    for i in range(cards):
        items.append(
            f'<article class="card" style="--h:{i * 37 % 360}"><h3>Order #{10_000 + i}</h3>'
            f"<p>Customer <b>{i % 97}</b>, {1 + i % 5} items, <a href='#o{i}'>details</a></p>"
            f"<label>Qty <input value='{1 + i % 9}' size='3'></label>"
            f"<select><option>Open</option><option>Shipped</option></select>"
            f"<button type='button'>Approve</button><span class='tag'>"
            f"{'urgent' if i % 7 == 0 else 'normal'}</span></article>"
        )
    return (
        "<style>body{margin:8px;font:13px system-ui,sans-serif}"
        ".grid{display:grid;grid-template-columns:repeat(4,1fr);gap:8px}"
        ".card{border:1px solid #ccd;border-radius:6px;padding:8px;background:hsl(var(--h),60%,"
        "96%)}"
        ".card h3{margin:0 0 4px;font-size:14px}.tag{margin-left:6px;padding:1px 6px;"
        "border-radius:8px;background:#eef}</style>"
        "<h1>Orders</h1><div class='grid'>" + "".join(items) + "</div>"
    )


def _html2canvas_source() -> str:
    script = NPM_DIR / "node_modules" / "html2canvas" / "dist" / "html2canvas.min.js"
    if not script.is_file():
        npm = shutil.which("npm")
        if npm is None:
            raise SystemExit("npm is needed to install html2canvas for the comparison")
        NPM_DIR.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                npm,
                "install",
                "--no-save",
                "--no-audit",
                "--no-fund",
                "--ignore-scripts",
                "--prefix",
                str(NPM_DIR),
                HTML2CANVAS,
            ],
            check=True,
        )
    return script.read_text()


_RAW = """async ([url, quality]) => {
  const { snapdom } = await import(url);
  const host = document.querySelector('mao-embed-host');
  const t0 = performance.now();
  const result = await snapdom(document.documentElement, { clip: 'viewport', dpr: 1,
    exclude: [(el) => el === host], excludeMode: 'remove' });
  const canvas = await result.toCanvas();
  const url2 = canvas.toDataURL('image/webp', quality);
  const ms = performance.now() - t0;
  canvas.width = 0;
  return { ms, bytes: Math.floor((url2.length - url2.indexOf(',') - 1) * 3 / 4) };
}"""

_H2C = """async (quality) => {
  const host = document.querySelector('mao-embed-host');
  const t0 = performance.now();
  const canvas = await html2canvas(document.body, { x: scrollX, y: scrollY, width: innerWidth,
    height: innerHeight,
    windowWidth: innerWidth, windowHeight: innerHeight, scale: 1, logging: false,
      ignoreElements: (el) => el === host });
  const url = canvas.toDataURL('image/webp', quality);
  const ms = performance.now() - t0;
  canvas.width = 0;
  return { ms, bytes: Math.floor((url.length - url.indexOf(',') - 1) * 3 / 4) };
}"""


@dataclass
class _Target:
    page: Any
    agent: Any
    session: str
    library_url: str


def _ours(target: _Target, times: dict[str, float], out_bytes: dict[str, float]) -> None:
    started = time.monotonic()
    result = target.agent.call(target.session, "page_screenshot", {"format": "webp"})
    if not result.get("success"):
        raise RuntimeError(f"page_screenshot failed: {result.get('error')}")
    shot = result["result"]
    times["ours"], times["oursRender"] = shot["durationMs"], shot["renderMs"]
    times["oursScan"], times["oursEncode"] = shot["scanMs"], shot["encodeMs"]
    times["oursRoundTrip"] = (time.monotonic() - started) * 1000
    out_bytes["ours"] = shot["bytes"]


def _raw(target: _Target, times: dict[str, float], out_bytes: dict[str, float]) -> None:
    out = target.page.evaluate(_RAW, [target.library_url, QUALITY])
    times["raw"], out_bytes["raw"] = out["ms"], out["bytes"]


def _html2canvas(target: _Target, times: dict[str, float], out_bytes: dict[str, float]) -> None:
    out = target.page.evaluate(_H2C, QUALITY)
    times["html2canvas"], out_bytes["html2canvas"] = out["ms"], out["bytes"]


def run(ctx: RunContext) -> dict[str, Any]:
    from mao_embed.testing import (
        CHROMIUM_ARGS,
        AgentClient,
        chromium_path,
        embed_snippet,
        page_html,
    )

    html2canvas = _html2canvas_source()
    srv = ctx.servers
    library_url = srv.asset_base + "snapdom.mjs"
    agent = AgentClient(srv.backend.url)
    browser = ctx.playwright.chromium.launch(
        executable_path=chromium_path(), args=list(CHROMIUM_ARGS)
    )
    pages: dict[str, Any] = {}
    selected = str(ctx.options.get("screenshot_pages") or ",".join(PAGES)).split(",")
    try:
        for size in selected:
            cards, scrolled, with_h2c = PAGES[size]
            token = srv.backend.issue_token(
                f"bench-shot-{size}", "bench-agent", origin=srv.pages.origin
            )
            url = srv.pages.add(
                f"/bench-screenshot-{size}.html",
                page_html(
                    _page_body(cards),
                    embed_snippet(
                        srv.backend.url,
                        agent_id="bench-agent",
                        user_id=f"bench-shot-{size}",
                        token=token,
                    ),
                ),
            )
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            known = {s["sessionId"] for s in agent.sessions()}
            page.goto(url)
            page.evaluate("() => MaoChat.boot()")
            session = agent.wait_for_session(url=url, exclude=known)["sessionId"]
            if with_h2c:
                page.add_script_tag(content=html2canvas)
            if scrolled:
                page.evaluate(
                    "() => window.scrollTo(0, document.documentElement.scrollHeight - innerHeight "
                    "- 200)"
                )
            scroll_y = page.evaluate("() => scrollY")
            elements = page.evaluate("() => document.getElementsByTagName('*').length")
            keys = ["ours", "oursRoundTrip", "oursScan", "oursRender", "oursEncode", "raw"] + (
                ["html2canvas"] if with_h2c else []
            )
            samples: dict[str, list[float]] = {k: [] for k in keys}
            sizes: dict[str, list[float]] = {
                k: [] for k in ("ours", "raw", "html2canvas") if k in keys
            }

            target = _Target(page, agent, session, library_url)
            order = [_ours, _raw] + ([_html2canvas] if with_h2c else [])
            for n in range(ctx.warmup + ctx.runs):
                times: dict[str, float] = {}
                out_bytes: dict[str, float] = {}
                for step in order[n % len(order) :] + order[: n % len(order)]:
                    step(target, times, out_bytes)
                if n >= ctx.warmup:
                    for key, value in times.items():
                        samples[key].append(value)
                    for key, value in out_bytes.items():
                        sizes[key].append(value)
                ctx.log(
                    f"[bench] screenshot {size}: run {n + 1}/{ctx.warmup + ctx.runs} "
                    + ", ".join(f"{k} {v:.0f} ms" for k, v in times.items())
                )
            page.close()
            raw_median = statistics.median(samples["raw"])
            pages[size] = {
                "elements": elements,
                "scrollY": scroll_y,
                "times": {k: describe(v) for k, v in samples.items()},
                "bytes": {k: describe(v) for k, v in sizes.items()},
                "ratioOursVsRaw": statistics.median(samples["ours"]) / raw_median,
                "ratioHtml2canvasVsRaw": statistics.median(samples["html2canvas"]) / raw_median
                if with_h2c
                else None,
                "samples": samples,
            }
    finally:
        browser.close()
        agent.close()
    return {
        "config": {
            "runs": ctx.runs,
            "warmup": ctx.warmup,
            "viewport": [1280, 800],
            "format": "webp",
            "quality": QUALITY,
            "html2canvas": HTML2CANVAS,
            "library": library_url.rsplit("/", 1)[-1],
        },
        "summary": pages,
    }


def add_arguments(parser: Any) -> None:
    parser.add_argument(
        "--screenshot-pages", help=f"comma-separated pages (default {','.join(PAGES)})"
    )


def headline(result: dict[str, Any]) -> dict[str, Any]:
    return {
        size: {
            "oursMs": stats["times"]["ours"]["median"],
            "rawSnapdomMs": stats["times"]["raw"]["median"],
            "html2canvasMs": stats["times"]["html2canvas"]["median"]
            if "html2canvas" in stats["times"]
            else None,
            "ratioOursVsRaw": stats["ratioOursVsRaw"],
            "oursBytes": stats["bytes"]["ours"]["median"],
        }
        for size, stats in result["summary"].items()
    }


def summary_table(result: dict[str, Any]) -> str:
    rows = []
    for size, stats in result["summary"].items():
        t, b = stats["times"], stats["bytes"]
        h2c = "html2canvas" in t
        rows.append(
            [
                f"{size} ({stats['elements']} el., scrollY {stats.get('scrollY', 0):.0f})",
                fmt_ms(t["ours"]["median"]),
                fmt_ms(t["oursRender"]["median"]),
                fmt_ms(t["raw"]["median"]),
                fmt_ms(t["html2canvas"]["median"]) if h2c else "-",
                fmt_ratio(stats["ratioOursVsRaw"]),
                fmt_ratio(stats["ratioHtml2canvasVsRaw"]) if h2c else "-",
                fmt_bytes(b["ours"]["median"]),
                fmt_bytes(b["raw"]["median"]),
                fmt_bytes(b["html2canvas"]["median"]) if h2c else "-",
            ]
        )
    return "page_screenshot, 1280x800 WebP q0.85 (medians; goal ours/raw <= 1.3x)\n" + table(
        [
            "page",
            "ours",
            "of it render",
            "raw snapdom",
            "html2canvas",
            "ours/raw",
            "h2c/raw",
            "ours bytes",
            "raw bytes",
            "h2c bytes",
        ],
        rows,
    )
