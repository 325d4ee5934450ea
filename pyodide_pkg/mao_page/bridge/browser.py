"""The only module that touches ``js`` / ``pyodide.ffi``, so the rest of the page package runs
and is tested under plain CPython.

It wraps the loader's host object (``_mao_host``, registered by ``mao-chat.js``) and the bulk
DOM primitives behind plain-Python methods. In worker mode (SPEC E6) the host object is made of
stand-ins for the main thread's objects (``loader_js/remote.js``): a call on one answers a
Promise, which ``settle`` waits for (JSPI); elements are references into a registry on the main
thread. The code here is the same for both modes: what needs an answer goes through ``calls``
or ``settle``, what needs none (the panel's updates) is posted and not waited for. It owns
every proxy lifetime: callbacks handed to JavaScript are created here and destroyed on close,
so ``destroy()`` leaves nothing behind (SPEC E2). Element references are ``ElementHandle``
objects; nothing outside this module sees a ``JsProxy``.
"""

from __future__ import annotations

import json
import sys
from array import array
from typing import Any

import js  # type: ignore[import-not-found]
from pyodide.ffi import JsException, JsProxy, create_proxy, jsnull  # type: ignore[import-not-found]

from ..dom import facts as F
from .page import CalendarRead, HitTest, HoverState, NativeSelection, Outcome, Submission

HOST_MODULE = "_mao_host"

# Whether this interpreter runs in the worker (set from the host object: one mode per
# interpreter, as a worker's interpreter never serves the main thread and vice versa).
_in_worker = False
_host_api: Any = None


def current_host_api() -> Any:
    """The host object the loader registered for the current ``MaoChat.init``.

    Looked up afresh per SDK instance, never cached at import: after ``destroy()`` and a new
    ``init()`` the loader registers a new object under the same module name.
    """
    global _in_worker, _host_api
    sys.modules.pop(HOST_MODULE, None)
    api = __import__(HOST_MODULE)
    _in_worker = str(getattr(api, "mode", "main-thread")) == "worker"
    _host_api = api
    return api


def in_worker() -> bool:
    return _in_worker


def settle(value: Any) -> Any:
    """The answer of a call on a main-thread object: in worker mode a Promise, waited for
    here (``pyodide.ffi.run_sync``: the interpreter suspends, the worker's event loop goes on);
    on the main thread the answer itself."""
    if not _in_worker:
        return value
    from pyodide.ffi import run_sync  # type: ignore[import-not-found]

    return run_sync(value)


class _Answering:
    """A main-thread object whose method calls return their answers (worker mode)."""

    __slots__ = ("_target",)

    def __init__(self, target: Any) -> None:
        self._target = target

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._target, name)
        return lambda *args: settle(method(*args))


def calls(target: Any) -> Any:
    """``target`` whose method calls answer (not Promises) in either mode."""
    return _Answering(target) if _in_worker else target


class BridgeError(RuntimeError):
    """A primitive failed in JavaScript; carries the JS message."""


class ElementHandle:
    """A page element held for a snapshot; released when the snapshot is evicted.

    A ``JsProxy`` keeps its JS object alive until Python drops it (JsProxies have no
    ``destroy``); releasing the handle drops our reference so the element can be collected.
    """

    __slots__ = ("_proxy", "_nodes", "_index")

    def __init__(self, proxy: JsProxy) -> None:
        self._proxy = proxy
        self._nodes: JsProxy | None = None
        self._index = -1

    @classmethod
    def in_walk(cls, nodes: JsProxy, index: int) -> ElementHandle:
        """A handle on ``nodes[index]`` of a collect walk, looked up on first use: a snapshot
        lists hundreds of elements and an agent acts on a few, and each proxy has a cost."""
        handle = cls.__new__(cls)  # no __init__ frame: one of these per listed element
        handle._proxy = None
        handle._nodes = nodes
        handle._index = index
        return handle

    def release(self) -> None:
        self._proxy = None
        self._nodes = None

    @property
    def proxy(self) -> JsProxy:
        if self._proxy is None and self._nodes is not None:
            self._proxy = self._nodes[self._index]
        if self._proxy is None:
            raise BridgeError("element handle already released")
        return self._proxy


