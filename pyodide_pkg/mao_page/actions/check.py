"""``page_check`` / ``page_uncheck``: checkboxes, radios and switches, native or ARIA."""

from __future__ import annotations

from typing import Any

from ..dom import facts as F
from ..protocol import CheckAction, ErrorCode, UncheckAction
from .actionability import ensure_actionable
from .changes import checked_of
from .context import ActionContext, Target

CHECKABLE_ROLES = frozenset({"checkbox", "radio", "switch", "menuitemcheckbox", "menuitemradio"})


async def check(ctx: ActionContext, action: CheckAction, target: Target) -> dict[str, Any]:
    return await set_checked(ctx, target, True)


async def uncheck(ctx: ActionContext, action: UncheckAction, target: Target) -> dict[str, Any]:
    return await set_checked(ctx, target, False)


async def set_checked(ctx: ActionContext, target: Target, want: bool) -> dict[str, Any]:
    page, entry = ctx.page, target.entry
    control = page.control_of(entry.handle) or entry.handle
    control_row = page.row_of(control)
    native = control_row[F.CHECKED] >= 0
    if (
        not native
        and control_row[F.ARIA_CHECKED] not in ("true", "false", "mixed")
        and entry.role not in CHECKABLE_ROLES
    ):
        raise target.failure(
            ErrorCode.UNSUPPORTED, f"{target.name} is not a checkbox, radio or switch"
        )
    is_radio = control_row[F.TYPE] == "radio" or entry.role in ("radio", "menuitemradio")
    if not want and is_radio:
        raise target.failure(
            ErrorCode.INVALID_REQUEST,
            f"{target.name} is a radio button; check another option of its group instead",
        )
    if checked_of(control_row) is want:
        return {"changed": False, "checked": want}
    # A custom control backed by a hidden input is operated through what the user sees:
    # the element of the ref if rendered, else the input's label.
    handle = entry.handle
    if not page.is_rendered(handle):
        label = page.label_for(control)
        if label is not None and page.is_rendered(label):
            handle = label
    row = page.row_of(handle) if handle is not entry.handle else target.row
    point = await ensure_actionable(ctx, target, handle=handle, row=row)
    assert point is not None

    async def perform() -> dict[str, Any]:
        page.click(handle, point.x, point.y)
        return {}

    outcome = await ctx.guarded(perform)
    # Read back after the page has re-rendered: a library whose model ignored the click
    # puts its control back, and that is the state the agent sees next.
    await page.next_frame()
    after = checked_of(page.row_of(control))
    if after is not want:
        raise target.failure(
            ErrorCode.VERIFICATION_FAILED,
            f"{target.name} is still {'checked' if after else 'unchecked'} after clicking it",
        )
    outcome.update({"changed": True, "checked": want})
    return outcome
