"""What changed on the page: the observe baseline, before/after diffs of the interactive
elements and the structural-change rule that stops a batch (SPEC A4, A5)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..bridge.page import Page, PageState, read_state
from ..dom import facts as F
from ..protocol import PageChanges, PageDialog
from ..snapshot.store import ElementEntry, Snapshot

if TYPE_CHECKING:
    from ..snapshot.element import SnapshotElement
    from ..snapshot.inspector import Inspector, InspectResult

Signature = tuple[str, str, str, str]
Summary = list[tuple[Signature, tuple[Any, ...]]]


@dataclass(slots=True)
class Baseline:
    """What the agent saw at its last snapshot, for ``page_observe``. The summary is made
    when an observe compares with it, not at every ``page_inspect``: a whole-page snapshot
    lists thousands of elements, and summarising them showed in its profile."""

    snapshot_id: str
    include_offscreen: bool
    elements: Sequence[SnapshotElement]  # element.SnapshotElements: made when read
    messages: list[tuple[str, str]]

    @property
    def summary(self) -> Summary:
        # The tag is not part of the wire model; a live scan's summary has the real tag, so
        # both sides compare on what they know (role, label, type) with the tag left out.
        return [
            (
                (e.role, e.label, "", e.type),
                (_masked_value(e), e.checked, e.expanded, e.selected, e.disabled),
            )
            for e in self.elements
        ]


@dataclass(slots=True)
class EffectBaseline:
    """The page just before one act, for telling whether the act did anything at all."""

    state: PageState
    probe: Any  # Page.effect_probe(): focus, control values, scroll
    target: dict[str, Any]


class ChangeTracker:
    def __init__(self, page: Page, inspector: Inspector) -> None:
        self._page = page
        self._inspector = inspector
        self._baseline: Baseline | None = None

    def state(self) -> PageState:
        return read_state(self._page)

    def summary(self, *, include_offscreen: bool) -> Summary:
        """Interactive elements of the page as (signature, state) pairs; no snapshot is made,
        so the agent's refs are untouched."""
        with self._inspector.live_scan(include_offscreen=include_offscreen) as (
            _facts,
            scanned,
            _viewport,
        ):
            items = scanned.elements
        return [
            (
                (item.role, item.label, item.tag, item.type),
                (item.value, item.checked, item.expanded, item.selected, item.disabled),
            )
            for item in items
        ]

    def messages(self) -> list[tuple[str, str]]:
        return [(kind, text) for kind, text in self._page.live_messages()]

    def target_state(self, entry: ElementEntry) -> dict[str, Any]:
        """The acted-on element's own checked/expanded state, or that it left the page."""
        if not self._page.is_connected(entry.handle):
            return {"targetRemoved": True}
        row = self._page.row_of(entry.handle)
        state: dict[str, Any] = {}
        checked = checked_of(row)
        if checked is not None:
            state["checked"] = checked
        if row[F.ARIA_EXPANDED] in ("true", "false"):
            state["expanded"] = row[F.ARIA_EXPANDED] == "true"
        return state

    def effect_baseline(self, entry: ElementEntry) -> EffectBaseline:
        return EffectBaseline(self.state(), self._page.effect_probe(), self.target_state(entry))

    def effects(
        self, baseline: EffectBaseline, entry: ElementEntry, *, dialogs: int = 0
    ) -> dict[str, Any]:
        """``{"effect": "none"}`` when nothing observable happened since ``baseline``, else
        ``{"effect": "changed", "effects": [...]}`` naming what did: ``url`` / ``navigation``,
        ``dom`` (mutations), ``focus`` (moved elsewhere than the acted-on element), ``values``
        (form control values or checked states), ``scroll``, ``state`` (the element's own
        checked / expanded state, or it left the page), ``dialog``."""
        now = self.state()
        effects: list[str] = []
        if now.url != baseline.state.url:
            effects.append("url")
        elif now.navigations != baseline.state.navigations:
            effects.append("navigation")
        if now.mutations != baseline.state.mutations:
            effects.append("dom")
        effects.extend(self._page.effects_since(baseline.probe, entry.handle))
        if self.target_state(entry) != baseline.target:
            effects.append("state")
        if dialogs:
            effects.append("dialog")
        return {"effect": "changed", "effects": effects} if effects else {"effect": "none"}

    def changes_since(
        self,
        before_state: PageState | Snapshot,
        *,
        before: Summary | None = None,
        messages_before: list[tuple[str, str]] | None = None,
        dialogs: list[PageDialog] | None = None,
        include_offscreen: bool = True,
    ) -> PageChanges:
        now = self.state()
        if isinstance(before_state, Snapshot):
            ref_url, ref_title, ref_version = (
                before_state.url,
                before_state.title,
                before_state.page_version,
            )
            ref_nav, ref_mut = before_state.navigation_epoch, before_state.mutations
        else:
            ref_url, ref_title, ref_version = (
                before_state.url,
                before_state.title,
                before_state.version,
            )
            ref_nav, ref_mut = before_state.navigations, before_state.mutations
        added = removed = updated = 0
        if before is not None:
            added, removed, updated = diff(
                before, self.summary(include_offscreen=include_offscreen)
            )
        messages: list[str] = []
        if messages_before is not None:
            seen = set(messages_before)
            messages = [
                f"{kind}: {text}" for kind, text in self.messages() if (kind, text) not in seen
            ]
        return PageChanges(
            url=now.url,
            title=now.title,
            page_version=now.version,
            url_changed=now.url != ref_url,
            title_changed=now.title != ref_title,
            page_version_changed=now.version != ref_version,
            navigated=now.navigations != ref_nav or now.url != ref_url,
            mutations=max(0, now.mutations - ref_mut)
            if now.navigations == ref_nav
            else now.mutations,
            messages=messages,
            added=added,
            removed=removed,
            updated=updated,
            dialogs=dialogs or [],
        )

    def remember_snapshot(self, snapshot: InspectResult, include_offscreen: bool) -> None:
        """Called after each page_inspect: the baseline ``page_observe`` compares with."""
        self._baseline = Baseline(
            snapshot_id=snapshot.snapshot_id,
            include_offscreen=include_offscreen,
            elements=snapshot.elements,
            messages=self.messages(),
        )

    def observe(self) -> PageChanges:
        """What changed since the last snapshot (SPEC A5)."""
        latest = self._inspector.store.latest()
        baseline = self._baseline
        if latest is None:
            return self.changes_since(self.state())
        if baseline is None or baseline.snapshot_id != latest.snapshot_id:
            return self.changes_since(latest)
        return self.changes_since(
            latest,
            before=baseline.summary,
            messages_before=baseline.messages,
            include_offscreen=baseline.include_offscreen,
        )


