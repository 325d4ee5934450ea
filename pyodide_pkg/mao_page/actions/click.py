"""``page_click``: a left click at the element's hit point, with the events a real one sends
to whatever inside the element the point lands on, and a report of what it changed."""

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
        ctx.page.click(target.handle, point.x, point.y)
        return {"clicked": True}

    outcome = await ctx.guarded(perform)
    outcome.update(ctx.changes.target_state(target.entry))
    # A click that changed nothing is still a success (the click happened), but said so.
    outcome.update(ctx.changes.effects(baseline, target.entry, dialogs=len(ctx.step.dialogs)))
    return outcome
