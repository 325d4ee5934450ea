"""``page_hover``: the pointer comes to rest over an element, with the pointer and mouse
boundary events a real one sends to it and every ancestor it enters, so menus and tooltips
that open on hover open (and appear in the next snapshot)."""

from __future__ import annotations

from typing import Any

from ..protocol import HoverAction
from .actionability import ensure_actionable
from .context import ActionContext, Target


async def run(ctx: ActionContext, action: HoverAction, target: Target) -> dict[str, Any]:
    point = await ensure_actionable(ctx, target, enabled=False)
    assert point is not None
    baseline = ctx.changes.effect_baseline(target.entry)

    async def perform() -> dict[str, Any]:
        ctx.page.hover(target.handle, point.x, point.y)
        return {"hovered": True}

    outcome = await ctx.guarded(perform)
    outcome.update(ctx.changes.effects(baseline, target.entry, dialogs=len(ctx.step.dialogs)))
    return outcome