class DocumentFacts:
    """Facts of one walk: ``rows[i]`` describes the element behind ``handle(i)``; ``scopes``
    and ``frames`` are the tree-scope and frame tables (``mao_page.dom.facts``)."""

    __slots__ = ("rows", "scopes", "frames", "_nodes", "_primitives")

    def __init__(
        self,
        rows: list[list[Any]],
        nodes: JsProxy,
        primitives: Any,
        scopes: list[list[Any]] | None = None,
        frames: list[list[Any]] | None = None,
    ) -> None:
        self.rows = rows
        self.scopes = scopes or [["document", 0, -1]]
        self.frames = frames or []
        self._nodes = nodes
        self._primitives = primitives

    def handle(self, index: int) -> ElementHandle:
        """A handle on ``rows[index]``'s element; it holds the whole walk (every element it
        visited) alive while it lives: for handles used within one call."""
        return ElementHandle.in_walk(self._nodes, index)

    def handles(self, indices: list[int]) -> list[ElementHandle]:
        """Handles on the elements of ``rows[i]`` for each ``i`` in ``indices``, for keeping
        (a snapshot's refs): they share a JS array of just those elements, picked in one
        crossing, so that what they hold alive is the listed elements, not the whole walk
        (on a large page several times as many elements as refs)."""
        positions = array("i", indices)
        chosen = js.Int32Array.new(len(positions))
        chosen.assign(memoryview(positions))
        picked = self._primitives.nodesAt(self._nodes, chosen)
        in_walk = ElementHandle.in_walk
        return [in_walk(picked, position) for position in range(len(positions))]

    def index_of(self, handle: ElementHandle) -> int:
        """The row of an element in this walk, -1 when it is not in it."""
        return int(settle(self._nodes.indexOf(handle.proxy)))

    def release(self) -> None:
        self._nodes = None


class TextWalk:
    """A ``readText`` walk: its tree (``mao_page.read.pagetext``), the orders of the editable
    regions in it, how many nodes are flagged aria-hidden or private, and the elements."""

    __slots__ = ("tree", "truncated", "editable", "flagged", "_nodes")

    def __init__(
        self,
        tree: list[Any] | None,
        truncated: bool,
        editable: list[int],
        flagged: int,
        nodes: JsProxy,
    ) -> None:
        self.tree = tree
        self.truncated = truncated
        self.editable = editable
        self.flagged = flagged
        self._nodes: JsProxy | None = nodes

    def handle(self, order: int) -> ElementHandle:
        if self._nodes is None:
            raise BridgeError("text walk already released")
        return ElementHandle(self._nodes[order])

    def release(self) -> None:
        self._nodes = None


class DialogGuard:
    """Page dialogs answered and recorded while an action runs; ``restore`` puts the page's
    own ``alert``/``confirm``/``prompt`` back and returns what was raised."""

    __slots__ = ("_guard",)

    def __init__(self, guard: JsProxy) -> None:
        self._guard = guard

    def restore(self) -> list[list[str]]:
        guard, self._guard = self._guard, None
        return settle(guard.restore()).to_py() if guard is not None else []


def _to_js_arg(value: Any) -> Any:
    from pyodide.ffi import to_js  # type: ignore[import-not-found]

    if isinstance(value, ElementHandle):
        return value.proxy
    if isinstance(value, (dict, list, tuple)):
        return to_js(value, dict_converter=js.Object.fromEntries)
    return value


def _from_js_result(value: Any) -> Any:
    if value is None or value is jsnull:
        return None
    if isinstance(value, JsProxy):
        if getattr(value, "nodeType", None) == 1:
            return ElementHandle(value)
        return value.to_py()
    return value


