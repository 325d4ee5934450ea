"""The snapshot engine's entry point: ``page_inspect`` and ref resolution (SPEC S, R)."""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from itertools import compress, count, repeat
from operator import is_not, itemgetter
from typing import Any, NamedTuple, Protocol, overload

from ..bridge.page import Page, PageState, read_state
from ..dom import facts as F
from ..dom.names import DocumentIndex
from ..dom.roles import role_of
from ..errors import ToolFailure
from ..protocol import ErrorCode, InspectOptions, PageSnapshot, PageToolRequest, Viewport
from ..supervision.sensitive import is_sensitive
from .render import ElementColumns, render_text
from .scanner import Scan, ScannedElement, element_label, key_of, scan_page
from .store import ElementEntry, SnapshotStore, suggest_replacement

_OPAQUE_MESSAGES = {
    "cross_origin_frame": (
        ErrorCode.CROSS_ORIGIN_FRAME,
        "this is a cross-origin frame; the page's security rules keep its content out of reach",
    ),
    "closed_shadow_root": (
        ErrorCode.CLOSED_SHADOW_ROOT,
        "this element renders a closed shadow root; its content cannot be read or operated",
    ),
}


class SensitiveRelease(Protocol):
    """Decides whether a ``page_inspect`` asking for sensitive values (``maskSensitive:
    false``) gets them (SPEC P5): the authorization center plugs in here
    (``Supervisor.release_sensitive_values``). Raises ``ToolFailure`` to refuse."""

    async def release_sensitive_values(self, request: PageToolRequest) -> bool: ...


class KeepSensitiveMasked:
    """Without an authorization center (tests of the tools alone) nothing is released."""

    async def release_sensitive_values(self, request: PageToolRequest) -> bool:
        return False


@dataclass(frozen=True, slots=True)
class ElementDescription:
    """One live element as the snapshot engine would name it, without a snapshot: for the
    element ``page_keyboard`` types into when it has no ref (the focused one)."""

    role: str
    label: str
    tag: str
    type: str
    sensitive: bool