def _masked_value(element: Any) -> Any:
    """A snapshot element's value as a live scan (always masked) reports it, so a snapshot
    with released sensitive values (SPEC P5) does not show them as changed in page_observe."""
    if element.sensitive and element.value not in (None, ""):
        return None
    return element.value


def checked_of(row: list[Any]) -> bool | None:
    """A native or ARIA checked state; None for an element that has none."""
    if row[F.CHECKED] >= 0:
        return row[F.CHECKED] == 1
    if row[F.ARIA_CHECKED] in ("true", "false"):
        return row[F.ARIA_CHECKED] == "true"
    if row[F.CLASS_STATE]:  # a switch stating its state only in its class names
        return "checked" in row[F.CLASS_STATE].split()
    return None


def dialog_count(messages: list[tuple[str, str]]) -> int:
    return sum(1 for kind, _text in messages if kind in ("dialog", "alertdialog"))


def diff(before: Summary, after: Summary) -> tuple[int, int, int]:
    """(added, removed, updated) between two summaries, pairing by signature in order; the
    tag is left out of the pairing (a snapshot's elements do not carry it)."""

    def grouped(summary: Summary) -> dict[Signature, list[tuple[Any, ...]]]:
        out: dict[Signature, list[tuple[Any, ...]]] = {}
        for (role, label, _tag, kind), state in summary:
            out.setdefault((role, label, "", kind), []).append(state)
        return out

    old, new = grouped(before), grouped(after)
    added = removed = updated = 0
    for signature in old.keys() | new.keys():
        a, b = old.get(signature, []), new.get(signature, [])
        common = min(len(a), len(b))
        updated += sum(1 for i in range(common) if a[i] != b[i])
        added += max(0, len(b) - common)
        removed += max(0, len(a) - common)
    return added, removed, updated


def structural_change(
    before: Summary, after: Summary, dialogs_before: int, dialogs_now: int
) -> str | None:
    """A5: a dialog opened, or most of the elements the batch was planned against are gone.
    Either way the remaining steps' refs describe a page that no longer exists."""
    if dialogs_now > dialogs_before:
        return "a dialog opened"
    if not before:
        return None
    _added, removed, _updated = diff(before, after)
    if removed > max(3, len(before) // 2):
        return f"{removed} of the {len(before)} interactive elements went away"
    return None
