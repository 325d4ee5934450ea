"""Sliders set by keyboard, else by the pointer on their rail (SPEC A1, A3).

``page_fill`` with a number. The value is read where the slider states it
(``aria-valuenow``), else where its thumb sits on its rail (a slider that states no value
shows it only there; its range from ``aria-valuemin``/``-max``, else ARIA's 0 to 100).
Keyboard first, as the WAI-ARIA slider pattern has it: focus the handle (the slider itself,
or the focusable thumb inside it), Home/End for the ends, else the arrow keys one step at a
time until the value is the number; a page without Home/End support gets arrows instead. A
slider with no focusable handle, or one that ignores the keys, gets one click on its rail at
the number's place, as a user's pointer would. The value read back afterwards is the
verdict: a handle that does not move, or steps past the number, is reported. Native
``<input type=range>`` is filled like any input.
"""

from __future__ import annotations

import math
from typing import Any

from ...protocol import ErrorCode
from .. import keyboard
from ..actionability import ensure_actionable
from ..context import ActionContext, Target
from ..keys import parse_key

MAX_KEY_STEPS = 1000
# Where the value came from (sliderRange): stated, the thumb's place, the place in an assumed range.
STATED, POSITION, ASSUMED_RANGE = 0, 1, 2


def parse_number(target: Target, value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not math.isfinite(number):
        raise target.failure(
            ErrorCode.INVALID_REQUEST,
            f"{target.name} takes a number, not {value!r}. Nothing was done",
        )
    return number


def key_for(now: float, wanted: float, low: float, high: float, ends: bool = True) -> str | None:
    """The next key toward ``wanted`` (None: there); ``ends``: Home/End may be used."""
    if now == wanted:
        return None
    if ends and wanted == low:
        return "Home"
    if ends and wanted == high:
        return "End"
    return "ArrowRight" if wanted > now else "ArrowLeft"


def read(ctx: ActionContext, handle: Any) -> tuple[float, float, float, int]:
    """(value, min, max, where the value came from)."""
    now, low, high, _step, *source = ctx.page.slider_range(handle)  # type: ignore[attr-defined]
    return now, low, high, int(source[0]) if source else STATED


def is_slider_shaped(ctx: ActionContext, target: Target) -> bool:
    """A thumb on a rail (sliderTrack) with a value read from it: a slider without a role."""
    return ctx.page.slider_track(target.handle) is not None  # type: ignore[attr-defined]


async def set_value(ctx: ActionContext, target: Target, value: str) -> dict[str, Any]:
    wanted = parse_number(target, value)
    page = ctx.page
    now, low, high, source = read(ctx, target.handle)
    if math.isnan(now):
        raise target.failure(
            ErrorCode.UNSUPPORTED,
            f"{target.name} states no aria-valuenow and has no thumb on a rail; its value cannot "
            f"be read back",
        )
    if (not math.isnan(low) and wanted < low) or (not math.isnan(high) and wanted > high):
        raise target.failure(
            ErrorCode.INVALID_REQUEST,
            f"{value} is outside {target.name}'s range {low:g} to {high:g}. Nothing was done",
            {"min": low, "max": high},
        )
    await ensure_actionable(ctx, target, hit=False)
    track = page.slider_track(target.handle) if source != STATED else None  # type: ignore[attr-defined]
    keys_to = target.handle if track is None else track[0]
    presses = 0
    used: list[str] = []

    async def by_keys() -> None:
        nonlocal presses, now
        page.focus(keys_to)
        ends = True
        for _ in range(MAX_KEY_STEPS):
            name = key_for(now, wanted, low, high, ends)
            if name is None:
                break
            await keyboard.press(ctx, keys_to, parse_key(name))
            presses += 1
            await page.next_frame()
            after = read(ctx, target.handle)[0]
            if after == now and name in ("Home", "End"):
                ends = False  # the page has no Home/End: arrows the rest of the way
                continue
            if after == now or (name.startswith("Arrow") and (after - wanted) * (now - wanted) < 0):
                now = after
                break  # stuck, or stepped past: the step does not reach the number
            now = after
        used.append("keyboard")

    async def by_pointer() -> None:
        nonlocal now
        page.scroll_into_view(target.handle)
        _keys, rail, x0, x1, y0, y1 = page.slider_track(target.handle)  # type: ignore[attr-defined]
        fraction = (wanted - low) / (high - low)
        page.click(rail, x0 + fraction * (x1 - x0), y0 + fraction * (y1 - y0))
        await page.next_frame()
        now = read(ctx, target.handle)[0]
        used.append("pointer")

    async def perform() -> dict[str, Any]:
        if keys_to is not None:
            await by_keys()
        if now != wanted and track is not None and now == start:
            await by_pointer()  # no keys to press, or the page ignored them
        return {}

    start = now
    outcome = await ctx.guarded(perform)
    final = read(ctx, target.handle)[0]
    if final != wanted:
        raise target.failure(
            ErrorCode.VERIFICATION_FAILED,
            f"{target.name} shows {final:g} after {presses} key presses toward {wanted:g}"
            + (" and a click on its rail" if "pointer" in used else ""),
            {"shown": final, "keyPresses": presses},
        )
    outcome.update({"value": f"{final:g}", "keyPresses": presses, "by": used})
    if source == ASSUMED_RANGE:
        outcome["range"] = (
            "assumed 0-100: the slider states no range; the value is its place on the rail"
        )
    return outcome
