"""Date, time and range pickers (SPEC A1, A3).

A picker with a text input is filled in the widget's own input format and committed the way
its user does: ``page_fill`` sets the value and leaves the field (blur), which commits most
pickers. Some commit only on Enter and throw the typed text away on blur (a range picker
whose other end is still empty, for one): when the value was reverted, type it again and
press Enter, as a user would. The Enter goes to the widget only; it never submits the form.

A read-only picker field takes its value only from its panel, so ``pick`` does what a user
does there, given an ISO value (``2024-05-17``, ``2024-06-01 – 2024-06-05``, ``08:30``):

1. click the field and find the panel the open produced (a popup with a day grid or time
   columns; or the one already open, when the other end of a range opened it);
2. read the month each grid shows (from the dates its cells state, else its header text),
   press next / previous month or year until the wanted month shows (buttons named so, or
   nameless icon buttons whose step is learned by pressing them; bounded), and click the
   day: the cell stating that date, else the day number among the current month's cells,
   never a greyed day of a neighbouring month; both ends for a range;
3. for a time, click the hour, minute (second) in the columns, or on a clock face;
4. press the panel's OK when it has one, then verify the field shows the value.
"""

from __future__ import annotations

import asyncio
import time
from datetime import date
from typing import Any

from ...dom import facts as F
from ...protocol import ErrorCode
from ..actionability import ensure_actionable, hit_test
from ..context import ActionContext, Target
from ..keys import parse_key
from ..settle import FrameCounter
from . import datefmt, popup

_ENTER = parse_key("Enter")


async def commit_with_enter(ctx: ActionContext, target: Target, value: str) -> str:
    """Fill ``value`` again and press Enter on the field; the value it then holds."""
    page, handle = ctx.page, target.handle
    page.focus(handle)

    async def perform() -> dict[str, Any]:
        page.fill(handle, value)
        await page.next_frame()
        init = _ENTER.event_init()
        if page.dispatch_key(handle, "keydown", init):
            page.dispatch_key(handle, "keypress", {**init, "charCode": _ENTER.char_code})
        page.dispatch_key(handle, "keyup", init)
        return {}

    await ctx.guarded(perform)
    return page.read_value(handle)


# ---------------------------------------------------------------------------------------
# Picking in the panel: read-only picker fields, whose value only the calendar or clock sets.
# ---------------------------------------------------------------------------------------

# The panel gets this long (and at least this many frames) to render after the open.
PANEL_WAIT_S, PANEL_WAIT_FRAMES, PANEL_WAIT_CAP_S = 1.0, 4, 5.0
# Month steps before giving up: ten years by month buttons, or far more with year buttons.
MAX_NAV_STEPS = 120
# A navigation press re-renders the header within a few frames.
NAV_WAIT_S, NAV_WAIT_FRAMES = 0.3, 3
# Retries of a panel element's hit test while the panel animates in.
PRESS_BACKOFF_MS = (0, 50, 100, 200, 400, 800)
# A time column scrolling its picked item into place: this many frames without moving.
STILL_FRAMES, STILL_CAP_S = 3, 1.5
# After scrolling a column to reveal an item: the column's own scroll-end handler runs first.
REVEAL_SETTLE_S = 0.25
# The field's value after the last pick: libraries commit on the next frames.
VERIFY_WAIT_S, VERIFY_WAIT_FRAMES = 1.0, 4


def wants_picker(target: Target, value: str) -> datefmt.Wanted | None:
    """The picker value to set when this fill is one: an ISO date, range or time for a field
    the user cannot type into (read-only), which only its panel sets."""
    row = target.row
    read_only = bool(row[F.READONLY]) or row[F.ARIA_READONLY] == "true"
    if row[F.TAG] == "input":
        if not read_only or (row[F.TYPE] or "text").lower() not in ("text", "search", ""):
            return None
    elif row[F.TAG] == "textarea" or row[F.CONTENTEDITABLE]:
        return None
    elif "combobox" not in (target.entry.role, row[F.ROLE]) and row[F.ARIA_EXPANDED] not in (
        "true",
        "false",
    ):
        return None  # not a field at all: nothing says a click on it opens a panel
    return datefmt.parse_wanted(value)