class Inspector:
    def __init__(self, page: Page, store: SnapshotStore) -> None:
        self._page = page
        self._store = store
        # The navigation count at the last snapshot (None before the first).
        self._snapshot_navigations: int | None = None

    @property
    def store(self) -> SnapshotStore:
        return self._store

    def state(self) -> PageState:
        return read_state(self._page)

    @contextmanager
    def live_scan(
        self, *, include_offscreen: bool = False, outline: bool = False, viewport_only: bool = False,
        release_sensitive: bool = False, snapshot: bool = False, mark_new: bool = False,
    ) -> Iterator[tuple[Any, Scan, Viewport]]:
        """One walk of the page and its scan, making no snapshot (the agent's refs stay as
        they are). Yields (facts, scan, viewport); ``facts.handle(i)`` is valid inside the
        block only. The one place that pairs a walk with the scan's frame tables.
        ``viewport_only`` reads rows only for what intersects the viewport (with ancestors
        and the fields' name sources): enough for the in-viewport elements, at a cost that
        follows what is visible rather than the page size (screenshot masks).
        ``snapshot``: the walk of a snapshot the agent gets (the reference of the next one's
        ``facts.FRESH``); ``mark_new``: mark what the previous snapshot's walk did not see
        painted as new (SPEC S9), and reach the items of what appeared."""
        if viewport_only and include_offscreen:
            raise ValueError("a viewport-only walk cannot list offscreen elements")
        walk: dict[str, bool] = {}
        if viewport_only:
            walk["viewport_only"] = True
        if snapshot:
            walk["snapshot"] = True
        facts = self._page.collect_main_document(**walk)
        try:
            width, height, scroll_x, scroll_y, ratio = self._page.viewport()
            viewport = Viewport(
                width=width, height=height, scroll_x=scroll_x, scroll_y=scroll_y,
                device_pixel_ratio=ratio,
            )
            scanned = scan_page(
                facts.rows,
                viewport,
                include_offscreen=include_offscreen,
                scopes=facts.scopes,
                frames=facts.frames,
                outline=outline,
                release_sensitive=release_sensitive,
                mark_new=mark_new,
            )
            yield facts, scanned, viewport
        finally:
            facts.release()

    def inspect(self, options: InspectOptions, *, release_sensitive: bool = False) -> InspectResult:
        """A snapshot. ``release_sensitive`` is the authorization center's decision for this
        request (``SensitiveRelease``), never the agent's option alone (SPEC P5)."""
        with collector_paused():
            return self._inspect(options, release_sensitive)

    def _inspect(self, options: InspectOptions, release_sensitive: bool) -> InspectResult:
        before = self.state()
        # New since the previous snapshot of the same document state: after a navigation
        # (an SPA route change too) everything is new, and marking it all says nothing.
        mark_new = self._snapshot_navigations == before.navigations
        self._snapshot_navigations = before.navigations
        # The default (viewport only) reads full facts only for what intersects the viewport,
        # its ancestors and the name sources (viewportKeep): cost follows what is visible.
        with self.live_scan(include_offscreen=options.include_offscreen, outline=options.format == "text",
                            viewport_only=not options.include_offscreen, release_sensitive=release_sensitive,
                            snapshot=True, mark_new=mark_new) as (facts, scanned, viewport):
            snapshot = self._store.create(
                page_version=before.version,
                navigation_epoch=before.navigations,
                url=before.url,
                title=before.title,
                mutations=before.mutations,
            )
            items = scanned.elements
            elements = SnapshotElements(self._store.new_ids(snapshot, len(items)), items)
            # The listed elements' handles, then those of the real inputs behind custom
            # checkboxes (in order).
            controls = list(map(_CONTROL, items))
            with_control = list(compress(range(len(items)), map(is_not, controls, repeat(None))))
            handles = facts.handles([*map(_INDEX, items), *map(controls.__getitem__, with_control)])
            control_handles = dict(zip(with_control, count(len(items)), strict=False))
            snapshot.entries.add_records(elements.element_ids, partial(_entry, items, handles, control_handles), handles)
        text = None
        truncated = 0
        if options.format == "text":
            text, truncated = render_text(
                url=before.url, title=before.title, snapshot_id=snapshot.snapshot_id,
                elements=elements.columns(), max_tokens=options.max_tokens, outline=scanned.outline,
                page_version=before.version,
            )
        return InspectResult(
            snapshot_id=snapshot.snapshot_id,
            page_version=before.version,
            url=before.url,
            title=before.title,
            viewport=viewport,
            elements=elements,
            text=text,
            truncated=truncated,
            sensitive_values="released" if release_sensitive else "masked",
        )

    def resolve(self, snapshot_id: str, element_id: str) -> tuple[ElementEntry, list[Any]]:
        """The live element behind a ref, or a refusal (SPEC R2, S6): ``stale_ref`` when the
        page navigated, the element left the DOM or its role, type or accessible name
        changed; ``cross_origin_frame`` / ``closed_shadow_root`` for placeholders.
        Returns the entry and a fresh fact row of the element (of the real input for a
        custom checkbox, whose ``handle`` is the label to click)."""
        state = self.state()
        _snapshot, entry = self._store.resolve(
            snapshot_id, element_id, navigation_epoch=state.navigations, url=state.url
        )
        if entry.opaque:
            code, message = _OPAQUE_MESSAGES[entry.opaque]
            raise ToolFailure(code, message + "; nothing was done", element_id=entry.element_id)
        subject = entry.control if entry.control is not None else entry.handle
        if not self._page.is_connected(entry.handle) or not self._page.is_connected(subject):
            raise self._stale(entry, "the element is no longer in the page")
        row = self._page.row_of(subject)
        if key_of(row, role_of(row)) != entry.key:
            raise self._stale(entry, "the element's role, type or label changed")
        if entry.name is not None and self._name_changed(subject, entry.name, entry.control is not None):
            raise self._stale(entry, "the element's accessible name changed")
        return entry, row

    def describe(self, handle: Any) -> ElementDescription | None:
        """Role, accessible name, tag, type and sensitivity of a live element (one small
        crossing: its subtree, labels and aria-labelledby targets); None for the body and the
        root element, which is where keys go when nothing has focus."""
        facts, roots, hidden, aliases = self._page.collect_name_sources(handle)
        try:
            row = facts.rows[0]
            if row[F.TAG] in ("body", "html"):
                return None
            doc = DocumentIndex(facts.rows, roots=list(zip(roots, hidden, strict=True)), aliases=aliases)
            label = element_label(0, doc)[0]
            return ElementDescription(role=doc.role(0) or "generic", label=label, tag=row[F.TAG],
                                      type=row[F.TYPE] if row[F.TAG] in ("input", "button") else "",
                                      sensitive=is_sensitive(row, label))
        finally:
            facts.release()

    def _name_changed(self, handle: Any, name: str, hidden_ok: bool) -> bool:
        """Whether the element's label differs from ``name``, computed by the same code as in
        a scan: first over the rows of its subtree, labels and aria-labelledby targets only
        (one small crossing); if that differs, over a full walk, so that context the partial
        rows lack (an aria-hidden ancestor, a huge subtree) never makes a live ref stale."""
        facts, roots, hidden, aliases = self._page.collect_name_sources(handle)
        try:
            doc = DocumentIndex(facts.rows, roots=list(zip(roots, hidden, strict=True)), aliases=aliases)
            if element_label(0, doc, hidden_ok=hidden_ok)[0] == name:
                return False
        finally:
            facts.release()
        walk = self._page.collect_main_document()
        try:
            index = walk.index_of(handle)
            if index < 0:
                return True
            return element_label(index, DocumentIndex(walk.rows), hidden_ok=hidden_ok)[0] != name
        finally:
            walk.release()

    def _stale(self, entry: ElementEntry, reason: str) -> ToolFailure:
        """SPEC R2/R3: refuse, and suggest a unique match from a fresh snapshot."""
        details: dict[str, Any] = {"reason": reason}
        try:
            fresh = self.inspect(InspectOptions(include_offscreen=True))
        except ToolFailure:
            fresh = None
        if fresh is not None:
            latest = self._store.get(fresh.snapshot_id)
            suggestion = suggest_replacement(entry, list(latest.entries.values()))
            if suggestion is not None:
                details["suggestion"] = {"snapshotId": fresh.snapshot_id, "elementId": suggestion, "label": entry.label, "role": entry.role}
        return ToolFailure(
            ErrorCode.STALE_REF,
            f"{reason}; the ref is stale and nothing was done. Call page_inspect again"
            + (" (a likely replacement is in details.suggestion; verify before using it)" if "suggestion" in details else ""),
            element_id=entry.element_id,
            details=details,
        )


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for one scan. A whole-page scan allocates tens of
    thousands of tuples and lists (the rows alone: one per element), and every few hundred
    allocations start a collection that walks the young objects again (and now and then the
    whole heap): ~20% of the Python side at 8k elements, measured. What a scan leaves behind
    is freed by reference counting; any cycle waits for the next collection after it.
    Nothing changes if the collector was already off."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


