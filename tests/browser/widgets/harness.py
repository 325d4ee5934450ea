"""The widget matrix: component library x widget kind, each cell driven through the agent's tools.

A *cell* is one widget of one library set through the public tools (``page_select``,
``page_click``, ``page_fill``, ``page_check``, ``page_keyboard``, ``page_hover``) on elements
found in a fresh snapshot by their accessible name and role, as an agent finds them. A cell
passes only when

1. every tool call answered ``success: true``,
2. the library's own state (form model, v-model, component state), read through the fixture
   page's ``window.__state()``, holds the expected values, and
3. the widget *shows* the result (text or attribute on the page, checked with Playwright).

A tool failure must be a structured error (a stable ``code`` and a ``message``). A success
whose state or display check fails is a **false success** (SPEC P5): the worst answer, counted
separately in the run's summary (the goal is 0). Every outcome is recorded and the terminal
summary prints the matrix (library x kind) and writes ``build/widget-matrix.json``.

Adding a library (one test module per library, one booted page per module):

1. Pin its npm packages in ``frameworks.PINNED`` and list the global (UMD) files the page
   loads, in order, under a new key of ``frameworks.VENDOR``. No bundler: the page server
   serves the files from ``build/test-node`` under ``/vendor/...``.
2. Write ``pages/<lib>.html``: a page body (no ``<html>``; ``mao_embed.testing.page_html``
   wraps it) that mounts the app into a container and defines

   - ``window.__mount()``: throw the old app away and mount a fresh one (state reset, portals
     gone). Called before every cell; the page itself boots Pyodide only once per module.
   - ``window.__state()``: a JSON-able object of the library's own state, read from the
     library (``form.getFieldsValue()``, the ``useState`` / ``ref`` values its ``onChange`` /
     ``v-model`` wrote), never from the DOM.

   Give each widget a visible label (or an accessible name) the agent can find it by, and
   wrap it in an element with ``data-widget="<key>"`` so display checks can say where to look.
3. Write ``test_<lib>.py``::

       import shared_cells as cells
       from harness import Cell, Library, cells_params, select, shows

       LIB = Library("antd", vendor="antd", page="antd.html")
       CELLS = [
           cells.select_single(role="combobox", inner=".ant-select-selector"),
           Cell("select", "virtual-far", (select("Currency", ["USD"], role="combobox"),),
                state={"currency": "USD"}, shows=(shows("currency", text="USD"),)),
       ]

       @pytest.mark.parametrize("cell", cells_params(CELLS))
       def test_widget(widget_page, cell):
           widget_page(LIB).run(cell)

   ``shared_cells.py`` has one factory per widget kind (the calls, the state and display
   that must follow); a module passes only what its library does its own way (names, roles,
   where the result shows, the model's spelling) and writes a ``Cell`` for a kind only it has.
   ``widget_page`` (conftest.py) opens the module's page (booted once, remounted per cell).
   A cell whose target is not unique in the snapshot fails as ``unreachable``: give it a
   ``role`` or a more exact label. ``Cell(..., xfail="why")`` or
   ``cells_params(CELLS, {"select-single": "why"})`` marks a cell known to fail today
   (strict: it fails the run once it passes, so the mark gets removed).

State checks compare each expected key with ``==`` (lists compared as given; use
``sorted_keys`` for lists whose order the library does not promise). Both state and display
are polled briefly (animations, a library committing on the next frame), never longer than
``SETTLE_S``: a tool that answered success must have done its work by then.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from frameworks import AgentView, failure, serve_vendor

PAGES = Path(__file__).resolve().parent / "pages"
REPO = Path(__file__).resolve().parents[3]
RESULTS_FILE = REPO / "build" / "widget-matrix.json"

# How long a display/state check may wait after a success: an antd select commits on the
# next frame and a modal fades out in ~0.3 s; more than this and the success was premature.
SETTLE_S = 2.0


# ---------------------------------------------------------------------------------------
# Cells: what to do and what must be true afterwards.
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call on the element with this accessible name (and role), found in a fresh
    snapshot; ``label=None`` sends the call without a ref (``page_keyboard`` to the focus)."""

    tool: str
    label: str | None
    role: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    nth: int | None = None  # among several matches, the nth in snapshot order (nameless rows)

    def __str__(self) -> str:
        target = "" if self.label is None else f" {self.role or '*'} {self.label!r}"
        target += "" if self.nth is None else f" #{self.nth}"
        extra = "".join(f" {k}={v!r}" for k, v in self.args.items())
        return f"{self.tool}{target}{extra}"


