"""The batch runner (SPEC A5): ordered steps, each resolved, authorized, run by its action
module and recorded; the batch stops at the first failure, a navigation, or a structural
change of the page it was planned against."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from ..bridge.page import Page, PageState
from ..errors import ToolFailure
from ..protocol import (
    ActionBatchResult,
    CheckAction,
    ClickAction,
    DragAction,
    ErrorCode,
    FillAction,
    FocusAction,
    HoverAction,
    KeyboardAction,
    ObserveAction,
    PageChanges,
    PageToolRequest,
    PageToolResult,
    ScrollAction,
    SelectAction,
    StepResult,
    ToolError,
    UncheckAction,
    WaitAction,
    WireModel,
)
from ..snapshot.inspector import Inspector, InspectResult
from ..snapshot.store import ElementEntry, Snapshot
from . import check, click, drag, fill, focus, hover, keyboard, scroll, select, wait
from .changes import ChangeTracker, Summary, dialog_count, structural_change
from .context import ActingListener, ActionContext, StepRecord, Target
from .settle import SettlePolicy


class Authorizer(Protocol):
    """Decides whether one step may run (the authorization center plugs in here, SPEC P).
    Raises ``ToolFailure`` (permission_denied, user_rejected, ...) to refuse."""

    async def __call__(self, action: Any, entry: ElementEntry | None) -> None: ...


async def allow_everything(action: Any, entry: ElementEntry | None) -> None:
    return None


StepListener = Callable[[str, dict[str, Any]], None]
Handler = Callable[[ActionContext, Any, Target | None], Awaitable[dict[str, Any]]]


@dataclass(frozen=True, slots=True)
class ActionSpec:
    """How the runner treats one action class.

    ``ref``: "required", "optional" or "none" (the action takes no element).
    ``writes``: may change the page, so the batch records the page before it.
    ``restructures``: may change the page's structure, so the next step checks first."""

    run: Handler
    ref: str = "required"
    writes: bool = True
    restructures: bool = True


async def _observe(
    ctx: ActionContext, action: ObserveAction, target: Target | None
) -> dict[str, Any]:
    return ctx.changes.observe().to_wire()


DISPATCH: dict[type[WireModel], ActionSpec] = {
    ClickAction: ActionSpec(click.run),
    HoverAction: ActionSpec(hover.run),
    DragAction: ActionSpec(drag.run),
    FocusAction: ActionSpec(focus.run, restructures=False),
    FillAction: ActionSpec(fill.run),
    SelectAction: ActionSpec(select.run),
    CheckAction: ActionSpec(check.check),
    UncheckAction: ActionSpec(check.uncheck),
    ScrollAction: ActionSpec(scroll.run, ref="optional", restructures=False),
    KeyboardAction: ActionSpec(keyboard.run, ref="optional"),
    WaitAction: ActionSpec(wait.run, ref="none", writes=False, restructures=False),
    ObserveAction: ActionSpec(_observe, ref="none", writes=False, restructures=False),
}