class SnapshotOption(NamedTuple):
    value: str
    label: str
    selected: bool
    disabled: bool


class SnapshotElement(NamedTuple):
    """One element of a snapshot: the fields of ``protocol.PageElement`` (same names), built
    without a pydantic model per element. A snapshot lists hundreds to thousands of elements
    and validating each one in Pyodide cost more than scanning it; ``wire`` writes exactly
    what ``PageElement.to_wire`` would (tests/page/test_inspector.py holds the two equal).
    A NamedTuple, like ``ScannedElement``: immutable and the cheapest to make."""

    element_id: str
    kind: str
    role: str
    type: str
    label: str
    text: str
    value: str | bool | list[str] | None
    options: tuple[SnapshotOption, ...]
    visible: bool
    in_viewport: bool
    disabled: bool
    readonly: bool
    required: bool
    rect: tuple[float, float, float, float]
    checked: bool | str | None
    selected: bool | None
    expanded: bool | None
    placeholder: str | None
    href: str | None
    sensitive: bool
    form: tuple[str, str, str, str] | None
    frame: str
    invalid: bool
    pressed: bool | str | None
    description: str
    opaque: str | None
    name_from: str | None
    new: bool | None

    def wire(self) -> dict[str, Any]:
        return _wire_elements((self.element_id,), (self[1:],))[0]