def select(
    label: str, values: list[Any], *, role: str | None = None, nth: int | None = None
) -> Call:
    return Call("page_select", label, role, {"values": values}, nth=nth)


def fill(label: str, value: str, *, role: str | None = None) -> Call:
    return Call("page_fill", label, role, {"value": value})


def click(label: str, *, role: str | None = None) -> Call:
    return Call("page_click", label, role)


def hover(label: str, *, role: str | None = None) -> Call:
    return Call("page_hover", label, role)


def check(label: str, *, role: str | None = None, nth: int | None = None) -> Call:
    return Call("page_check", label, role, nth=nth)


def uncheck(label: str, *, role: str | None = None) -> Call:
    return Call("page_uncheck", label, role)


def keyboard(
    label: str | None, *, key: str | None = None, text: str | None = None, role: str | None = None
) -> Call:
    args = {"key": key} if key is not None else {"text": text}
    return Call("page_keyboard", label, role, args)


@dataclass(frozen=True, slots=True)
class Display:
    """What the widget shows: the first element matching ``selector`` (CSS, usually
    ``[data-widget=key] ...``) contains ``text``, has attribute ``attr`` equal to ``value``,
    or is (not) visible."""

    selector: str
    text: str | None = None
    attr: tuple[str, str] | None = None
    visible: bool | None = None

    def __str__(self) -> str:
        what = [f"text~{self.text!r}"] if self.text is not None else []
        what += [f"{self.attr[0]}={self.attr[1]!r}"] if self.attr else []
        what += [f"visible={self.visible}"] if self.visible is not None else []
        return f"{self.selector} {' '.join(what)}"


def shows(
    widget: str,
    *,
    inner: str = "",
    text: str | None = None,
    attr: tuple[str, str] | None = None,
    visible: bool | None = None,
) -> Display:
    """A display check inside ``[data-widget=widget]`` (``inner`` narrows it further)."""
    selector = f'[data-widget="{widget}"] {inner}'.strip()
    return Display(selector, text=text, attr=attr, visible=visible)


@dataclass(frozen=True, slots=True)
class Cell:
    kind: str  # widget kind: select, cascader, tree-select, date, date-range, time, slider, ...
    variant: str  # what of the kind: single, multiple, search, click-menu, hover-menu, ...
    calls: tuple[Call, ...]
    state: dict[str, Any]
    shows: tuple[Display, ...] = ()
    sorted_keys: tuple[str, ...] = ()  # state lists compared as sets (sorted)
    xfail: str | None = None

    @property
    def id(self) -> str:
        return f"{self.kind}-{self.variant}"

    def __str__(self) -> str:
        return self.id


def cells_params(
    cells: Iterable[Cell],
    known_failures: dict[str, str] | None = None,
    pending: dict[str, str] | None = None,
) -> list[Any]:
    """The cells as pytest parameters, with their ids and xfail marks: strict from the cell's
    ``xfail`` or ``known_failures`` (cell id -> why); not strict from ``pending``, for cells
    that pass once work landing in parallel is on main (say which in the reason)."""
    known = dict(known_failures or {})
    waiting = dict(pending or {})
    params = []
    for cell in cells:
        marks = []
        reason = cell.xfail or known.pop(cell.id, None)
        if reason:
            marks.append(pytest.mark.xfail(strict=True, reason=reason))
        elif cell.id in waiting:
            marks.append(pytest.mark.xfail(strict=False, reason=waiting.pop(cell.id)))
        params.append(pytest.param(cell, id=cell.id, marks=marks))
    assert not known and not waiting, (
        f"marks for cells that do not exist: {sorted(known) + sorted(waiting)}"
    )
    return params


