"""``page_hover``: the pointer comes to rest over an element, with the pointer and mouse
boundary events a real one sends to it and every ancestor it enters, so menus and tooltips
that open on hover open (and appear in the next snapshot)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from ..bridge.page import HoverState
from ..protocol import HoverAction
from .actionability import ensure_actionable
from .context import ActionContext, Target

# Menus and tooltips that open on hover wait for the pointer to rest first (Vuetify's menu
# 300 ms, antd's and Element's dropdowns 150 ms), so their change can begin after the settle
# has already seen a quiet page. A hover that changed no DOM yet watches for a first change
# until this long after the act (the settle's own wait counts), then settles again; without it
# the answer says "none" and the next snapshot catches the menu half-open. Measured from the
# act, not added after the settle, so a hover costs little more than a click (SPEC A7).
HOVER_INTENT_MS = 500
_POLL_S = 0.05


async def _nothing() -> dict[str, Any]:
    return {}


async def _changes_within(ctx: ActionContext, window_ms: float) -> bool:
    mutations = ctx.page.counters()[0]
    deadline = time.monotonic() + window_ms / 1000
    while time.monotonic() < deadline:
        await asyncio.sleep(_POLL_S)
        if ctx.page.counters()[0] != mutations:
            return True
    return False


async def run(ctx: ActionContext, action: HoverAction, target: Target) -> dict[str, Any]:
    point = await ensure_actionable(ctx, target, enabled=False)
    assert point is not None
    baseline = ctx.changes.effect_baseline(target.entry)

    hovered = HoverState()
    acted = time.monotonic()

    async def perform() -> dict[str, Any]:
        nonlocal hovered, acted
        hovered = ctx.page.hover(target.handle, point.x, point.y)
        acted = time.monotonic()
        return {"hovered": True}

    outcome = await ctx.guarded(perform)
    effects = ctx.changes.effects(baseline, target.entry, dialogs=len(ctx.step.dialogs))
    began = time.monotonic()
    window_ms = HOVER_INTENT_MS - (began - acted) * 1000
    if "dom" not in effects.get("effects", ()) and window_ms > 0:
        changed = await _changes_within(ctx, window_ms)
        ctx.step.settle_s += time.monotonic() - began  # watching is waiting, not checking
        if changed:
            later = (await ctx.guarded(_nothing))["settle"]
            waited = outcome["settle"]["waitedMs"] + round((time.monotonic() - began) * 1000)
            outcome["settle"] = {**later, "waitedMs": waited}
            effects = ctx.changes.effects(baseline, target.entry, dialogs=len(ctx.step.dialogs))
    outcome.update(with_hover_styles(effects, hovered))
    return outcome


def with_hover_styles(effects: dict[str, Any], hovered: HoverState) -> dict[str, Any]:
    """SPEC A7: the page's ``:hover`` rules styling elements beyond the hovered chain (a row's
    button shown on hover) are an effect no mutation shows: ``style``. When nothing changed and
    some sheets came from another origin, the result says their ``:hover`` rules could not be
    applied, so "none" is not read as "this has no hover behaviour"."""
    out = dict(effects)
    if hovered.styled:
        out["effect"] = "changed"
        out["effects"] = [*out.get("effects", []), "style"]
        out["hoverStyled"] = hovered.styled
    elif out["effect"] == "none" and hovered.unreadable:
        out["note"] = (
            f"{hovered.unreadable} style sheet(s) from another origin could not be read; "
            ":hover rules in them were not applied"
        )
    return out