def _wire_elements(element_ids: Iterable[str], fields: Iterable[tuple[Any, ...]]) -> list[dict[str, Any]]:
    """What ``protocol.PageElement.to_wire`` writes for each element: ``fields`` holds
    ``SnapshotElement``'s fields after the id, in order (``options`` as (value, label,
    selected, disabled) tuples; an empty placeholder, href or opaque as none). One loop
    over all elements, one unpacking and one dict display each: a whole page lists
    thousands."""
    wired = []
    add = wired.append
    for element_id, (kind, role, type_, label, text, value, options, visible, in_viewport, disabled, readonly, required,
                     (x, y, width, height), checked, selected, expanded, placeholder, href, sensitive, form, frame, invalid,
                     pressed, description, opaque, name_from, new) in zip(element_ids, fields, strict=True):
        wire_options = [
            {"value": v, "label": t, "selected": s, "disabled": d} for v, t, s, d in options
        ] if options else []
        rect = {"x": float(x), "y": float(y), "width": float(width), "height": float(height)}
        if value is None:
            out: dict[str, Any] = {
                "elementId": element_id, "kind": kind, "role": role, "type": type_, "label": label, "text": text,
                "options": wire_options, "visible": visible, "inViewport": in_viewport, "disabled": disabled,
                "readonly": readonly, "required": required, "rect": rect,
            }
        else:
            out = {
                "elementId": element_id, "kind": kind, "role": role, "type": type_, "label": label, "text": text,
                "value": list(value) if isinstance(value, list) else value,
                "options": wire_options, "visible": visible, "inViewport": in_viewport, "disabled": disabled,
                "readonly": readonly, "required": required, "rect": rect,
            }
        if checked is not None:
            out["checked"] = checked
        if selected is not None:
            out["selected"] = selected
        if expanded is not None:
            out["expanded"] = expanded
        if placeholder:
            out["placeholder"] = placeholder
        if href:
            out["href"] = href
        out["sensitive"] = sensitive
        if form is not None:
            form_id, form_name, action, method = form
            out["form"] = {"formId": form_id, "formName": form_name, "action": action, "method": method}
        out["frame"] = frame
        out["invalid"] = invalid
        if pressed is not None:
            out["pressed"] = pressed
        out["description"] = description
        if opaque:
            out["opaque"] = opaque
        if name_from:
            out["nameFrom"] = name_from
        if new:
            out["new"] = True
        add(out)
    return wired


# The scanned element's fields that make the answer's element, in ``SnapshotElement``'s order
# after the id (by position: an item read is about twice as fast as an attribute read in
# Pyodide; the positions found by name, so the scan may add or move fields).
_ANSWER_FIELDS = ("kind", "role", "type", "label", "text", "value", "options", "visible", "in_viewport", "disabled",
                  "readonly", "required", "rect", "checked", "selected", "expanded", "placeholder", "href", "sensitive",
                  "form", "frame", "invalid", "pressed", "description", "opaque", "name_from", "new")
_ANSWER_COLUMNS = tuple(map(ScannedElement._fields.index, _ANSWER_FIELDS))
# What a line of the text form shows, in ``ElementColumns``' order after the id.
_LINE_COLUMNS = tuple(map(ScannedElement._fields.index, ElementColumns._fields[1:]))
_new_tuple = tuple.__new__  # all fields given, in order: no Python frame per tuple
_INDEX = itemgetter(ScannedElement._fields.index("index"))
_CONTROL = itemgetter(ScannedElement._fields.index("control"))
_ENTRY = itemgetter(*map(ScannedElement._fields.index, (
    "tag", "role", "type", "label", "label_source", "placeholder", "sensitive", "private", "key", "opaque",
)))
if SnapshotElement._fields[1:] != _ANSWER_FIELDS or len(ElementEntry._fields) != 12:
    raise ImportError("inspector makes SnapshotElement and ElementEntry by position: update it to their fields")


