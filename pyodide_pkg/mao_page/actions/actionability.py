"""Whether an element can be acted on now (SPEC A2), as a closed set of answers.

Each check answers ``None`` (go on) or one ``Blocker``; the caller turns a blocker into one
typed ``ToolFailure`` with its own error code. Pointer actions retry the hit test with a short
backoff, since an overlay fading out or a list re-laying out clears within a few frames.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from enum import StrEnum
from typing import Any

from ..bridge.page import HitTest, Outcome
from ..dom import facts as F
from ..errors import ToolFailure
from ..protocol import ErrorCode
from .context import ActionContext, Target

HIT_TEST_BACKOFF_MS = (0, 20, 100, 250)
STABLE_FRAMES = 10  # frames to wait for the same box twice in a row


class Blocker(StrEnum):
    NOT_CONNECTED = "not_connected"
    NOT_VISIBLE = "not_visible"
    NOT_ENABLED = "not_enabled"
    NOT_EDITABLE = "not_editable"
    NOT_STABLE = "not_stable"
    OUTSIDE_VIEWPORT = "outside_viewport"
    OBSCURED = "obscured"


_CODES = {
    Blocker.NOT_CONNECTED: ErrorCode.STALE_REF,
    Blocker.NOT_VISIBLE: ErrorCode.NOT_VISIBLE,
    Blocker.NOT_ENABLED: ErrorCode.NOT_ENABLED,
    Blocker.NOT_EDITABLE: ErrorCode.NOT_EDITABLE,
    Blocker.NOT_STABLE: ErrorCode.NOT_STABLE,
    Blocker.OUTSIDE_VIEWPORT: ErrorCode.OBSCURED,
    Blocker.OBSCURED: ErrorCode.OBSCURED,
}


def state_blocker(
    row: list[Any], rendered: bool, *, editable: bool = False, enabled: bool = True
) -> Blocker | None:
    """Visible, enabled (unless ``enabled`` is false: a pointer can rest on a disabled
    control), and editable when asked, from the element's fact row."""
    if not rendered:
        return Blocker.NOT_VISIBLE
    if enabled and (row[F.DISABLED] or row[F.ARIA_DISABLED] == "true"):
        return Blocker.NOT_ENABLED
    if editable and (row[F.READONLY] or row[F.ARIA_READONLY] == "true"):
        return Blocker.NOT_EDITABLE
    return None


def hit_blocker(hit: HitTest) -> Blocker | None:
    """Whether the pointer would reach the element at its action point."""
    if hit.outcome is Outcome.DONE:
        return None
    if hit.outcome is Outcome.NOT_CONNECTED:
        return Blocker.NOT_CONNECTED
    if hit.outcome is Outcome.OUTSIDE_VIEWPORT:
        return Blocker.OUTSIDE_VIEWPORT
    return Blocker.OBSCURED


def is_stable(boxes: Sequence[tuple[float, float, float, float]]) -> bool:
    """The same box over the last two frames (like Playwright's "stable")."""
    return len(boxes) >= 2 and boxes[-1] == boxes[-2]


def failure(blocker: Blocker, target: Target, hit: HitTest | None = None) -> ToolFailure:
    name = target.name
    if blocker is Blocker.OBSCURED:
        covered_by = hit.hit if hit is not None and hit.hit else "another element"
        return target.failure(
            ErrorCode.OBSCURED,
            f"{name} is covered by {covered_by}; nothing was done",
            details={"coveredBy": covered_by},
        )
    messages = {
        Blocker.NOT_CONNECTED: f"{name} is no longer in the page; call page_inspect again",
        Blocker.NOT_VISIBLE: f"{name} is not visible",
        Blocker.NOT_ENABLED: f"{name} is disabled",
        Blocker.NOT_EDITABLE: f"{name} is read-only",
        Blocker.NOT_STABLE: f"{name} kept moving",
        Blocker.OUTSIDE_VIEWPORT: f"{name} is outside the viewport even after scrolling; "
        "nothing was done",
    }
    return target.failure(_CODES[blocker], messages[blocker])


async def ensure_actionable(
    ctx: ActionContext,
    target: Target,
    *,
    editable: bool = False,
    hit: bool = True,
    enabled: bool = True,
    handle: Any = None,
    row: list[Any] | None = None,
) -> HitTest | None:
    """Visible, enabled, editable when asked, stable, scrolled into view and, for pointer
    actions (``hit``), receiving the pointer at its action point, which is returned.
    ``handle``/``row``: act on another element than the ref's own (a custom checkbox's label)."""
    page = ctx.page
    handle = handle if handle is not None else target.handle
    rendered = page.is_rendered(handle)
    if not rendered and hit:
        rendered = await reveal_by_hover(ctx, handle)
    blocker = state_blocker(
        row if row is not None else target.row,
        rendered,
        editable=editable,
        enabled=enabled,
    )
    if blocker is not None:
        raise failure(blocker, target)
    page.scroll_into_view(handle)
    await wait_stable(ctx, target, handle)
    if not hit:
        ctx.on_acting(target.entry, handle)
        return None
    result = await hit_point(ctx, handle)
    blocker = hit_blocker(result)
    if blocker is not None:
        raise failure(blocker, target, result)
    ctx.on_acting(target.entry, handle)
    return result


async def reveal_by_hover(ctx: ActionContext, handle: Any) -> bool:
    """SPEC A7: a control shown by a ``:hover`` rule of an element hovered earlier (a row's
    button) is hidden once the pointer moved on; as a person would, the pointer goes back over
    that host first. Whether the control is now shown."""
    page = ctx.page
    host = page.hover_host_for(handle)
    if host is None:
        return False
    page.scroll_into_view(host)
    point = hit_test(ctx, host)
    if not point.ok:
        return False
    page.hover(host, point.x, point.y)
    await page.next_frame()
    ctx.step.hovered_host = point.hit
    return page.is_rendered(handle)


async def hit_point(ctx: ActionContext, handle: Any) -> HitTest:
    """The hit test, retried with a short backoff while something else is at the point."""
    result = HitTest(Outcome.COVERED)
    for delay in HIT_TEST_BACKOFF_MS:
        if delay:
            await asyncio.sleep(delay / 1000)
        result = hit_test(ctx, handle)
        if result.outcome in (Outcome.DONE, Outcome.NOT_CONNECTED):
            break
    return result


def hit_test(ctx: ActionContext, handle: Any) -> HitTest:
    """One hit test of an element an action is about to click. SPEC U4: when the SDK's own
    panel is what covers it, the panel moves aside (recorded in the step) and the point is
    tested again: our UI never fails an action. Every pointer act tests through here."""
    result = ctx.page.hit_test(handle)
    if result.outcome is Outcome.COVERED_BY_SDK:
        place = ctx.page.move_panel_aside(handle)
        if place:
            ctx.step.panel_moved_to = place
            result = ctx.page.hit_test(handle)
    return result


async def wait_stable(ctx: ActionContext, target: Target, handle: Any) -> None:
    boxes: list[tuple[float, float, float, float]] = []
    for _ in range(STABLE_FRAMES):
        await ctx.page.next_frame()
        row = ctx.page.row_of(handle)
        boxes.append((row[F.X], row[F.Y], row[F.WIDTH], row[F.HEIGHT]))
        if is_stable(boxes):
            return
    raise failure(Blocker.NOT_STABLE, target)