class BrowserPage:
    """``page.Page`` on the live DOM: reads and acts for the main window through the JS
    primitives, one crossing per call."""

    def __init__(self, api: Any) -> None:
        self._primitives = calls(api.primitives)
        self._async_primitives = api.primitives  # the ones that answer a Promise in both modes
        self._window = api.window
        self._sdk_host = api.sdkHost
        self._ui = calls(api.ui)
        self._watch = calls(self._primitives.watchPage(self._window, self._sdk_host))

    # -- reads --------------------------------------------------------------------------

    def collect_main_document(
        self, *, viewport_only: bool = False, snapshot: bool = False
    ) -> DocumentFacts:
        """One walk of the page: the top document, its open shadow roots and same-origin
        frames. The rows cross as columns (typed arrays, one string buffer, a small JSON; see
        ``facts.rows_from_columns``): a few crossings instead of a proxy per value, and a
        fraction of the cost of parsing the same rows as JSON.
        ``viewport_only``: rows only for the elements intersecting the top viewport, their
        ancestors and the name sources of the fields among them (``viewportKeep``).
        ``snapshot``: the walk of a page_inspect; the next walk's ``facts.FRESH`` compares with
        what this one saw painted. In worker mode the walk runs in slices on the main thread
        (``collectDocumentColumnsSliced``), consistent as one walk."""
        walk = "collectDocumentColumnsSliced" if _in_worker else "collectDocumentColumns"
        try:
            result = getattr(self._primitives, walk)(
                self._window.document, self._sdk_host, viewport_only, snapshot
            )
            # Shadow roots attached without a mutation (a late custom-element upgrade) are
            # watched from the first walk that meets them on.
            if self._watch is not None:
                self._watch.adopt(result.roots)
            rows, scopes, frames = decode_walk(result.columns)
        except JsException as error:
            raise BridgeError(str(error)) from error
        return DocumentFacts(rows, result.nodes, self._primitives, scopes, frames)

    def collect_name_sources(
        self, handle: ElementHandle, limit: int = 2000
    ) -> tuple[DocumentFacts, list[int], list[bool], list[int]]:
        """Rows for recomputing one element's name: its subtree, labels and aria-labelledby
        targets (``collectNameSources``); returns the facts, the root rows, whether each root
        is hidden, and the rows that are the element itself again (inside its label)."""
        try:
            result = self._primitives.collectNameSourcesJson(handle.proxy, limit)
        except JsException as error:
            raise BridgeError(str(error)) from error
        rows, roots, hidden, aliases = json.loads(str(result.json))
        return DocumentFacts(rows, result.nodes, self._primitives), roots, hidden, aliases

    def row_of(self, handle: ElementHandle) -> list[Any]:
        return self._primitives.rowOf(handle.proxy).to_py()

    def is_connected(self, handle: ElementHandle) -> bool:
        return bool(self._primitives.isConnected(handle.proxy))

    def is_rendered(self, handle: ElementHandle) -> bool:
        return bool(self._primitives.isRendered(handle.proxy))

    def read_value(self, handle: ElementHandle) -> str:
        return str(self._primitives.readValue(handle.proxy))

    def max_length(self, handle: ElementHandle) -> int:
        return int(self._primitives.maxLength(handle.proxy))

    def hit_test(self, handle: ElementHandle) -> HitTest:
        outcome, x, y, hit = self._primitives.hitTest(handle.proxy, self._sdk_host).to_py()
        return HitTest(Outcome(outcome), float(x), float(y), str(hit))

    def move_panel_aside(self, handle: ElementHandle) -> str:
        """SPEC U4: move the panel off the element (``ui.moveAside``); the corner it moved
        to, or "" when it stayed."""
        return str(self._ui.moveAside(handle.proxy) or "")

    def viewport(self) -> list[float]:
        return self._primitives.viewport(self._window).to_py()

    def counters(self) -> tuple[int, int, float, str, str]:
        """(mutations, navigations, ms since last mutation, url, title)."""
        mutations, navigations, quiet_ms, url, title = self._watch.read().to_py()
        return int(mutations), int(navigations), float(quiet_ms), str(url), str(title)

    # -- acts ---------------------------------------------------------------------------

    def scroll_into_view(self, handle: ElementHandle) -> bool:
        return bool(self._primitives.scrollIntoView(handle.proxy))

    def click(
        self, handle: ElementHandle, x: float, y: float, click_count: int = 1, button: str = "left"
    ) -> None:
        self._primitives.click(handle.proxy, x, y, None, click_count, button)

    def hover(self, handle: ElementHandle, x: float, y: float) -> HoverState:
        rules, unreadable, styled = self._primitives.hover(handle.proxy, x, y).to_py()
        return HoverState(int(rules), int(unreadable), int(styled))

    def hover_host_for(self, handle: ElementHandle) -> ElementHandle | None:
        return self._call("hoverHostFor", handle)

    async def drag(
        self,
        source: ElementHandle,
        sx: float,
        sy: float,
        destination: ElementHandle,
        dx: float,
        dy: float,
    ) -> tuple[str, bool, str]:
        mode, dropped, released = (
            await self._async_primitives.drag(
                source.proxy, sx, sy, destination.proxy, dx, dy, self._sdk_host
            )
        ).to_py()
        return str(mode), bool(dropped), str(released)

    def effect_probe(self) -> JsProxy:
        """What no mutation record shows (focus, control values, scroll), before an act."""
        return self._primitives.effectProbe(self._window, self._sdk_host)

    def effects_since(self, probe: JsProxy, acted: ElementHandle) -> list[str]:
        return [str(e) for e in self._primitives.effectsSince(probe, acted.proxy)]

    def fill(self, handle: ElementHandle, value: str) -> str:
        return str(self._primitives.fill(handle.proxy, value))

    def commit_value(self, handle: ElementHandle, changed: bool) -> str:
        return str(self._primitives.commitValue(handle.proxy, changed))

    def suggests_while_typing(self, handle: ElementHandle) -> bool:
        return bool(self._primitives.suggestsWhileTyping(handle.proxy))

    def field_suggestions(
        self, handle: ElementHandle, before: list[ElementHandle]
    ) -> tuple[str, list[str]]:
        reason, texts = self._primitives.fieldSuggestions(
            handle.proxy, self._js_elements(before), self._sdk_host
        ).to_py()
        return str(reason), [str(t) for t in texts]

    def scroll_page(self, dx: float, dy: float) -> list[float]:
        return self._primitives.scrollPage(self._window, dx, dy).to_py()

    # -- acts of the action modules (loader_js/primitives/act.js) -------------------------

    def _call(self, name: str, *args: Any) -> Any:
        """One act.js primitive: ``ElementHandle`` arguments unwrapped, dicts and lists made JS
        objects and arrays; an element result comes back as an ``ElementHandle``, ``null`` as
        ``None``, anything else converted to Python."""
        function = getattr(self._primitives, name)
        try:
            result = function(*(_to_js_arg(a) for a in args))
        except JsException as error:
            raise BridgeError(f"{name}: {error}") from error
        return _from_js_result(result)

    def focus(self, handle: ElementHandle) -> Outcome:
        return Outcome(self._call("focusElement", handle))

    def blur(self, handle: ElementHandle) -> str:
        return str(self._call("blur", handle))

    def select_options(self, handle: ElementHandle) -> list[list[Any]]:
        return list(self._call("selectOptions", handle))

    def select_native(self, handle: ElementHandle, indexes: list[int]) -> NativeSelection:
        outcome, selected = self._call("selectNative", handle, indexes)
        return NativeSelection(Outcome(outcome), [str(v) for v in selected])

    def control_of(self, handle: ElementHandle) -> ElementHandle | None:
        return self._call("controlOf", handle)

    def label_for(self, handle: ElementHandle) -> ElementHandle | None:
        return self._call("labelFor", handle)

    def combobox_display(self, handle: ElementHandle) -> str:
        return str(self._call("comboboxDisplay", handle))

    def dispatch_key(self, handle: ElementHandle | None, type_: str, init: dict[str, Any]) -> bool:
        return bool(self._call("dispatchKey", handle, type_, init))

    def insert_text(self, handle: ElementHandle, text: str) -> str:
        return str(self._call("insertText", handle, text))

    def delete_text(self, handle: ElementHandle, forward: bool) -> str:
        return str(self._call("deleteText", handle, forward))

    def select_all(self, handle: ElementHandle) -> bool:
        return bool(self._call("selectAll", handle))

    def submit_implicitly(self, handle: ElementHandle) -> Submission:
        return Submission(self._call("submitImplicitly", handle))

    def activate(self, handle: ElementHandle) -> bool:
        return bool(self._call("activate", handle))

    def step_radio(self, handle: ElementHandle, delta: int) -> ElementHandle | None:
        return self._call("stepRadio", handle, delta)

    def step_select(self, handle: ElementHandle, delta: int) -> bool:
        return bool(self._call("stepSelect", handle, delta))

    def aria_options(
        self, handle: ElementHandle
    ) -> tuple[list[list[Any]], list[ElementHandle], str]:
        """(facts, option handles, active option label) of a combobox or listbox."""
        result = self._primitives.ariaOptions(handle.proxy)
        nodes = result.nodes
        handles = [ElementHandle(nodes[i]) for i in range(int(nodes.length))]
        return result.facts.to_py(), handles, str(result.active)

    def visible_text_matches(self, label: str) -> list[ElementHandle]:
        nodes = self._primitives.visibleTextMatches(self._window.document, label, self._sdk_host)
        return [ElementHandle(nodes[i]) for i in range(int(nodes.length))]

    # -- widget strategies (loader_js/primitives/widgets.js, actions.widgets.WidgetPage) --

    @staticmethod
    def _elements(nodes: JsProxy) -> list[ElementHandle]:
        return [ElementHandle(nodes[i]) for i in range(int(nodes.length))]

    @staticmethod
    def _js_elements(handles: list[ElementHandle]) -> Any:
        array_ = js.Array.new()
        for handle in handles:
            array_.push(handle.proxy)
        return array_

    def popup_roots(self, before: list[ElementHandle] | None = None) -> list[ElementHandle]:
        """Body-level containers with rendered content; with ``before``, those not in it."""
        nodes = self._primitives.popupRoots(
            self._window.document,
            self._sdk_host,
            None if before is None else self._js_elements(before),
        )
        return self._elements(nodes)

    def choices_in(
        self, roots: list[ElementHandle], label: str, skip: ElementHandle
    ) -> list[ElementHandle]:
        return self._elements(
            self._primitives.choicesIn(self._js_elements(roots), label, skip.proxy, self._sdk_host)
        )

    def choice_item(self, handle: ElementHandle) -> tuple[ElementHandle | None, str]:
        item, role = self._primitives.choiceItem(handle.proxy, 3)
        return _from_js_result(item), str(role)

    def scrollable_in(self, handle: ElementHandle) -> ElementHandle | None:
        return self._call("scrollableIn", handle)

    def scroll_list_step(self, handle: ElementHandle, fraction: float) -> list[float]:
        return [float(v) for v in self._call("scrollListStep", handle, fraction)]

    def scroll_list_top(self, handle: ElementHandle) -> float:
        return float(self._call("scrollListTop", handle))

    def collapsed_tree_items(self, roots: list[ElementHandle]) -> list[ElementHandle]:
        return self._elements(self._primitives.collapsedTreeItems(self._js_elements(roots)))

    def tree_toggle(self, handle: ElementHandle) -> ElementHandle | None:
        return self._call("treeToggle", handle)

    def popup_rows(self, roots: list[ElementHandle], limit: int) -> list[str]:
        """The texts of the rows of popups that state no roles (entries, tree nodes)."""
        return [
            str(t) for t in self._primitives.popupRowTexts(self._js_elements(roots), limit).to_py()
        ]

    def row_toggles(
        self, roots: list[ElementHandle], tried: list[ElementHandle]
    ) -> list[ElementHandle]:
        return self._elements(
            self._primitives.rowToggles(self._js_elements(roots), self._js_elements(tried))
        )

    def row_toggle_of(self, handle: ElementHandle) -> ElementHandle | None:
        return _from_js_result(self._primitives.rowToggleOf(handle.proxy, 4))

    def search_field_in(self, roots: list[ElementHandle]) -> ElementHandle | None:
        return _from_js_result(self._primitives.searchFieldIn(self._js_elements(roots)))

    def radios_in(self, handle: ElementHandle) -> list[ElementHandle]:
        return self._elements(self._primitives.radiosIn(handle.proxy))

    def slider_range(self, handle: ElementHandle) -> list[float]:
        return [float(v) for v in self._call("sliderRange", handle)]

    # -- date and time pickers (loader_js/primitives/calendar.js, actions.widgets.date) --

    def calendar_grids(self, roots: list[ElementHandle]) -> CalendarRead:
        result = self._primitives.calendarGrids(self._js_elements(roots))
        return CalendarRead(
            result.facts.to_py(), self._elements(result.nodes), self._elements(result.grids),
            [str(h) for h in result.headers.to_py()],
        )

    def picker_buttons(
        self, roots: list[ElementHandle], grids: list[ElementHandle]
    ) -> tuple[list[list[Any]], list[ElementHandle]]:
        result = self._primitives.pickerButtons(self._js_elements(roots), self._js_elements(grids))
        return result.facts.to_py(), self._elements(result.nodes)

    def time_columns(
        self, roots: list[ElementHandle], grids: list[ElementHandle]
    ) -> tuple[list[list[Any]], list[ElementHandle]]:
        result = self._primitives.timeColumns(self._js_elements(roots), self._js_elements(grids))
        return result.facts.to_py(), self._elements(result.nodes)

    def reveal_in_list(self, handle: ElementHandle) -> bool:
        return bool(self._call("revealInList", handle))

    def contains(self, ancestor: ElementHandle, node: ElementHandle) -> bool:
        return bool(self._call("containsNode", ancestor, node))

    def range_field_text(self, handle: ElementHandle) -> str:
        return str(self._call("rangeFieldText", handle))
    def slider_track(self, handle: ElementHandle) -> tuple[Any, ...] | None:
        """(the element keys go to or None, the rail, x0, x1, y0, y1: the rail's start and end
        points in the viewport), or None when nothing there is a thumb on a rail."""
        found = self._primitives.sliderTrack(handle.proxy)
        if found is None or found is jsnull:
            return None
        keys, rail = _from_js_result(found[0]), ElementHandle(found[1])
        return (keys, rail, *(float(found[i]) for i in range(2, 6)))

    def intercept_dialogs(self) -> DialogGuard:
        return DialogGuard(self._primitives.interceptDialogs(self._window))

    def active_element(self) -> ElementHandle | None:
        """The focused element; the body when focus is inside SDK UI (keys never go there)."""
        return _from_js_result(
            self._primitives.deepActiveElement(self._window.document, self._sdk_host)
        )

    def move_focus(self, current: ElementHandle | None, backwards: bool) -> ElementHandle | None:
        return _from_js_result(
            self._primitives.moveFocus(
                current.proxy if current else None, backwards, self._sdk_host
            )
        )

    def live_messages(self) -> list[list[str]]:
        return self._primitives.liveMessages(self._window.document, self._sdk_host).to_py()

    def page_text(self) -> str:
        return str(self._primitives.pageText(self._window.document))

    def scroll_state(self, handle: ElementHandle | None) -> list[Any]:
        target = handle.proxy if handle is not None else self._window.document
        return self._primitives.scrollState(target).to_py()

    def scroll_element(self, handle: ElementHandle, dx: float, dy: float) -> list[float]:
        return self._primitives.scrollElement(handle.proxy, dx, dy).to_py()

    async def next_frame(self) -> None:
        await self._async_primitives.nextFrame(self._window)

    # -- reading (loader_js/primitives/read.js) ---------------------------------------------

    def read_text(
        self,
        root: ElementHandle | None,
        listed: list[ElementHandle] | None,
        text_limit: int,
        inline_displays: list[str],
        inline_tags: list[str],
        fold_blocks: bool = False,
    ) -> TextWalk:
        """The rendered text of the page (or of ``root``'s subtree) as ``readText``'s tree, in
        one crossing (UTF-8 JSON: a copy, where a proxy per node would cost a crossing each);
        ``listed`` elements carry their position in that list. Inline elements get no item
        unless their tag is in ``inline_tags``; ``fold_blocks`` folds lists and row groups
        too (see read.js)."""
        from pyodide.ffi import to_js  # type: ignore[import-not-found]

        target = root.proxy if root is not None else self._window.document
        chosen = to_js([handle.proxy for handle in listed]) if listed else None
        try:
            result = self._primitives.readText(
                target,
                self._sdk_host,
                chosen,
                text_limit,
                to_js(inline_displays),
                to_js(inline_tags),
                fold_blocks,
            )
        except JsException as error:
            raise BridgeError(f"readText: {error}") from error
        return TextWalk(
            json.loads(result.json.to_bytes()),
            bool(result.truncated),
            result.editable.to_py(),
            int(result.flagged),
            result.nodes,
        )

    def check_regex(self, pattern: str) -> str:
        """'' when JavaScript compiles ``pattern``, else its error message."""
        return str(self._primitives.checkRegex(pattern))

    async def regex_search(
        self, text: str, pattern: str, max_hits: int, count_limit: int, timeout_ms: int
    ) -> dict[str, Any]:
        answer = await self._async_primitives.regexSearch(
            self._window, text, pattern, max_hits, count_limit, timeout_ms
        )
        return answer.to_py()

    # -- screenshot (primitives in loader_js/primitives/screenshot.js) -----------------------

    async def render_viewport(
        self, masks: list[ElementHandle], labels: list[tuple[str, ElementHandle]]
    ) -> Rendering:
        """Render the top viewport from the DOM, SDK host removed, ``masks`` blanked and
        ``labels`` drawn as ref tags. The screenshot library is imported on first use."""
        from pyodide.ffi import to_js  # type: ignore[import-not-found]

        js_masks = to_js([handle.proxy for handle in masks])
        js_labels = to_js([[text, handle.proxy] for text, handle in labels])
        try:
            result = await self._async_primitives.renderViewport(
                self._window, self._sdk_host, js_masks, js_labels
            )
        except JsException as error:
            raise BridgeError(str(error)) from error
        return Rendering(result, self._primitives)

    def close(self) -> None:
        watch, self._watch = self._watch, None
        if watch is not None:
            watch.dispose()
        self._primitives.releaseInput(self._window)


