"""The page tools: inspect, actions (click, fill so far) and observe.

Runs against a ``Page`` (``mao_page.bridge.Page`` in the browser). Every tool answers a
``PageToolResult``; failures inside are ``ToolFailure`` and become structured errors here.
Tools whose issue has not landed answer ``unsupported`` (issue 2).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any, Protocol

from . import facts as F
from .errors import ToolFailure
from .protocol import (
    ActionBatchResult,
    ErrorCode,
    FormOwner,
    InspectOptions,
    PageChanges,
    PageElement,
    PageOption,
    PageSnapshot,
    PageToolRequest,
    PageToolResult,
    Rect,
    StepResult,
    ToolName,
    Viewport,
)
from .render import render_text
from .roles import role_of
from .scanner import Viewport as ScanViewport
from .scanner import is_fillable, key_of, scan
from .snapshots import ElementEntry, Snapshot, SnapshotStore, suggest_replacement

SUPPORTED_ACTIONS = frozenset({"click", "fill", "observe"})


class Page(Protocol):
    """What the tools need from the DOM (implemented by ``bridge.Page``)."""

    def collect_main_document(self) -> Any: ...
    def row_of(self, handle: Any) -> list[Any]: ...
    def is_connected(self, handle: Any) -> bool: ...
    def is_rendered(self, handle: Any) -> bool: ...
    def read_value(self, handle: Any) -> str: ...
    def hit_test(self, handle: Any) -> dict[str, Any]: ...
    def viewport(self) -> list[float]: ...
    def counters(self) -> tuple[int, int, float, str, str]: ...
    def scroll_into_view(self, handle: Any) -> bool: ...
    def click(self, handle: Any, x: float, y: float) -> None: ...
    def fill(self, handle: Any, value: str) -> str: ...
    async def next_frame(self) -> None: ...


@dataclass(frozen=True, slots=True)
class SettlePolicy:
    """Seed 000 §4 defaults: at least 250 ms, then a 500 ms quiet window, capped at 5 s."""

    minimum_ms: float = 250
    quiet_ms: float = 500
    cap_ms: float = 5000
    poll_ms: float = 50


@dataclass(frozen=True, slots=True)
class PageState:
    mutations: int
    navigations: int
    url: str
    title: str

    @property
    def version(self) -> str:
        return f"{self.navigations}.{self.mutations}"


HIT_TEST_BACKOFF_MS = (0, 20, 100, 250)


class PageTools:
    def __init__(self, page: Page, store: SnapshotStore, settle: SettlePolicy | None = None) -> None:
        self._page = page
        self._store = store
        self._settle = settle or SettlePolicy()

    # -- state --------------------------------------------------------------------------

    def state(self) -> PageState:
        mutations, navigations, _quiet, url, title = self._page.counters()
        return PageState(mutations, navigations, url, title)

    def page_version(self) -> str:
        return self.state().version

    async def run(self, request: PageToolRequest) -> PageToolResult:
        try:
            if request.tool is ToolName.INSPECT:
                snapshot = self.inspect(request.inspect or InspectOptions())
                return PageToolResult(
                    request_id=request.request_id,
                    success=True,
                    page_version=snapshot.page_version,
                    snapshot_id=snapshot.snapshot_id,
                    result=snapshot.to_wire(),
                )
            if request.tool is ToolName.SCREENSHOT:
                raise ToolFailure(ErrorCode.UNSUPPORTED, "page_screenshot is not available in this version yet")
            return await self.run_actions(request)
        except ToolFailure as failure:
            return PageToolResult(
                request_id=request.request_id,
                success=False,
                page_version=self.page_version(),
                error=failure.to_error(),
            )

    # -- inspect (SPEC S1-S8) -----------------------------------------------------------

    def inspect(self, options: InspectOptions) -> PageSnapshot:
        before = self.state()
        facts = self._page.collect_main_document()
        try:
            width, height, scroll_x, scroll_y, ratio = self._page.viewport()
            scanned = scan(
                facts.rows,
                ScanViewport(width, height, scroll_x, scroll_y, ratio),
                include_offscreen=options.include_offscreen,
            )
            snapshot = self._store.create(
                page_version=before.version,
                navigation_epoch=before.navigations,
                url=before.url,
                title=before.title,
                mutations=before.mutations,
            )
            elements = []
            for item in scanned:
                element_id = self._store.add(
                    snapshot,
                    handle=facts.handle(item.index),
                    key=item.key,
                    role=item.role,
                    label=item.label,
                    tag=item.tag,
                    type=item.type,
                    placeholder=item.placeholder,
                    sensitive=item.sensitive or item.private,
                )
                elements.append(_page_element(element_id, item))
        finally:
            facts.release()
        text = None
        truncated = 0
        if options.format == "text":
            text, truncated = render_text(
                url=before.url, title=before.title, snapshot_id=snapshot.snapshot_id,
                elements=elements, max_tokens=options.max_tokens,
            )
        return PageSnapshot(
            snapshot_id=snapshot.snapshot_id,
            page_version=before.version,
            url=before.url,
            title=before.title,
            viewport=Viewport(width=width, height=height, scroll_x=scroll_x, scroll_y=scroll_y, device_pixel_ratio=ratio),
            elements=elements,
            text=text,
            truncated=truncated,
        )

    # -- actions (SPEC A1-A5) -----------------------------------------------------------

    async def run_actions(self, request: PageToolRequest) -> PageToolResult:
        start = self.state()
        steps: list[StepResult] = []
        stopped_at: int | None = None
        error = None
        actions = request.actions or []
        for index, action in enumerate(actions):
            began = time.monotonic()
            current = self.state()
            if index > 0 and current.navigations != start.navigations:
                # A5: a navigation ends the batch; the remaining steps were not run.
                stopped_at = index
                error = ToolFailure(
                    ErrorCode.NAVIGATED,
                    f"the page navigated during the batch; {len(actions) - index} remaining action(s) were not run",
                ).to_error()
                break
            try:
                outcome, label, element_id = await self._act(action, request.snapshot_id)
                steps.append(StepResult(
                    index=index, action=action.action, element_id=element_id, success=True,
                    duration_ms=round((time.monotonic() - began) * 1000, 1), target_label=label, outcome=outcome,
                ))
            except ToolFailure as failure:
                element_id = getattr(action, "element_id", None)
                steps.append(StepResult(
                    index=index, action=action.action, element_id=element_id, success=False,
                    duration_ms=round((time.monotonic() - began) * 1000, 1), error=failure.to_error(),
                ))
                stopped_at = index
                error = failure.to_error()
                break
        changes = self.changes_since(start)
        return PageToolResult(
            request_id=request.request_id,
            success=error is None,
            page_version=changes.page_version,
            result=ActionBatchResult(steps=steps, changes=changes).to_wire(),
            stopped_at=stopped_at,
            error=error,
        )

    async def _act(self, action: Any, default_snapshot: str | None) -> tuple[dict[str, Any], str, str | None]:
        kind = action.action
        if kind not in SUPPORTED_ACTIONS:
            raise ToolFailure(ErrorCode.UNSUPPORTED, f"the {kind} action is not available in this version yet")
        if kind == "observe":
            return self.observe().to_wire(), "", None
        snapshot_id = action.snapshot_id or default_snapshot
        entry, row = self._resolve(snapshot_id, action.element_id)
        if kind == "click":
            return await self._click(entry, row), entry.label, entry.element_id
        return await self._fill(entry, row, action.value), entry.label, entry.element_id

    def _resolve(self, snapshot_id: str, element_id: str) -> tuple[ElementEntry, list[Any]]:
        state = self.state()
        _snapshot, entry = self._store.resolve(
            snapshot_id, element_id, navigation_epoch=state.navigations, url=state.url
        )
        if not self._page.is_connected(entry.handle):
            raise self._stale(entry, "the element is no longer in the page")
        row = self._page.row_of(entry.handle)
        if key_of(row, role_of(row)) != entry.key:
            raise self._stale(entry, "the element's role, type or label changed")
        return entry, row

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

    async def _actionable(self, entry: ElementEntry, row: list[Any], *, editable: bool = False) -> tuple[float, float]:
        """SPEC A2, like Playwright's actionability: visible, enabled, editable, stable,
        scrolled into view, and receiving the pointer at its centre."""
        handle = entry.handle
        if not self._page.is_rendered(handle):
            raise ToolFailure(ErrorCode.NOT_VISIBLE, f"{entry.label or entry.role} is not visible", element_id=entry.element_id)
        if row[F.DISABLED] or row[F.ARIA_DISABLED] == "true":
            raise ToolFailure(ErrorCode.NOT_ENABLED, f"{entry.label or entry.role} is disabled", element_id=entry.element_id)
        if editable and (row[F.READONLY] or row[F.ARIA_READONLY] == "true"):
            raise ToolFailure(ErrorCode.NOT_EDITABLE, f"{entry.label or entry.role} is read-only", element_id=entry.element_id)
        self._page.scroll_into_view(handle)
        await self._wait_stable(entry)
        hit: dict[str, Any] = {}
        for delay in HIT_TEST_BACKOFF_MS:
            if delay:
                await asyncio.sleep(delay / 1000)
            hit = self._page.hit_test(handle)
            if hit["ok"]:
                return hit["x"], hit["y"]
        raise ToolFailure(
            ErrorCode.OBSCURED,
            f"{entry.label or entry.role} is covered by {hit.get('hit', 'another element')}",
            element_id=entry.element_id,
            details={"coveredBy": hit.get("hit", "")},
        )

    async def _wait_stable(self, entry: ElementEntry, attempts: int = 10) -> None:
        previous = None
        for _ in range(attempts):
            await self._page.next_frame()
            row = self._page.row_of(entry.handle)
            box = (row[F.X], row[F.Y], row[F.WIDTH], row[F.HEIGHT])
            if box == previous:
                return
            previous = box
        raise ToolFailure(ErrorCode.NOT_STABLE, f"{entry.label or entry.role} kept moving", element_id=entry.element_id)

    async def _click(self, entry: ElementEntry, row: list[Any]) -> dict[str, Any]:
        before = self.state()
        x, y = await self._actionable(entry, row)
        self._page.click(entry.handle, x, y)
        settled = await self.settle()
        changes = self.changes_since(before)
        return {"clicked": True, "settle": settled, "changes": changes.to_wire()}

    async def _fill(self, entry: ElementEntry, row: list[Any], value: str) -> dict[str, Any]:
        if not is_fillable(row):
            raise ToolFailure(ErrorCode.NOT_EDITABLE, f"{entry.label or entry.role} cannot be filled", element_id=entry.element_id)
        await self._actionable(entry, row, editable=True)
        immediate = self._page.fill(entry.handle, value)
        settled = await self.settle()
        final = self._page.read_value(entry.handle)
        if final == value:
            status = "applied"
        elif final in ("", row[F.VALUE]) and value != "":
            raise ToolFailure(
                ErrorCode.VERIFICATION_FAILED,
                f"the page reverted the value of {entry.label or entry.role}",
                element_id=entry.element_id,
                details={"status": "reverted", "immediate": immediate == value},
            )
        else:
            status = "reformatted"
        outcome: dict[str, Any] = {"status": status, "settle": settled}
        if not entry.sensitive:  # SPEC P5: never echo a sensitive value
            outcome["value"] = final
        return outcome

    async def settle(self) -> dict[str, Any]:
        """Wait for the page to go quiet (SPEC A4): minimum, quiet window, cap."""
        policy = self._settle
        began = time.monotonic()
        await asyncio.sleep(policy.minimum_ms / 1000)
        while True:
            _m, _n, quiet_ms, _u, _t = self._page.counters()
            elapsed = (time.monotonic() - began) * 1000
            if quiet_ms >= policy.quiet_ms:
                return {"waitedMs": round(elapsed), "capped": False}
            if elapsed >= policy.cap_ms:
                return {"waitedMs": round(elapsed), "capped": True}
            await asyncio.sleep(policy.poll_ms / 1000)

    # -- observe (seed 004 §6.6) --------------------------------------------------------

    def changes_since(self, before: PageState | Snapshot) -> PageChanges:
        now = self.state()
        if isinstance(before, Snapshot):
            ref_url, ref_title, ref_version = before.url, before.title, before.page_version
            ref_nav, ref_mut = before.navigation_epoch, before.mutations
        else:
            ref_url, ref_title, ref_version = before.url, before.title, before.version
            ref_nav, ref_mut = before.navigations, before.mutations
        return PageChanges(
            url=now.url,
            title=now.title,
            page_version=now.version,
            url_changed=now.url != ref_url,
            title_changed=now.title != ref_title,
            page_version_changed=now.version != ref_version,
            navigated=now.navigations != ref_nav or now.url != ref_url,
            mutations=max(0, now.mutations - ref_mut) if now.navigations == ref_nav else now.mutations,
        )

    def observe(self) -> PageChanges:
        latest = self._store.latest()
        return self.changes_since(latest if latest is not None else self.state())


def _page_element(element_id: str, item: Any) -> PageElement:
    return PageElement(
        element_id=element_id,
        kind=item.kind,
        role=item.role,
        type=item.type,
        label=item.label,
        text=item.text,
        value=item.value,
        options=[PageOption(value=v, label=text, selected=s, disabled=d) for v, text, s, d in item.options],
        visible=item.visible,
        in_viewport=item.in_viewport,
        disabled=item.disabled,
        readonly=item.readonly,
        required=item.required,
        rect=Rect(x=item.rect[0], y=item.rect[1], width=item.rect[2], height=item.rect[3]),
        checked=item.checked,
        selected=item.selected,
        expanded=item.expanded,
        placeholder=item.placeholder or None,
        href=item.href or None,
        sensitive=item.sensitive,
        form=FormOwner(form_id=item.form[0], form_name=item.form[1], action=item.form[2], method=item.form[3]) if item.form else None,
    )