class BatchRunner:
    def __init__(
        self,
        page: Page,
        inspector: Inspector,
        settle: SettlePolicy | None = None,
        authorize: Callable[[Any, ElementEntry | None], Awaitable[None]] = allow_everything,
        on_step: StepListener | None = None,
        on_acting: ActingListener | None = None,
    ) -> None:
        self._page = page
        self._inspector = inspector
        self._authorize = authorize
        self._on_step = on_step or (lambda event, detail: None)
        self.changes = ChangeTracker(page, inspector)
        self._ctx = ActionContext(
            page,
            inspector,
            settle or SettlePolicy(),
            on_acting or (lambda entry, handle: None),
            self.changes,
        )

    def state(self) -> PageState:
        return self._inspector.state()

    async def settle(self, *, short: bool = False) -> dict[str, Any]:
        return await self._ctx.settle(short=short)

    def remember_snapshot(self, snapshot: InspectResult, include_offscreen: bool) -> None:
        self.changes.remember_snapshot(snapshot, include_offscreen)

    def observe(self) -> PageChanges:
        return self.changes.observe()

    def changes_since(self, before_state: PageState | Snapshot, **kwargs: Any) -> PageChanges:
        return self.changes.changes_since(before_state, **kwargs)

    async def run_actions(self, request: PageToolRequest) -> PageToolResult:
        start = self.state()
        actions = request.actions or []
        writes = any(DISPATCH[type(a)].writes for a in actions)
        before = self.changes.summary(include_offscreen=True) if writes else None
        messages_before = self.changes.messages() if writes else []
        steps: list[StepResult] = []
        dialogs = []
        stopped_at: int | None = None
        error: ToolError | None = None
        for index, action in enumerate(actions):
            if index > 0:
                reason = self._stop_reason(
                    start, before, messages_before, steps[-1], len(actions) - index
                )
                if reason is not None:
                    stopped_at, error = index, reason
                    break
            step, record = await self._run_step(index, action, request.snapshot_id)
            dialogs.extend(record.dialogs)
            steps.append(step)
            self._on_step("step_finished", step.to_wire())
            if step.error is not None:
                stopped_at, error = index, step.error
                break
        changes = self.changes.changes_since(
            start, before=before, messages_before=messages_before, dialogs=dialogs
        )
        return PageToolResult(
            request_id=request.request_id,
            success=error is None,
            page_version=changes.page_version,
            result=ActionBatchResult(steps=steps, changes=changes).to_wire(),
            stopped_at=stopped_at,
            error=error,
        )

    def _stop_reason(
        self,
        start: PageState,
        before: Summary | None,
        messages_before: list[tuple[str, str]],
        previous: StepResult,
        remaining: int,
    ) -> ToolError | None:
        """Why the rest of the batch must not run: the page navigated, or (after a step that
        may restructure it) changed structure against the page the batch was planned on;
        popups a step opened and closed again (date pickers, menus) are no structural change."""
        current = self.state()
        if current.navigations != start.navigations or current.url != start.url:
            return ToolFailure(
                ErrorCode.NAVIGATED,
                f"the page navigated during the batch; the remaining {remaining} action(s) "
                "were not run. Call page_inspect again",
            ).to_error()
        if before is None or not DISPATCH[_ACTION_CLASSES[previous.action]].restructures:
            return None
        now = self.changes.summary(include_offscreen=True)
        reason = structural_change(
            before, now, dialog_count(messages_before), dialog_count(self.changes.messages())
        )
        if reason:
            return ToolFailure(
                ErrorCode.STRUCTURE_CHANGED,
                f"{reason}; the remaining {remaining} action(s) were not run. "
                "Call page_inspect again",
            ).to_error()
        return None

    async def _run_step(
        self, index: int, action: Any, default_snapshot: str | None
    ) -> tuple[StepResult, StepRecord]:
        began = time.monotonic()
        element_id = getattr(action, "element_id", None)
        self._on_step(
            "step_started", {"index": index, "action": action.action, "elementId": element_id}
        )
        ctx = self._ctx
        ctx.step = record = StepRecord()
        try:
            spec = DISPATCH[type(action)]
            target = self._resolve(action, spec, default_snapshot)
            await self._authorize(action, target.entry if target else None)
            outcome = await spec.run(ctx, action, target)
        except ToolFailure as failure:
            return StepResult(
                index=index,
                action=action.action,
                element_id=element_id,
                success=False,
                duration_ms=round((time.monotonic() - began) * 1000, 1),
                error=failure.to_error(),
            ), record
        duration_ms = (time.monotonic() - began) * 1000
        if record.timed:
            # Where the time went: checks (ref, actionability), the act, settling.
            action_ms, settle_ms = record.act_s * 1000, record.settle_s * 1000
            outcome["timing"] = {
                "checksMs": round(max(0.0, duration_ms - action_ms - settle_ms), 1),
                "actionMs": round(action_ms, 1),
                "settleMs": round(settle_ms, 1),
            }
        if record.hovered_host:
            outcome["hoveredHostFirst"] = record.hovered_host
        if record.panel_moved_to:
            # SPEC U4: the panel covered the target and moved aside for the action.
            outcome["panelMovedAside"] = record.panel_moved_to
        return StepResult(
            index=index,
            action=action.action,
            element_id=element_id,
            success=True,
            duration_ms=round(duration_ms, 1),
            target_label=target.entry.label if target else "",
            outcome=outcome,
        ), record

    def _resolve(
        self, action: Any, spec: ActionSpec, default_snapshot: str | None
    ) -> Target | None:
        element_id = getattr(action, "element_id", None)
        if not element_id:
            if spec.ref == "required":
                raise ToolFailure(ErrorCode.INVALID_REQUEST, f"{action.action} needs an elementId")
            return None
        snapshot_id = action.snapshot_id or default_snapshot
        if snapshot_id is None:
            raise ToolFailure(
                ErrorCode.INVALID_REQUEST,
                f"{action.action} needs the snapshotId of the element's snapshot",
            )
        entry, row = self._inspector.resolve(snapshot_id, element_id)
        return Target(entry, row, snapshot_id)


# The action class of each wire name, for the step results (which carry the name).
_ACTION_CLASSES: dict[str, type[WireModel]] = {
    cls.model_fields["action"].default: cls for cls in DISPATCH
}
