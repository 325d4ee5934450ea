"""A harness page that runs our engine (the mao_page wheel in Pyodide, the collect primitive)
on pages loaded into same-origin iframes, so one interpreter serves many test pages.

Only the DOM walk is JavaScript (``loader_js/primitives``, as in the SDK); names, roles and
the scan are our Python code running in Pyodide in the browser.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mao_embed.assets import ensure_built, primitives_source

REPO = Path(__file__).resolve().parents[2]

PYTHON = r"""
import json
from mao_page.bridge.browser import decode_walk
from mao_page.dom.index import DocumentIndex
from mao_page.dom.names import accessible_name
from mao_page.protocol import Viewport
from mao_page.snapshot.scanner import scan_page

def names_of(columns, indices):
    rows, scopes, frames = decode_walk(columns)  # the SDK's own transport of the walk
    doc = DocumentIndex(rows)
    out = []
    for i in indices.to_py():
        out.append(None if i < 0 else [accessible_name(doc, i)[0], doc.role(i)])
    return json.dumps(out)

def scan_of(columns, width, height):
    rows, scopes, frames = decode_walk(columns)
    viewport = Viewport(width=width, height=height, scroll_x=0, scroll_y=0)
    result = scan_page(rows, viewport, include_offscreen=True, scopes=scopes, frames=frames)
    doc = DocumentIndex(rows)
    out = []
    for e in result.elements:
        index = e.index if e.control is None else e.control
        name = accessible_name(doc, index, hidden_ok=e.control is not None)[0]
        out.append([index, e.role, name, e.label, e.opaque])
    return json.dumps(out)
"""


def _primitives_js() -> str:
    # The generated tables and the primitives, as the loader joins them (mao_embed.assets).
    return "(() => {\n" + primitives_source() + "\nwindow.__maoDom = MaoDom;\n})();"


def add_harness(pages: Any, backend_url: str) -> str:
    """Serve the harness page (and the primitives script) from ``pages``; returns its URL."""
    pages.add(
        "/conformance/primitives.js",
        _primitives_js(),
        {"content-type": "text/javascript; charset=utf-8"},
    )
    return pages.add("/conformance/harness.html", harness_html(backend_url))


def harness_html(backend_url: str) -> str:
    base = f"{backend_url}/sdk/{ensure_built().build_id}/"
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>engine harness</title></head>"
        "<body>"
        "<script src='/conformance/primitives.js'></script>"
        "<script type='module'>"
        f"const base = {json.dumps(base)};"
        "const { loadPyodide } = await import(base + 'pyodide.mjs');"
        "const py = await loadPyodide({indexURL: base, lockFileURL: base + 'pyodide-lock.json'});"
        "await py.loadPackage(['mao-embed-page']);"
        f"py.runPython({json.dumps(PYTHON)});"
        "window.__py = py; window.__engineReady = true;"
        "</script></body></html>"
    )


LOAD_FRAME = """async (url) => {
  const old = document.getElementById('target');
  if (old) old.remove();
  const frame = document.createElement('iframe');
  frame.id = 'target';
  frame.style.cssText = 'width:1200px;height:900px;border:0';
  const loaded = new Promise((resolve) => frame.addEventListener('load', resolve, { once: true }));
  frame.src = url;
  document.body.appendChild(frame);
  await loaded;
  await new Promise((resolve) => setTimeout(resolve, 50));
}"""

NAMES = """(targets) => {
  const doc = document.getElementById('target').contentDocument;
  const walk = window.__maoDom.collectDocumentColumns(doc, null, false);
  const nodes = walk.nodes;
  const indices = targets.map(([selector, index]) => {
    const el = index === null
      ? doc.querySelector(selector) : doc.querySelectorAll('[data-expectedlabel]')[index];
    return el ? nodes.indexOf(el) : -1;
  });
  return JSON.parse(window.__py.globals.get('names_of')(walk.columns, indices));
}"""

SCAN = """() => {
  const frame = document.getElementById('target');
  const doc = frame.contentDocument;
  const walk = window.__maoDom.collectDocumentColumns(doc, null, false);
  const result = JSON.parse(window.__py.globals.get('scan_of')(walk.columns, frame.clientWidth,
    frame.clientHeight));
  window.__compared = result.map((r) => walk.nodes[r[0]]);
  return result;
}"""


class EnginePage:
    """The harness page: ``load(url)`` puts a page in its iframe; ``names``/``scan`` run ours."""

    def __init__(self, page: Any) -> None:
        self.page = page
        page.wait_for_function("() => window.__engineReady === true", timeout=120_000)

    def load(self, url: str) -> None:
        self.page.evaluate(LOAD_FRAME, url)

    def names(self, targets: list[tuple[str | None, int | None]]) -> list[list[str] | None]:
        return self.page.evaluate(NAMES, [list(t) for t in targets])

    def scan(self) -> list[list[Any]]:
        return self.page.evaluate(SCAN)


def normalise(label: str) -> str:
    """WPT aria-utils.js: ASCII whitespace runs to one space, one leading/trailing space off."""
    import re

    return re.sub(r"^ | $", "", re.sub(r"[\t\n\f\r ]+", " ", label))
