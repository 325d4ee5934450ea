"""``page_select``: native ``<select>`` and ARIA combobox/listbox strategies (SPEC A1).

Each strategy chooses and then verifies what the control now shows; a choice the page did not
take is ``verification_failed``, never a success.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from .. import facts as F
from ..keyboard import parse_key
from ..protocol import ErrorCode, SelectAction
from . import keyboard
from .actionability import ensure_actionable
from .context import ActionContext, Target
from .settle import FrameCounter

MAX_COMBOBOX_KEY_STEPS = 200
# An option that is not visible yet gets this long, and at least this many animation frames
# (popups animate in on frames, which a background tab gets at 1 Hz), within the cap.
OPTION_WAIT_S, OPTION_WAIT_FRAMES, OPTION_WAIT_CAP_S, OPTION_POLL_S = 1.0, 4, 5.0, 0.05


async def run(ctx: ActionContext, action: SelectAction, target: Target) -> dict[str, Any]:
    return await choose(ctx, target, list(action.values))


async def choose(ctx: ActionContext, target: Target, values: list[str]) -> dict[str, Any]:
    """The strategy for this kind of control (``page_fill`` on a ``<select>`` comes here too)."""
    row = target.row
    if row[F.TAG] == "select":
        return await select_native(ctx, target, values)
    if target.entry.role in ("combobox", "listbox") or row[F.ROLE] in ("combobox", "listbox"):
        return await select_aria(ctx, target, values)
    raise target.failure(
        ErrorCode.UNSUPPORTED, f"{target.name} is not a select, combobox or listbox"
    )


async def select_native(ctx: ActionContext, target: Target, values: list[str]) -> dict[str, Any]:
    row = target.row
    if len(values) > 1 and not row[F.MULTIPLE]:
        raise target.failure(ErrorCode.INVALID_REQUEST, f"{target.name} takes one value")
    await ensure_actionable(ctx, target)
    holder: dict[str, Any] = {}

    async def perform() -> dict[str, Any]:
        result = ctx.page.select_native(target.handle, values)
        holder["missing"] = result.missing
        return {"selected": result.selected}

    outcome = await ctx.guarded(perform)
    if holder["missing"]:
        options = [o[1] for o in row[F.OPTIONS] or ()]
        raise target.failure(
            ErrorCode.NOT_FOUND,
            f"no option {', '.join(map(repr, holder['missing']))} in {target.name}; "
            "nothing was changed",
            details={"options": options[:50]},
        )
    now = ctx.page.row_of(target.handle)
    selected = [o for o in now[F.OPTIONS] or () if o[2]]
    wanted = {v.strip().lower() for v in values}
    if not all(o[0].lower() in wanted or o[1].strip().lower() in wanted for o in selected) or len(
        selected
    ) != len(values):
        raise target.failure(
            ErrorCode.VERIFICATION_FAILED,
            f"{target.name} shows {[o[1] for o in selected]} after selecting {values}",
        )
    outcome["selected"] = [o[0] for o in selected]
    outcome["labels"] = [o[1] for o in selected]
    return outcome


async def select_aria(ctx: ActionContext, target: Target, values: list[str]) -> dict[str, Any]:
    """ARIA combobox/listbox (SPEC A1): open, find each option through aria-controls /
    aria-owns / aria-activedescendant (portals included), choose it, verify the choice."""
    point = await ensure_actionable(ctx, target)
    assert point is not None
    page, entry = ctx.page, target.entry
    chosen: list[str] = []
    methods: list[str] = []

    async def perform() -> dict[str, Any]:
        for wanted in values:
            if entry.role == "combobox" and page.row_of(entry.handle)[F.ARIA_EXPANDED] != "true":
                page.click(entry.handle, point.x, point.y)
                await ctx.settle(short=True)
            label, method = await _choose_option(ctx, target, wanted)
            chosen.append(label)
            methods.append(method)
            await ctx.settle(short=True)
        return {}

    outcome = await ctx.guarded(perform)
    if entry.role == "combobox" and page.row_of(entry.handle)[F.ARIA_EXPANDED] == "true":
        # Multiple-choice widgets stay open after a pick; close it as a person would, so
        # the popup does not cover what comes next.
        await keyboard.press(ctx, entry.handle, parse_key("Escape"))
        await ctx.settle(short=True)
    shown = page.combobox_display(entry.handle).lower()
    missing = [label for label in chosen if label.lower() not in shown]
    if missing:
        raise target.failure(
            ErrorCode.VERIFICATION_FAILED,
            f"{target.name} does not show {missing} after choosing it",
            details={"shown": shown[:200]},
        )
    outcome.update({"selected": chosen, "via": methods})
    return outcome


def find_option(facts: list[list[Any]], wanted: str) -> int | None:
    """An option by value, exact label, then trimmed case-insensitive label."""
    for index, (_label, value, *_rest) in enumerate(facts):
        if value and value == wanted:
            return index
    for index, (label, *_rest) in enumerate(facts):
        if label == wanted:
            return index
    folded = " ".join(wanted.split()).casefold()
    for index, (label, *_rest) in enumerate(facts):
        if " ".join(label.split()).casefold() == folded:
            return index
    return None


async def _choose_option(ctx: ActionContext, target: Target, wanted: str) -> tuple[str, str]:
    # Popups animate in (opacity from 0, no DOM mutation to wait for): give the option
    # time and frames to become visible before falling back, like Playwright's auto-wait.
    page = ctx.page
    began = time.monotonic()
    with FrameCounter(page) as frames:
        while True:
            facts, _handles, _active = page.aria_options(target.handle)
            match = find_option(facts, wanted)
            label = facts[match][0] if match is not None else wanted
            if (match is not None and facts[match][3]) or page.visible_text_matches(label):
                break
            waited = time.monotonic() - began
            if (
                waited >= OPTION_WAIT_S and frames.count >= OPTION_WAIT_FRAMES
            ) or waited >= OPTION_WAIT_CAP_S:
                break
            await asyncio.sleep(OPTION_POLL_S)
    return await _pick_option(ctx, target, wanted)


async def _pick_option(ctx: ActionContext, target: Target, wanted: str) -> tuple[str, str]:
    page = ctx.page
    facts, handles, _active = page.aria_options(target.handle)
    match = find_option(facts, wanted)
    if match is not None and facts[match][3]:
        option = handles[match]
        hit = page.hit_test(option)
        if hit.ok:
            page.click(option, hit.x, hit.y)
            return facts[match][0], "option"
    label = facts[match][0] if match is not None else wanted
    # Options rendered without ARIA roles (or a hidden accessibility list beside a visual
    # one): the visible element showing exactly that label, outside the combobox itself.
    visible = [h for h in page.visible_text_matches(label) if page.hit_test(h).ok]
    if visible:
        option = visible[-1]  # portals are appended at the end of <body>
        hit = page.hit_test(option)
        page.click(option, hit.x, hit.y)
        return label, "visible-text"
    if match is not None:
        # Keyboard: move the active descendant until it is the wanted option, then Enter.
        for _ in range(MAX_COMBOBOX_KEY_STEPS):
            _facts, _handles, active = page.aria_options(target.handle)
            if active.strip().lower() == label.strip().lower():
                await keyboard.press(ctx, target.handle, parse_key("Enter"))
                return label, "keyboard"
            await keyboard.press(ctx, target.handle, parse_key("ArrowDown"))
            await page.next_frame()
    raise target.failure(
        ErrorCode.NOT_FOUND,
        f"no option {wanted!r} in {target.name}",
        details={"options": [f[0] for f in facts][:50]},
    )