class Rendering:
    """A rendered viewport held in JavaScript until ``release``: encoded once or more (the
    byte cap may need a lower quality or size), never written anywhere but the result."""

    __slots__ = ("_proxy", "_primitives", "width", "height", "scroll_x", "scroll_y",
                 "device_pixel_ratio", "render_ms", "masked", "labelled", "unrendered", "warnings")

    def __init__(self, proxy: JsProxy, primitives: Any) -> None:
        self._proxy = proxy
        self._primitives = primitives
        width, height, scroll_x, scroll_y, ratio, render_ms = proxy.facts.to_py()
        self.width, self.height = int(width), int(height)
        self.scroll_x, self.scroll_y = float(scroll_x), float(scroll_y)
        self.device_pixel_ratio, self.render_ms = float(ratio), float(render_ms)
        # Rects are [x, y, width, height] in top-viewport CSS pixels, None when not visible.
        self.masked = [_rect_or_none(r) for r in proxy.masked]
        self.labelled = [_rect_or_none(r) for r in proxy.labelled]
        self.unrendered = [(str(r[0]), [float(v) for v in list(r)[1:]]) for r in proxy.unrendered]
        self.warnings = [str(w) for w in proxy.warnings]

    def encode(self, mime: str, quality: float | None, width: int, height: int) -> str:
        """A data URL; raises ``BridgeError`` when the browser refuses to export the pixels
        (a canvas tainted by cross-origin content throws ``SecurityError``)."""
        if self._proxy is None:
            raise BridgeError("rendering already released")
        try:
            return str(self._primitives.encodeRendering(self._proxy, mime, quality, width, height))
        except JsException as error:
            raise BridgeError(str(error)) from error

    def release(self) -> None:
        proxy, self._proxy = self._proxy, None
        if proxy is not None:
            self._primitives.releaseRendering(proxy)