class SnapshotElements(Sequence[SnapshotElement]):
    """The elements of one answer, kept as the scan's tuples and their ids: the wire form and
    the text form are written from those, and ``SnapshotElement``s are made only when read
    (page_observe's baseline, tests). A whole page lists thousands of elements; making
    them with the refs' entries was a sixth of the Python side after the scan (Pyodide,
    8,378 nodes)."""

    __slots__ = ("element_ids", "_items", "_columns", "_made")

    def __init__(self, element_ids: list[str], items: list[ScannedElement]) -> None:
        self.element_ids = element_ids
        self._items = items
        self._columns: list[tuple[Any, ...]] | None = None  # the items' fields, a tuple each
        self._made: list[SnapshotElement] | None = None

    def __len__(self) -> int:
        return len(self.element_ids)

    @overload
    def __getitem__(self, index: int) -> SnapshotElement: ...
    @overload
    def __getitem__(self, index: slice) -> list[SnapshotElement]: ...
    def __getitem__(self, index: int | slice) -> SnapshotElement | list[SnapshotElement]:
        return self._elements()[index]

    def __iter__(self) -> Iterator[SnapshotElement]:
        return iter(self._elements())

    def wire(self) -> list[dict[str, Any]]:
        return _wire_elements(self.element_ids, self._answer_fields())

    def columns(self) -> ElementColumns:
        return ElementColumns(self.element_ids, *map(self._fields().__getitem__, _LINE_COLUMNS))

    def _fields(self) -> list[tuple[Any, ...]]:
        # One transposition (C) for the text and the wire form: iterating columns with zip
        # reuses its tuple, where an itemgetter per item makes one (-0.7 ms in Pyodide).
        if self._columns is None:
            self._columns = list(zip(*self._items, strict=True)) if self._items else [()] * len(ScannedElement._fields)
        return self._columns

    def _answer_fields(self) -> Iterator[tuple[Any, ...]]:
        return zip(*map(self._fields().__getitem__, _ANSWER_COLUMNS), strict=True)

    def _elements(self) -> list[SnapshotElement]:
        if self._made is None:
            self._made = [
                _new_tuple(SnapshotElement, (
                    element_id, kind, role, type_, label, text, value,
                    tuple(_new_tuple(SnapshotOption, option) for option in options) if options else (),
                    visible, in_viewport, disabled, readonly, required, rect, checked, selected, expanded,
                    placeholder or None, href or None, sensitive, form, frame, invalid, pressed, description, opaque or None,
                    name_from or None, new or None,
                ))
                for element_id, (kind, role, type_, label, text, value, options, visible, in_viewport, disabled, readonly,
                                 required, rect, checked, selected, expanded, placeholder, href, sensitive, form, frame,
                                 invalid, pressed, description, opaque, name_from, new)
                in zip(self.element_ids, self._answer_fields(), strict=True)
            ]
        return self._made


def _entry(items: list[ScannedElement], handles: list[Any], control_handles: dict[int, int], element_id: str,
           position: int) -> ElementEntry:
    """The ref of ``items[position]``, made when the snapshot store is first asked for it.
    ``handles``: the items' handles in order, then those of the ``control``s
    (``control_handles``: item position -> position there)."""
    tag, role, type_, label, label_source, placeholder, sensitive, private, key, opaque = _ENTRY(items[position])
    control = control_handles.get(position)
    return ElementEntry(
        element_id, handles[position], key, role, label, tag, type_, placeholder, sensitive or private, opaque,
        None if control is None else handles[control],
        label if label and label_source not in _NOT_RECHECKED else None,
    )


# Labels made from text around the element (names.py fallbacks): the element alone cannot
# recompute them, so a ref's name is not re-checked against them.
_NOT_RECHECKED = frozenset({"nearby", "inner", "stepper"})


@dataclass(frozen=True, slots=True)
class InspectResult:
    """``page_inspect``'s answer: ``protocol.PageSnapshot``'s fields; ``to_wire`` gives what
    ``PageSnapshot.to_wire`` would (the wire format is still defined by that model)."""

    snapshot_id: str
    page_version: str
    url: str
    title: str
    viewport: Viewport
    elements: SnapshotElements
    text: str | None = None
    truncated: int = 0
    sensitive_values: str = "masked"  # or "released" (SPEC P5)

    def to_wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "snapshotId": self.snapshot_id, "pageVersion": self.page_version, "url": self.url, "title": self.title,
            "viewport": self.viewport.to_wire(),
            "elements": self.elements.wire(),
        }
        if self.text is not None:
            out["text"] = self.text
        out["truncated"] = self.truncated
        out["sensitiveValues"] = self.sensitive_values
        return out

    def to_model(self) -> PageSnapshot:
        """The validated protocol model (for callers that want one; costs a validation)."""
        return PageSnapshot.model_validate(self.to_wire())
