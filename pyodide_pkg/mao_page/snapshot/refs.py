"""How a ref goes stale (SPEC R1-R3, S6): the whole rule in one place.

A ref (``snapshotId`` + ``elementId``) is checked each time it is used, in this order:

1. the snapshot is unknown, expired or evicted (``snapshot_of``): ``stale_ref``; with reason
   ``navigated`` when its id names another document of the tab (the tab loaded a new page,
   SPEC B7);
2. the page navigated since (navigation counter or URL, ``entry_of``): ``stale_ref`` with
   reason ``navigated``; an elementId the snapshot never had: ``not_found``;
3. the ref is a placeholder (cross-origin frame, closed shadow root): its own code;
4. the element, or the real input behind a custom checkbox, left the DOM; its key
   (``element.key_of``) differs from the one the scan recorded; or its accessible name changed
   (``name_changed``): ``stale_ref`` (``live_problem``).

A stale ref is refused, never re-targeted: ``resolve`` takes a fresh snapshot and ``stale``
names a unique match from it in ``details.suggestion`` (``suggest_replacement``), which only
the agent may act on. The key is ``element.key_of`` (the scan builds the same keys a column
at a time with ``element.keys_of``, so a fresh ref never reads as stale).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from operator import attrgetter
from typing import Any

from ..bridge.page import Page, read_state
from ..dom.index import DocumentIndex
from ..dom.roles import role_of
from ..errors import ToolFailure
from ..protocol import ErrorCode
from .element import Element, key_of
from .scanner import element_label
from .store import ElementEntry, Snapshot, SnapshotStore, document_of

# Label sources made from text around the element (dom/names.py fallbacks): the element alone
# cannot recompute them, so a ref's name is not re-checked against them.
NOT_RECHECKED = frozenset({"nearby", "inner", "stepper"})

_OPAQUE_REFUSALS = {
    "cross_origin_frame": (
        ErrorCode.CROSS_ORIGIN_FRAME,
        "this is a cross-origin frame; the page's security rules keep its content out of reach",
    ),
    "closed_shadow_root": (
        ErrorCode.CLOSED_SHADOW_ROOT,
        "this element renders a closed shadow root; its content cannot be read or operated",
    ),
}


def checked_name(element: Element) -> str | None:
    """The accessible name to re-check before acting through a ref to ``element``: its label,
    or None when the label was text around it (``NOT_RECHECKED``) or there is none."""
    label = element.label
    return label if label and element.label_source not in NOT_RECHECKED else None


def snapshot_of(store: SnapshotStore, snapshot_id: str) -> Snapshot:
    """The snapshot behind an id, or ``stale_ref`` when it is unknown, expired or evicted."""
    snapshot = store.find(snapshot_id)
    if snapshot is None:
        other = document_of(snapshot_id)
        if other is not None and store.document_tag and other != store.document_tag:
            raise ToolFailure(
                ErrorCode.STALE_REF,
                f"snapshot {snapshot_id} was taken on an earlier page of this tab; the tab has "
                "navigated since. Call page_inspect again",
                details={"reason": "navigated"},
            )
        raise ToolFailure(
            ErrorCode.STALE_REF,
            f"snapshot {snapshot_id} is unknown, expired or was evicted; call page_inspect again",
        )
    return snapshot


def entry_of(
    store: SnapshotStore, snapshot_id: str, element_id: str, *, navigation_epoch: int, url: str
) -> tuple[Snapshot, ElementEntry]:
    """The entry behind a ref, or ``stale_ref`` (unknown snapshot, navigated) / ``not_found``.
    The element itself is checked by ``resolve``, which can read the DOM."""
    snapshot = snapshot_of(store, snapshot_id)
    if snapshot.navigation_epoch != navigation_epoch or snapshot.url != url:
        raise ToolFailure(
            ErrorCode.STALE_REF,
            "the page navigated since this snapshot; call page_inspect again",
            element_id=element_id,
            details={"reason": "navigated"},
        )
    entry = snapshot.entries.get(element_id)
    if entry is None:
        raise ToolFailure(
            ErrorCode.NOT_FOUND,
            f"no element {element_id} in snapshot {snapshot_id}",
            element_id=element_id,
        )
    return snapshot, entry


def resolve(
    page: Page,
    store: SnapshotStore,
    snapshot_id: str,
    element_id: str,
    fresh_refs: Callable[[], tuple[str, list[ElementEntry]] | None],
) -> tuple[ElementEntry, list[Any]]:
    """The live element behind a ref, or a refusal (steps 1-4 of the module docstring).
    Returns the entry and a fresh fact row of the element (of the real input for a custom
    checkbox, whose ``handle`` is the label to click). ``fresh_refs``: a fresh snapshot's id
    and refs, for the suggestion when the ref is stale (None when none could be taken)."""
    state = read_state(page)
    _snapshot, entry = entry_of(
        store, snapshot_id, element_id, navigation_epoch=state.navigations, url=state.url
    )
    if entry.element.opaque:
        code, message = _OPAQUE_REFUSALS[entry.element.opaque]
        raise ToolFailure(code, message + "; nothing was done", element_id=entry.element_id)
    row, problem = live_problem(page, entry)
    if problem:
        raise stale(entry, problem, fresh_refs())
    return entry, row


def live_problem(page: Page, entry: ElementEntry) -> tuple[list[Any], str]:
    """(a fresh row of the element, "") while the entry still stands for it, else ([], why
    not): left the DOM, key changed, accessible name changed."""
    subject = entry.control if entry.control is not None else entry.handle
    if not page.is_connected(entry.handle) or not page.is_connected(subject):
        return [], "the element is no longer in the page"
    row = page.row_of(subject)
    if key_of(row, role_of(row)) != entry.element.key:
        return row, "the element's role, type or label changed"
    name = checked_name(entry.element)
    if name is not None and name_changed(page, subject, name, hidden_ok=entry.control is not None):
        return row, "the element's accessible name changed"
    return row, ""


def name_changed(page: Page, handle: Any, name: str, *, hidden_ok: bool) -> bool:
    """Whether the element's label differs from ``name``, computed by the scan's own code:
    first over the rows of its subtree, labels and aria-labelledby targets only (one small
    crossing); if that differs, over a full walk, so that context the partial rows lack (an
    aria-hidden ancestor, a huge subtree) never makes a live ref stale."""
    facts, roots, hidden, aliases = page.collect_name_sources(handle)
    try:
        doc = DocumentIndex(
            facts.rows, roots=list(zip(roots, hidden, strict=True)), aliases=aliases
        )
        if element_label(0, doc, hidden_ok=hidden_ok)[0] == name:
            return False
    finally:
        facts.release()
    walk = page.collect_main_document()
    try:
        index = walk.index_of(handle)
        if index < 0:
            return True
        return element_label(index, DocumentIndex(walk.rows), hidden_ok=hidden_ok)[0] != name
    finally:
        walk.release()


_matched = attrgetter("role", "label", "tag", "type", "placeholder")


def suggest_replacement(entry: ElementEntry, candidates: Iterable[ElementEntry]) -> str | None:
    """SPEC R3: a unique match on role, label, tag, type and placeholder, or nothing.
    Only ever suggested to the agent; never acted on."""
    wanted = _matched(entry.element)
    matches = [c for c in candidates if _matched(c.element) == wanted and not c.element.opaque]
    return matches[0].element_id if len(matches) == 1 else None


def stale(
    entry: ElementEntry, reason: str, fresh: tuple[str, list[ElementEntry]] | None
) -> ToolFailure:
    """SPEC R2/R3: the refusal of a stale ref, with a unique match from ``fresh`` (a fresh
    snapshot's id and refs) as the suggestion."""
    details: dict[str, Any] = {"reason": reason}
    if fresh is not None:
        snapshot_id, candidates = fresh
        suggestion = suggest_replacement(entry, candidates)
        if suggestion is not None:
            details["suggestion"] = {
                "snapshotId": snapshot_id,
                "elementId": suggestion,
                "label": entry.label,
                "role": entry.role,
            }
    return ToolFailure(
        ErrorCode.STALE_REF,
        f"{reason}; the ref is stale and nothing was done. Call page_inspect again"
        + (
            " (a likely replacement is in details.suggestion; verify before using it)"
            if "suggestion" in details
            else ""
        ),
        element_id=entry.element_id,
        details=details,
    )
