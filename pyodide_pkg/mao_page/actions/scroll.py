"""``page_scroll``: the page or a scroll container by a page, to the end or by pixels; an
element that is not a scroll container is scrolled into view (SPEC A1)."""

from __future__ import annotations

from typing import Any

from ..protocol import ScrollAction
from .context import ActionContext, Target

PAGE_FRACTION = 0.9  # a "page" keeps a strip of the previous view in sight


async def run(ctx: ActionContext, action: ScrollAction, target: Target | None) -> dict[str, Any]:
    page = ctx.page
    handle = target.handle if target else None
    state = page.scroll_state(handle)
    if target is not None and not state[6]:
        moved = page.scroll_into_view(target.handle)
        ctx.on_acting(target.entry, target.handle)
        outcome: dict[str, Any] = {"scrolledIntoView": True, "moved": bool(moved)}
        outcome["settle"] = await ctx.settle(short=True)
        return outcome
    left, top, max_left, max_top, width, height, _ = state
    if target is not None:
        ctx.on_acting(target.entry, target.handle)
    vertical = action.direction in ("up", "down")
    sign = 1 if action.direction in ("down", "right") else -1
    if action.amount == "page":
        delta = PAGE_FRACTION * (height if vertical else width)
    elif action.amount == "end":
        edge = (max_top if vertical else max_left) if sign > 0 else 0
        delta = abs(edge - (top if vertical else left))
    else:
        delta = float(action.amount)
    dx, dy = (0.0, sign * delta) if vertical else (sign * delta, 0.0)
    if handle is None:
        before_x, before_y, after_x, after_y = page.scroll_page(dx, dy)
    else:
        before_x, before_y, after_x, after_y = page.scroll_element(handle, dx, dy)
    moved = (before_x, before_y) != (after_x, after_y)
    outcome = {
        "moved": moved,
        "scrollX": after_x,
        "scrollY": after_y,
        "target": "element" if handle is not None else "page",
    }
    if not moved:
        outcome["note"] = f"already at the {action.direction} edge"
    outcome["settle"] = await ctx.settle(short=True)
    return outcome