# ---------------------------------------------------------------------------------------
# Running a cell.
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Library:
    name: str
    vendor: str  # key of frameworks.VENDOR
    page: str  # file under pages/

    def body(self) -> str:
        return (PAGES / self.page).read_text(encoding="utf-8")


@dataclass(slots=True)
class Outcome:
    library: str
    cell: str
    verdict: str  # pass, false_success, refused, unreachable, unstructured
    code: str | None = None
    detail: str = ""


# Every cell outcome of this pytest run, in order; the widgets conftest prints and saves it.
OUTCOMES: list[Outcome] = []


class CellFailed(AssertionError):
    pass


class WidgetPage(AgentView):
    """The library's page for one cell: freshly mounted, acted on only through the tools."""

    def __init__(self, embedded: Any, library: Library) -> None:
        super().__init__(embedded)
        self.library = library

    def _resolve(self, call: Call) -> dict[str, Any] | None:
        """The call's arguments with a ref from a fresh snapshot (an earlier call may have
        opened a popup); None when the target is not exactly one element of it."""
        if call.label is None:
            return dict(call.args)
        # Off-screen elements too: a long widget page does not fit the viewport, and the
        # actions scroll their target into view as a user would.
        self.snapshot = self.embedded.inspect(includeOffscreen=True)
        matches = [
            e
            for e in self.snapshot["elements"]
            if _same_name(e["label"], call.label) and (call.role is None or e["role"] == call.role)
        ]
        if call.nth is not None:
            matches = matches[call.nth : call.nth + 1]
        if len(matches) != 1:
            return None
        ref = {"snapshotId": self.snapshot["snapshotId"], "elementId": matches[0]["elementId"]}
        return {**ref, **call.args}

    def _listed(self, label: str) -> list[tuple[str, str]]:
        return [
            (e["role"], e["label"])
            for e in self.snapshot["elements"]
            if label.lower() in e["label"].lower()
        ]

    def run(self, cell: Cell) -> None:
        outcome = Outcome(self.library.name, cell.id, "pass")
        OUTCOMES.append(outcome)
        for call in cell.calls:
            args = self._resolve(call)
            if args is None:
                outcome.verdict = "unreachable"
                similar = self._listed(call.label or "")
                outcome.detail = f"{call}: target not exactly one element; similar: {similar}"
                raise CellFailed(f"UNREACHABLE {outcome.detail}")
            result = self.embedded.call(call.tool, **args)
            if not result.get("success"):
                error = result.get("error") or {}
                if error.get("code") and error.get("message"):
                    outcome.verdict, outcome.code = "refused", error["code"]
                    outcome.detail = f"{call}: {failure(result)}"
                    raise CellFailed(f"REFUSED {outcome.detail}")
                outcome.verdict = "unstructured"
                outcome.detail = f"{call}: failed without a structured error: {result}"
                raise CellFailed(f"UNSTRUCTURED {outcome.detail}")
        problems = self._verify(cell)
        if problems:
            outcome.verdict = "false_success"
            outcome.detail = "; ".join(problems)
            raise CellFailed(f"FALSE SUCCESS (every call answered success): {outcome.detail}")

    def _verify(self, cell: Cell) -> list[str]:
        deadline = time.monotonic() + SETTLE_S
        while True:
            problems = self._state_problems(cell) + [
                p for d in cell.shows if (p := self._display_problem(d))
            ]
            if not problems or time.monotonic() > deadline:
                return problems
            time.sleep(0.1)

    def _state_problems(self, cell: Cell) -> list[str]:
        state = self.state()
        problems = []
        for key, expected in cell.state.items():
            actual = state.get(key)
            if key in cell.sorted_keys and isinstance(actual, list):
                actual, expected = sorted(actual), sorted(expected)
            if actual != expected:
                problems.append(f"state[{key!r}] = {actual!r}, expected {expected!r}")
        return problems

    def _display_problem(self, display: Display) -> str | None:
        found = self.embedded.page.evaluate(
            _READ_DISPLAY, [display.selector, display.attr[0] if display.attr else None]
        )
        if not found["exists"]:
            return None if display.visible is False else f"display {display}: no element matches"
        if display.visible is not None and found["visible"] != display.visible:
            return f"display {display}: visible={found['visible']}"
        if display.text is not None and display.text not in found["text"]:
            return f"display {display}: shows {found['text']!r}"
        if display.attr is not None and found["attr"] != display.attr[1]:
            return f"display {display}: {display.attr[0]}={found['attr']!r}"
        return None


