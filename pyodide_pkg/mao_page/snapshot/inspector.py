"""The snapshot engine's entry point: ``page_inspect`` and ref resolution (SPEC S, R)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from ..bridge.page import Page, PageState, read_state
from ..dom import facts as F
from ..dom.index import DocumentIndex
from ..errors import ToolFailure
from ..protocol import InspectOptions, PageSnapshot, PageToolRequest, Viewport
from ..supervision.sensitive import is_sensitive
from . import refs
from .element import Element, SnapshotElements
from .render import ElementColumns, render_text
from .scanner import Scan, element_label, scan_page
from .store import ElementEntry, SnapshotStore


class SensitiveRelease(Protocol):
    """Decides whether a ``page_inspect`` asking for sensitive values (``maskSensitive:
    false``) gets them (SPEC P5): the authorization center plugs in here
    (``Supervisor.release_sensitive_values``). Raises ``ToolFailure`` to refuse."""

    async def release_sensitive_values(self, request: PageToolRequest) -> bool: ...


class KeepSensitiveMasked:
    """Without an authorization center (tests of the tools alone) nothing is released."""

    async def release_sensitive_values(self, request: PageToolRequest) -> bool:
        return False


class ElementDescription(NamedTuple):
    """A live element named by the scan's rules without a snapshot: the element
    ``page_keyboard`` types into when it has no ref (the focused one). Not an ``Element``:
    nothing of its box, state or value is read, so it holds only the fields of ``Element``
    that name it, under their names (tests/page/test_inspector.py holds them equal)."""

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
        self,
        *,
        include_offscreen: bool = False,
        outline: bool = False,
        viewport_only: bool = False,
        release_sensitive: bool = False,
        snapshot: bool = False,
        mark_new: bool = False,
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
        with self.live_scan(
            include_offscreen=options.include_offscreen,
            outline=options.format == "text",
            viewport_only=not options.include_offscreen,
            release_sensitive=release_sensitive,
            snapshot=True,
            mark_new=mark_new,
        ) as (facts, scanned, viewport):
            snapshot = self._store.create(
                page_version=before.version,
                navigation_epoch=before.navigations,
                url=before.url,
                title=before.title,
                mutations=before.mutations,
            )
            items = scanned.elements
            elements = SnapshotElements(self._store.new_ids(snapshot, len(items)), items)
            _add_refs(snapshot, elements.element_ids, items, facts)
        text = None
        truncated = 0
        if options.format == "text":
            text, truncated = render_text(
                url=before.url, title=before.title, snapshot_id=snapshot.snapshot_id,
                elements=ElementColumns.of(elements.element_ids, elements.column),
                max_tokens=options.max_tokens, outline=scanned.outline,
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
        """The live element behind a ref and a fresh fact row of it, or a refusal
        (``refs.resolve`` has the rule)."""
        return refs.resolve(self._page, self._store, snapshot_id, element_id, self._fresh_refs)

    def _fresh_refs(self) -> tuple[str, list[ElementEntry]] | None:
        """A fresh whole-page snapshot's id and refs, for the suggestion that goes with a
        stale ref (SPEC R3); None when the page cannot be inspected now."""
        try:
            fresh = self.inspect(InspectOptions(include_offscreen=True))
        except ToolFailure:
            return None
        snapshot = refs.snapshot_of(self._store, fresh.snapshot_id)
        return fresh.snapshot_id, list(snapshot.entries.values())

    def describe(self, handle: Any) -> ElementDescription | None:
        """Role, accessible name, tag, type and sensitivity of a live element (one small
        crossing: its subtree, labels and aria-labelledby targets); None for the body and the
        root element, which is where keys go when nothing has focus."""
        facts, roots, hidden, aliases = self._page.collect_name_sources(handle)
        try:
            row = facts.rows[0]
            if row[F.TAG] in ("body", "html"):
                return None
            doc = DocumentIndex(
                facts.rows, roots=list(zip(roots, hidden, strict=True)), aliases=aliases
            )
            label = element_label(0, doc)[0]
            return ElementDescription(role=doc.role(0) or "generic", label=label, tag=row[F.TAG],
                                      type=row[F.TYPE] if row[F.TAG] in ("input", "button") else "",
                                      sensitive=is_sensitive(row, label))
        finally:
            facts.release()


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for one ``page_inspect``: a whole-page scan makes
    tens of thousands of tuples and lists that all live on and hold no cycles, and the
    collections they start re-walk them for nothing (the whole-page call 0.90-0.92x its CPU
    time with the pause, docs/performance.md). What the call leaves behind is freed by
    reference counting; any cycle waits for the next collection. Nothing changes if the
    collector was already off."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _add_refs(snapshot: Any, element_ids: list[str], items: list[Element], facts: Any) -> None:
    """The refs of a snapshot's elements, made when first asked for: the listed elements'
    handles, then those of the real inputs behind custom checkboxes."""
    with_control = [position for position, item in enumerate(items) if item.control is not None]
    controls = [items[position].control for position in with_control]
    handles = facts.handles([*(item.index for item in items), *controls])
    control_handles = dict(zip(with_control, handles[len(items):], strict=True))

    def make(element_id: str, position: int) -> ElementEntry:
        return ElementEntry(
            element_id, handles[position], items[position], control_handles.get(position)
        )

    snapshot.entries.add_records(element_ids, make, handles)


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
            "snapshotId": self.snapshot_id,
            "pageVersion": self.page_version,
            "url": self.url,
            "title": self.title,
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