async def pick(ctx: ActionContext, target: Target, wanted: datefmt.Wanted) -> dict[str, Any]:
    """Open the picker with a click, pick the date(s) or time in its panel as a user would,
    confirm, and verify the field now shows the value."""
    point = await ensure_actionable(ctx, target)
    assert point is not None
    page = ctx.page
    before = page.popup_roots(None)  # type: ignore[attr-defined]
    picked: list[str] = []

    async def perform() -> dict[str, Any]:
        page.click(target.handle, point.x, point.y)
        await ctx.settle(short=True)
        roots = await _panel(ctx, target, before, wanted.kind)
        if wanted.kind == "time":
            picked.extend(await _pick_time(ctx, target, roots, wanted.time))
        else:
            for day in wanted.dates:
                picked.append(await _pick_day(ctx, target, roots, day))
                roots = await _panel(ctx, target, before, wanted.kind, closed_ok=True) or roots
        if await _confirm(ctx, target, roots):
            picked.append("confirm")
        return {}

    outcome = await ctx.guarded(perform)
    shown = await _shown(ctx, target, wanted)
    if not _shows(shown, wanted):
        raise target.failure(
            ErrorCode.VERIFICATION_FAILED,
            f"{target.name} does not show {wanted.text} after picking it in its panel",
            {"shown": shown[:200], "picked": picked},
        )
    outcome.update({"status": "picked", "value": shown, "picked": picked})
    return outcome


def _shows(shown: str, wanted: datefmt.Wanted) -> bool:
    if wanted.kind == "time":
        return datefmt.shows_time(shown, wanted.time)
    return all(datefmt.shows_date(shown, day) for day in wanted.dates)


async def _shown(ctx: ActionContext, target: Target, wanted: datefmt.Wanted) -> str:
    """What the field shows once the pick has landed (polled briefly: commits are deferred)."""
    page = ctx.page
    began = time.monotonic()
    with FrameCounter(page) as frames:
        while True:
            shown = page.read_value(target.handle) if target.row[F.TAG] == "input" else ""
            shown = shown or page.combobox_display(target.handle)
            if (
                wanted.kind == "range"
                and not _shows(shown, wanted)
                and target.row[F.TAG] == "input"
            ):
                # A range given to one of the picker's two inputs: each shows one end.
                shown = page.range_field_text(target.handle)  # type: ignore[attr-defined]
            waited = time.monotonic() - began
            if _shows(shown, wanted) or (
                waited >= VERIFY_WAIT_S and frames.count >= VERIFY_WAIT_FRAMES
            ):
                return shown
            if waited >= PANEL_WAIT_CAP_S:
                return shown
            await asyncio.sleep(0.05)


def _has_panel(page: Any, roots: list[Any], kind: str) -> bool:
    if kind == "time":
        return bool(page.time_columns(roots, [])[0])
    return bool(page.calendar_grids(roots).grids)


async def _panel(
    ctx: ActionContext, target: Target, before: list[Any], kind: str, *, closed_ok: bool = False
) -> list[Any]:
    """The popup the open produced holding a calendar (or time columns); else one already
    open (the other end of a range picker opened it) outside the field's own container."""
    page = ctx.page
    began = time.monotonic()
    with FrameCounter(page) as frames:
        while True:
            produced = page.popup_roots(before)  # type: ignore[attr-defined]
            for roots in (produced, [r for r in page.popup_roots(None) if r not in produced]):  # type: ignore[attr-defined]
                roots = [r for r in roots if not page.contains(r, target.handle)]  # type: ignore[attr-defined]
                with_panel = [r for r in roots if _has_panel(page, [r], kind)]
                if with_panel:
                    return with_panel[-1:]  # portals are appended: the last is the freshest
            waited = time.monotonic() - began
            if (
                closed_ok
                or (waited >= PANEL_WAIT_S and frames.count >= PANEL_WAIT_FRAMES)
                or waited >= PANEL_WAIT_CAP_S
            ):
                break
            await asyncio.sleep(0.05)
    if closed_ok:
        return []
    what = "time columns or clock" if kind == "time" else "calendar"
    raise target.failure(
        ErrorCode.NOT_EDITABLE,
        f"{target.name} is read-only and clicking it opened no {what} to pick the value in; "
        "nothing was changed",
    )


def _shown_months(read: Any) -> list[int | None]:
    """Per grid, the month it shows (as a month index): from the dates its current-month
    cells state, else from its header text."""
    months: list[int | None] = []
    for grid, header in enumerate(read.headers):
        month = None
        for g, _day, label, _disabled, in_month in read.facts:
            if g == grid and in_month and label and (stated := datefmt.parse_date(label)):
                month = datefmt.month_index(stated.year, stated.month)
                break
        if month is None and (parsed := datefmt.parse_month(header)):
            month = datefmt.month_index(*parsed)
        months.append(month)
    return months


