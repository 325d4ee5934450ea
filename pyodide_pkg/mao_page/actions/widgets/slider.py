"""ARIA sliders (``role=slider``, value in ``aria-valuenow``) set by keyboard (SPEC A1).

``page_fill`` with a number: focus the handle, Home/End for the ends, else the arrow keys
one step at a time until ``aria-valuenow`` is the number, as a keyboard user would (WAI-ARIA
slider pattern). A handle that does not move, or steps past the number, is reported; native
``<input type=range>`` is filled like any input.
"""

from __future__ import annotations

import math
from typing import Any

from ...keyboard import parse_key
from ...protocol import ErrorCode
from .. import keyboard
from ..actionability import ensure_actionable
from ..context import ActionContext, Target

MAX_KEY_STEPS = 1000


def parse_number(target: Target, value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not math.isfinite(number):
        raise target.failure(
            ErrorCode.INVALID_REQUEST, f"{target.name} takes a number, not {value!r}. Nothing was done"
        )
    return number


def key_for(now: float, wanted: float, low: float, high: float) -> str | None:
    """The next key toward ``wanted`` (None: there)."""
    if now == wanted:
        return None
    if wanted == low:
        return "Home"
    if wanted == high:
        return "End"
    return "ArrowRight" if wanted > now else "ArrowLeft"


async def set_value(ctx: ActionContext, target: Target, value: str) -> dict[str, Any]:
    wanted = parse_number(target, value)
    page = ctx.page
    now, low, high, _step = page.slider_range(target.handle)  # type: ignore[attr-defined]
    if math.isnan(now):
        raise target.failure(
            ErrorCode.UNSUPPORTED, f"{target.name} states no aria-valuenow; its value cannot be read back"
        )
    if (not math.isnan(low) and wanted < low) or (not math.isnan(high) and wanted > high):
        raise target.failure(
            ErrorCode.INVALID_REQUEST,
            f"{value} is outside {target.name}'s range {low:g} to {high:g}. Nothing was done",
            {"min": low, "max": high},
        )
    await ensure_actionable(ctx, target, hit=False)
    presses = 0

    async def perform() -> dict[str, Any]:
        nonlocal presses, now
        page.focus(target.handle)
        for _ in range(MAX_KEY_STEPS):
            name = key_for(now, wanted, low, high)
            if name is None:
                break
            await keyboard.press(ctx, target.handle, parse_key(name))
            presses += 1
            await page.next_frame()
            after = page.slider_range(target.handle)[0]  # type: ignore[attr-defined]
            if after == now or (name.startswith("Arrow") and (after - wanted) * (now - wanted) < 0):
                now = after
                break  # stuck, or stepped past: the step does not reach the number
            now = after
        return {}

    outcome = await ctx.guarded(perform)
    final = page.slider_range(target.handle)[0]  # type: ignore[attr-defined]
    if final != wanted:
        raise target.failure(
            ErrorCode.VERIFICATION_FAILED,
            f"{target.name} shows {final:g} after {presses} key presses toward {wanted:g}",
            {"shown": final, "keyPresses": presses},
        )
    outcome.update({"value": f"{final:g}", "keyPresses": presses})
    return outcome
