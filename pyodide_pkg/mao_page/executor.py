"""The executor: actions with actionability checks, settle and verification (SPEC A)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

from . import facts as F
from .errors import ToolFailure
from .inspector import Inspector
from .page import Page, PageState
from .protocol import (
    ActionBatchResult,
    ErrorCode,
    PageChanges,
    PageToolRequest,
    PageToolResult,
    StepResult,
)
from .scanner import is_fillable
from .snapshots import ElementEntry, Snapshot

SUPPORTED_ACTIONS = frozenset({"click", "fill", "observe"})
HIT_TEST_BACKOFF_MS = (0, 20, 100, 250)


@dataclass(frozen=True, slots=True)
class SettlePolicy:
    """Seed 000 §4 defaults: at least 250 ms, then a 500 ms quiet window, capped at 5 s."""

    minimum_ms: float = 250
    quiet_ms: float = 500
    cap_ms: float = 5000
    poll_ms: float = 50


class Executor:
    def __init__(self, page: Page, inspector: Inspector, settle: SettlePolicy | None = None) -> None:
        self._page = page
        self._inspector = inspector
        self._settle = settle or SettlePolicy()

    def state(self) -> PageState:
        return self._inspector.state()

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
        entry, row = self._inspector.resolve(snapshot_id, action.element_id)
        if kind == "click":
            return await self._click(entry, row), entry.label, entry.element_id
        return await self._fill(entry, row, action.value), entry.label, entry.element_id

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
        latest = self._inspector.store.latest()
        return self.changes_since(latest if latest is not None else self.state())