def decode_walk(columns: Any) -> tuple[Any, list[list[Any]], list[list[Any]]]:
    """(rows, scopes, frames) of a walk from the column transport of collect.js
    (``collectDocumentColumns(...).columns``; see ``facts.rows_from_columns``)."""
    built = F.rows_from_columns(
        int(columns.count),
        columns.ints.to_bytes(),
        columns.floats.to_bytes(),
        columns.strings.to_bytes().decode("utf-8"),
        int(columns.stringCount),
        columns.stringIndex.to_bytes(),
        json.loads(columns.json.to_bytes()),
    )
    if built is None:  # a string held the separator: the same walk as JSON rows
        rows, scopes, frames, partial = json.loads(settle(columns.rowsJson()).to_bytes())
        return F.rows_from_json(rows, partial), scopes, frames
    return built


def _rect_or_none(value: Any) -> list[float] | None:
    if value is None or value is jsnull:
        return None
    return [float(v) for v in value]


class SiteToolBridge:
    """The loader's site tool registry (``loader_js/site-tools.js``) for
    ``mao_page.sitetools.runner``: a tool's description and one call's outcome, each as JSON
    text, so nothing but strings and numbers crosses (the tool's ``execute`` runs in
    JavaScript, where the page registered it)."""

    def __init__(self, api: Any) -> None:
        self._primitives = api.primitives

    def describe(self, name: str) -> dict[str, Any] | None:
        text = settle(self._primitives.siteToolDescribe(name))
        if text is None or text is jsnull:
            return None
        return json.loads(str(text))

    async def run(
        self, call_id: str, name: str, arguments_json: str, timeout_ms: int
    ) -> dict[str, Any]:
        answer = await self._primitives.siteToolRun(call_id, name, arguments_json, timeout_ms)
        return json.loads(str(answer))

    def cancel(self, call_id: str) -> None:
        self._primitives.siteToolCancel(call_id)