def _day_cell(read: Any, day: date, months: list[int | None]) -> tuple[Any, bool] | None:
    """The cell for ``day`` (element, disabled): one stating that date (a current-month one
    first), else the day number among the current-month cells of the grid showing its month.
    Never a greyed cell of the month before or after by its number alone."""
    stated = [
        (fact, cell) for fact, cell in zip(read.facts, read.cells, strict=True)
        if fact[2] and datefmt.parse_date(fact[2]) == day
    ]
    stated.sort(key=lambda pair: not pair[0][4])
    if stated:
        return stated[0][1], bool(stated[0][0][3])
    wanted = datefmt.month_index(day.year, day.month)
    for fact, cell in zip(read.facts, read.cells, strict=True):
        grid, number, _label, disabled, in_month = fact
        if in_month and number == day.day and months[grid] == wanted:
            return cell, bool(disabled)
    return None


async def _press(ctx: ActionContext, target: Target, handle: Any, what: str) -> None:
    """Click an element of the panel where a user would, scrolled into view first."""
    page = ctx.page
    hit = hit_test(ctx, handle)
    if not hit.ok:
        page.scroll_into_view(handle)
    # A panel animating in takes no clicks (pointer-events off, still moving) for a moment.
    for delay_ms in PRESS_BACKOFF_MS:
        if hit.ok:
            break
        await asyncio.sleep(delay_ms / 1000)
        await page.next_frame()
        hit = hit_test(ctx, handle)
    if not hit.ok:
        blocked = popup.blocked_by(hit, what)
        raise target.failure(blocked.code, f"{blocked.reason} in {target.name}", blocked.details)
    page.click(handle, hit.x, hit.y)
    await ctx.settle(short=True)


async def _pick_day(ctx: ActionContext, target: Target, roots: list[Any], day: date) -> str:
    """Navigate the calendar to the day's month and click the day."""
    page = ctx.page
    learned: dict[tuple[int, str, str], int] = {}
    pressed: list[str] = []
    months: list[int | None] = []
    wanted = datefmt.month_index(day.year, day.month)
    for _ in range(MAX_NAV_STEPS + 1):
        read = page.calendar_grids(roots)  # type: ignore[attr-defined]
        months = _shown_months(read)
        found = _day_cell(read, day, months)
        if found is not None:
            cell, disabled = found
            if disabled:
                raise target.failure(
                    ErrorCode.NOT_ENABLED,
                    f"{day.isoformat()} cannot be picked in {target.name} (disabled)",
                )
            await _press(ctx, target, cell, day.isoformat())
            return day.isoformat()
        known = [m for m in months if m is not None]
        if not known:
            raise target.failure(
                ErrorCode.NOT_FOUND,
                f"cannot tell which month the calendar of {target.name} shows; nothing was picked",
                {"headers": read.headers[:4]},
            )
        # From the first panel when going back, the last when going forward (range pickers).
        delta = wanted - (known[0] if wanted < known[0] else known[-1])
        button = _nav_button(page, roots, read.grids, delta, learned)
        if button is None:
            raise _unreachable(
                target, day, known, pressed, page.picker_buttons(roots, read.grids)[0]
            )
        key, handle, label = button
        before = known[0]
        await _press(ctx, target, handle, label or "navigation button")
        pressed.append(label or "(icon)")
        after = await _month_after(ctx, roots, before)
        if key not in learned or learned[key] == 0:
            learned[key] = (after - before) if after is not None else 0
    raise _unreachable(target, day, [m for m in months if m is not None], pressed)


def _unreachable(
    target: Target,
    day: date,
    known: list[int],
    pressed: list[str],
    buttons: list[list[Any]] | None = None,
) -> Exception:
    shown = [f"{m // 12}-{m % 12 + 1:02d}" for m in known]
    extra = {"buttons": [b[0] or b[1] for b in buttons][:20]} if buttons is not None else {}
    return target.failure(
        ErrorCode.NOT_FOUND,
        f"could not bring {day.isoformat()[:7]} into the calendar of {target.name} (it shows "
        f"{', '.join(shown) or 'no month it names'}); nothing was picked",
        {"shownMonths": shown, "pressed": pressed[-20:], "steps": len(pressed), **extra},
    )


async def _month_after(ctx: ActionContext, roots: list[Any], before: int) -> int | None:
    """The first panel's month once a navigation press has re-rendered it."""
    page = ctx.page
    began = time.monotonic()
    month: int | None = None
    with FrameCounter(page) as frames:
        while True:
            known = [m for m in _shown_months(page.calendar_grids(roots)) if m is not None]  # type: ignore[attr-defined]
            month = known[0] if known else None
            waited = time.monotonic() - began
            if (month is not None and month != before) or (
                waited >= NAV_WAIT_S and frames.count >= NAV_WAIT_FRAMES
            ):
                return month
            if waited >= PANEL_WAIT_CAP_S:
                return month
            await asyncio.sleep(0.03)


