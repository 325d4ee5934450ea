"""``page_drag``: one element dragged onto another, both by ref (SPEC A7), through the one
virtual pointer: HTML5 drag and drop where the page makes the pressed element draggable,
else the pointer sequence pointer-based sortable libraries follow. Verified like every
action: the report says how it was dragged and what changed."""

from __future__ import annotations

from typing import Any

from ..errors import ToolFailure
from ..protocol import DragAction, ErrorCode
from .actionability import ensure_actionable
from .context import ActionContext, Target


async def run(ctx: ActionContext, action: DragAction, target: Target) -> dict[str, Any]:
    if action.to_element_id == action.element_id:
        raise target.failure(ErrorCode.INVALID_REQUEST, "an element cannot be dragged onto itself")
    entry, row = ctx.inspector.resolve(target.snapshot_id, action.to_element_id)
    destination = Target(entry, row, target.snapshot_id)
    start = await ensure_actionable(ctx, target, enabled=False)
    # Where the drop lands must be reachable by the pointer too; both points are read before
    # the press, as a person looks at both before dragging.
    end = await ensure_actionable(ctx, destination, enabled=False)
    if start is None or end is None:
        raise ToolFailure(ErrorCode.OBSCURED, "no point to drag from or to")
    baseline = ctx.changes.effect_baseline(target.entry)
    report: dict[str, Any] = {}

    async def perform() -> dict[str, Any]:
        mode, dropped, released = await ctx.page.drag(
            target.handle, start.x, start.y, destination.handle, end.x, end.y
        )
        report.update(mode=mode, dropped=dropped)
        return {"dragged": True, "mode": mode, "dropped": dropped, "releasedOver": released}

    outcome = await ctx.guarded(perform)
    outcome["to"] = destination.name
    outcome.update(ctx.changes.effects(baseline, target.entry, dialogs=len(ctx.step.dialogs)))
    return outcome