class Host:
    """What the loader handed over: options, status UI, ready signal, SDK events."""

    def __init__(self, api: Any) -> None:
        self._api = api
        options = api.options
        user = options.user
        self.server_url = str(options.serverUrl)
        self.agent_id = str(options.agentId)
        self.user_id = str(user.id)
        self._options = options

    def set_status(self, state: str, message: str) -> None:
        self._api.ui.setStatus(state, message)

    def signal_ready(self, session_id: str) -> None:
        self._api.signalReady(js.Object.fromEntries([["sessionId", session_id]]))

    def signal_failure(self, code: str, message: str) -> None:
        self._api.signalFailure(code, message)

    def emit(self, event: str, detail: dict[str, Any]) -> None:
        from pyodide.ffi import to_js  # type: ignore[import-not-found]

        self._api.emit(event, to_js(detail, dict_converter=js.Object.fromEntries))


class PageTransport:
    """The loader's connection to the backend (``loader_js/transport.js``), as the runtime's
    ``session.connection.PageConnection`` uses it: send a frame, and be called for welcomes,
    drops, refusals, state changes, the page's return from the back/forward cache and every
    frame that is not the transport's own. The frames
    that came before the runtime booted are handed over first, in order. The callbacks are
    owned here and destroyed on close."""

    def __init__(self, api: Any) -> None:
        self._transport = calls(api.transport)
        self._handlers: list[Any] = []

    def send(self, text: str) -> bool:
        return bool(self._transport.send(text))

    def attach(
        self,
        *,
        welcome: Any,
        frame: Any,
        dropped: Any,
        refused: Any,
        state: Any,
        returned: Any,
    ) -> None:
        def on_frame(text: Any, waited_ms: Any) -> None:
            frame(str(text), float(waited_ms or 0))

        def on_refused(code: Any, message: Any, final: Any) -> None:
            refused(str(code), str(message), bool(final))

        handlers = {
            "welcome": create_proxy(lambda session_id: welcome(str(session_id))),
            "frame": create_proxy(on_frame),
            "dropped": create_proxy(lambda reason: dropped(str(reason))),
            "refused": create_proxy(on_refused),
            "state": create_proxy(lambda name: state(str(name))),
            # The document came back from the back/forward cache (SPEC B7).
            "returned": create_proxy(lambda: returned()),
        }
        self._handlers = list(handlers.values())
        self._transport.attach(js.Object.fromEntries([[k, v] for k, v in handlers.items()]))

    def close(self) -> None:
        self._transport.detach()
        handlers, self._handlers = self._handlers, []
        for proxy in handlers:
            proxy.destroy()