def _nav_button(
    page: Any,
    roots: list[Any],
    grids: list[Any],
    delta: int,
    learned: dict[tuple[int, str, str], int],
) -> tuple[tuple[int, str, str], Any, str] | None:
    """The navigation button to press next: the largest known step toward the month that
    does not overshoot it; else a nameless (icon) button not tried yet, to learn its step."""
    facts, handles = page.picker_buttons(roots, grids)
    best: tuple[int, tuple[int, str, str], Any, str] | None = None
    untried = None
    for index, ((name, text, disabled), handle) in enumerate(zip(facts, handles, strict=True)):
        if disabled:
            continue
        key = (index, name, text)
        step = learned.get(key, datefmt.button_step(name, text))
        label = name or text
        if step is None:
            if untried is None:
                untried = (key, handle, label)
            continue
        if step and (step > 0) == (delta > 0) and abs(step) <= abs(delta):
            if best is None or abs(step) > best[0]:
                best = (abs(step), key, handle, label)
    if best is not None:
        return best[1], best[2], best[3]
    return untried


async def _pick_time(
    ctx: ActionContext, target: Target, roots: list[Any], wanted: tuple[int, ...]
) -> list[str]:
    """Click the hour, minute (and second) in the panel's columns, or one after the other on
    a clock face that turns from hours to minutes after the first click."""
    page = ctx.page
    picked: list[str] = []
    for position, part in enumerate(wanted):
        facts, handles = page.time_columns(roots, [])  # type: ignore[attr-defined]
        groups = list(dict.fromkeys(fact[0] for fact in facts))
        if len(groups) == 1:
            group = groups[0]  # a clock face: it shows the numbers of the part being set
        elif position < len(groups):
            group = groups[position]
        elif part == 0:
            continue  # no seconds column: a zero second is what the picker keeps
        else:
            raise target.failure(
                ErrorCode.NOT_FOUND,
                f"{target.name} has no column for the seconds; nothing more was picked",
                {"picked": picked},
            )
        items = [
            (fact, handle) for fact, handle in zip(facts, handles, strict=True)
            if fact[0] == group and int(fact[1]) == part
        ]
        if not items:
            shown = [fact[1] for fact in facts if fact[0] == group][:60]
            raise target.failure(
                ErrorCode.NOT_FOUND, f"no {part:02d} to pick in the time panel of {target.name}",
                {"options": shown, "picked": picked},
            )
        fact, handle = items[0]
        if fact[2]:
            raise target.failure(
                ErrorCode.NOT_ENABLED, f"{part:02d} cannot be picked in {target.name} (disabled)"
            )
        if page.reveal_in_list(handle):  # type: ignore[attr-defined]
            # Some columns take the item that scrolling brought under their marker once the
            # scroll ends: let that happen before the click sets the wanted one.
            await asyncio.sleep(REVEAL_SETTLE_S)
            await ctx.settle(short=True)
        await _still(page, handle)
        await _press(ctx, target, handle, fact[1])
        # Columns scroll the picked item into place, smoothly, and some read the value from
        # where every column stands once scrolling ends: the next click waits for that.
        await _still(page, handle)
        picked.append(f"{part:02d}")
    return picked


async def _still(page: Any, handle: Any) -> None:
    """Wait (frames, capped) until the element stays where it is: its list stopped scrolling."""
    began = time.monotonic()
    last: tuple[float, float] | None = None
    steady = 0
    while steady < STILL_FRAMES and time.monotonic() - began < STILL_CAP_S:
        await page.next_frame()
        hit = page.hit_test(handle)
        now = (round(hit.x), round(hit.y))
        steady = steady + 1 if now == last else 0
        last = now


async def _confirm(ctx: ActionContext, target: Target, roots: list[Any]) -> bool:
    """Press the panel's OK button when it has an enabled one (pickers that commit only on
    confirmation); False when there is none."""
    page = ctx.page
    live = [r for r in roots if page.is_connected(r)]  # a portal's wrapper may be 0x0 itself
    if not live:
        return False
    facts, handles = page.picker_buttons(live, [])  # type: ignore[attr-defined]
    for (name, text, disabled), handle in zip(facts, handles, strict=True):
        if not disabled and datefmt.is_confirm(name, text):
            # Below the fold too: without it the field shows a preview the picker drops.
            await _press(ctx, target, handle, name or text)
            return True
    return False