def _same_name(listed: str, wanted: str) -> bool:
    # MUI's select pads its empty display with a zero-width space that ends up in the name.
    return " ".join(listed.replace("\u200b", "").split()) == wanted


# The first match's visible text (value of inputs included: a picker shows its date in one).
_READ_DISPLAY = """([selector, attr]) => {
  const el = document.querySelector(selector);
  if (!el) return {exists: false};
  const style = getComputedStyle(el);
  const rect = el.getBoundingClientRect();
  const visible = rect.width > 0 && rect.height > 0 && style.visibility !== 'hidden'
    && style.display !== 'none' && Number(style.opacity) > 0.05;
  const values = [el, ...el.querySelectorAll('input, textarea')]
    .filter(e => 'value' in e && e.value).map(e => e.value);
  const text = [el.innerText || el.textContent || '', ...values].join(' | ');
  return {exists: true, visible, text, attr: attr === null ? null : el.getAttribute(attr)};
}"""


def opener(reusable_pages: Any, mao_pages: Any) -> Callable[[Library], WidgetPage]:
    def open_(library: Library) -> WidgetPage:
        embedded = reusable_pages.open(
            library.name,
            library.body(),
            head=serve_vendor(mao_pages, library.vendor),
            title=f"{library.name} widgets",
        )
        return WidgetPage(embedded, library)

    return open_


# ---------------------------------------------------------------------------------------
# The run's matrix.
# ---------------------------------------------------------------------------------------


def matrix_markdown(outcomes: list[Outcome]) -> str:
    """Library x cell as a markdown table: ✅, or ❌ with the error code / verdict."""
    libraries = list(dict.fromkeys(o.library for o in outcomes))
    cells = list(dict.fromkeys(o.cell for o in outcomes))
    by = {(o.library, o.cell): o for o in outcomes}
    lines = ["| widget | " + " | ".join(libraries) + " |", "|---|" + "---|" * len(libraries)]
    for cell in cells:
        row = []
        for library in libraries:
            o = by.get((library, cell))
            if o is None:
                row.append("")
            elif o.verdict == "pass":
                row.append("✅")
            else:
                row.append(f"❌ {o.code or o.verdict.replace('_', ' ')}")
        lines.append(f"| {cell} | " + " | ".join(row) + " |")
    return "\n".join(lines)


def summary(outcomes: list[Outcome]) -> str:
    counts = Counter(o.verdict for o in outcomes)
    total = len(outcomes)
    passed = counts.get("pass", 0)
    return (
        f"{passed}/{total} cells pass ({100 * passed / total:.0f}%); "
        f"false successes: {counts.get('false_success', 0)}; "
        + ", ".join(
            f"{k}: {v}" for k, v in sorted(counts.items()) if k not in ("pass", "false_success")
        )
    )


def save(outcomes: list[Outcome]) -> None:
    RESULTS_FILE.parent.mkdir(parents=True, exist_ok=True)
    rows = [
        {
            "library": o.library,
            "cell": o.cell,
            "verdict": o.verdict,
            "code": o.code,
            "detail": o.detail,
        }
        for o in outcomes
    ]
    RESULTS_FILE.write_text(json.dumps(rows, indent=1, ensure_ascii=False))