def now_ms() -> float:
    return float(js.performance.now())


def measure(name: str, start_ms: float) -> None:
    """A ``performance.measure`` from ``start_ms`` to now: every SDK task is named ``mao:...``
    so that the page owner's own tools (DevTools, RUM, Lighthouse) can tell them apart. From
    the worker it goes to the page's timeline (the loader's ``measure``)."""
    if _in_worker:
        _host_api.measure(name, start_ms)
        return
    js.performance.measure(name, js.Object.fromEntries([["start", start_ms]]))


def log(message: str) -> None:
    js.console.debug("[mao-embed]", message)


def warn(message: str) -> None:
    js.console.warn("[mao-embed]", message)


# -- SDK UI and storage (the panel, cards and persisted grants: SPEC U1, P3) ------------------


class PanelView:
    """The panel built by the loader (``loader_js/primitives/ui.js``); implements
    ``supervisor.PanelUi``. The user's input comes back through ``connect``, as a callback
    this class owns and destroys on close."""

    def __init__(self, api: Any) -> None:
        self._ui = api.ui
        self.locale = str(self._ui.locale)
        self._handler: Any = None

    def connect(self, on_input: Any) -> None:
        def receive(kind: Any, detail: Any) -> None:
            on_input(str(kind), detail.to_py() if isinstance(detail, JsProxy) else {})

        self._handler = create_proxy(receive)
        self._ui.connect(self._handler)

    def set_status(self, state: str, text: str) -> None:
        self._ui.setStatus(state, text)

    def set_level(self, level: str, actions: list[str]) -> None:
        self._ui.setLevel(level, _to_js_arg(actions))

    def show_card(self, card: dict[str, Any]) -> None:
        self._ui.showCard(_to_js_arg(card))

    def close_card(self, nonce: str) -> None:
        self._ui.closeCard(nonce)

    def log(self, entry: dict[str, Any]) -> None:
        self._ui.log(_to_js_arg({k: v for k, v in entry.items() if v is not None}))

    def chat(self, role: str, text: str) -> None:
        self._ui.chat(role, text)

    def chat_entry(self, entry_id: str, role: str, text: str) -> None:
        self._ui.chatEntry(entry_id, role, text)

    def restore_chat(self, entries: list[dict[str, str]]) -> None:
        self._ui.restoreChat(_to_js_arg(entries))

    def clear_chat(self) -> None:
        self._ui.clearChat()

    def show_question(self, question: dict[str, Any]) -> None:
        self._ui.showQuestion(_to_js_arg(question))

    def close_question(self, nonce: str) -> None:
        self._ui.closeQuestion(nonce)

    def show_error(self, text: str) -> None:
        self._ui.showError(text)

    def highlight(self, handle: ElementHandle, label: str, sticky: bool) -> None:
        self._ui.highlight(handle.proxy, label, sticky)

    def clear_highlight(self) -> None:
        self._ui.clearHighlight()

    def close(self) -> None:
        handler, self._handler = self._handler, None
        if handler is not None:
            self._ui.disconnect()
            handler.destroy()


