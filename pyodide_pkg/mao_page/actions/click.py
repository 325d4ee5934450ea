"""``page_click``: a click at the element's hit point through the one virtual pointer (SPEC
A7: left, double with ``clickCount: 2``, right with ``button: "right"``), with the events a
real one sends to whatever the point lands on, and a report of what it changed."""

from __future__ import annotations

from typing import Any

from ..protocol import ClickAction
from .actionability import ensure_actionable
from .context import ActionContext, Target


async def run(ctx: ActionContext, action: ClickAction, target: Target) -> dict[str, Any]:
    point = await ensure_actionable(ctx, target)
    assert point is not None
    baseline = ctx.changes.effect_baseline(target.entry)

    async def perform() -> dict[str, Any]:
        ctx.page.click(target.handle, point.x, point.y, action.click_count, action.button)
        done: dict[str, Any] = {"clicked": True}
        if action.click_count != 1:
            done["clickCount"] = action.click_count
        if action.button != "left":
            done["button"] = action.button
        return done

    outcome = await ctx.guarded(perform)
    outcome.update(ctx.changes.target_state(target.entry))
    # A click that changed nothing is still a success (the click happened), but said so.
    outcome.update(ctx.changes.effects(baseline, target.entry, dialogs=len(ctx.step.dialogs)))
    return outcome