class InputWatch:
    """Real user input on the page outside the SDK UI, reported only while armed (SPEC U3)."""

    def __init__(self, api: Any, on_input: Any) -> None:
        self._callback = create_proxy(lambda kind: on_input(str(kind)))
        self._watch = settle(api.ui.watchInput(api.window, api.sdkHost, self._callback))

    def arm(self, armed: bool) -> None:
        if self._watch is not None:
            self._watch.arm(armed)

    def close(self) -> None:
        watch, self._watch = self._watch, None
        if watch is not None:
            watch.dispose()
            self._callback.destroy()


class BrowserStorage:
    """``window.localStorage`` as ``authorization.Storage``. Storage can be unavailable
    (disabled, sandboxed, quota); then nothing persists and reads find nothing."""

    def __init__(self, api: Any) -> None:
        try:
            self._storage = calls(api.window.localStorage)
        except JsException:
            self._storage = None

    def get(self, key: str) -> str | None:
        if self._storage is None:
            return None
        try:
            value = self._storage.getItem(key)
        except JsException:
            return None
        return None if value is None or value is jsnull else str(value)

    def set(self, key: str, value: str) -> None:
        if self._storage is None:
            return
        try:
            self._storage.setItem(key, value)
        except JsException as error:  # quota or disabled storage: the grant lasts this page only
            log(f"could not persist the authorization grant: {error}")

    def remove(self, key: str) -> None:
        if self._storage is None:
            return
        try:
            self._storage.removeItem(key)
        except JsException as error:
            log(f"could not remove the authorization grant: {error}")


def risk_facts(api: Any, handle: ElementHandle) -> tuple[bool, str, str, str, str, bool]:
    """(in a form, the form's action URL, its method, the element's type, its text, whether
    the page owner marked it or an ancestor ``data-mao-private``)."""
    in_form, action, method, kind, text, private = settle(
        api.primitives.riskFacts(handle.proxy)
    ).to_py()
    return bool(in_form), str(action), str(method), str(kind), str(text), bool(private)


def page_origin(api: Any) -> str:
    return str(api.origin)


def option(api: Any, name: str) -> Any:
    """A plain-Python copy of one ``init`` option (None when absent)."""
    value = getattr(api.options, name, None)
    if value is None or value is jsnull:
        return None
    return value.to_py() if isinstance(value, JsProxy) else value


def tab_document_tag(api: Any) -> str:
    """This document's tag (SPEC B7): it ends every snapshot id, so a ref from another page of
    the tab is known as stale because the tab navigated. "" from a loader without one."""
    tab = getattr(api, "tab", None)
    if tab is None or tab is jsnull:
        return ""
    return str(getattr(tab, "documentTag", "") or "")


def tab_continuation(api: Any) -> dict[str, Any] | None:
    """The task the tab's previous page handed over (``loader_js/tab.js``), or None."""
    tab = getattr(api, "tab", None)
    raw = getattr(tab, "continuation", None) if tab is not None and tab is not jsnull else None
    if raw is None or raw is jsnull or not str(raw):
        return None
    try:
        value = json.loads(str(raw))
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def publish_task(api: Any, record: dict[str, Any] | None) -> None:
    """Hand the open task (or None) to the loader, which decides at pagehide whether it goes
    on to the tab's next page."""
    tab = getattr(api, "tab", None)
    if tab is None or tab is jsnull:
        return
    tab.publishTask(json.dumps(record, separators=(",", ":")) if record is not None else "")
