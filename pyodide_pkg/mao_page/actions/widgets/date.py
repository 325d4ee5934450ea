"""Date, time and range pickers with a text input (SPEC A1, A3): fill in the widget's own
input format, then commit the way its user does.

``page_fill`` sets the value and leaves the field (blur), which commits most pickers. Some
commit only on Enter and throw the typed text away on blur (a range picker whose other end is
still empty, for one): when the value was reverted, type it again and press Enter, as a user
would. The Enter goes to the widget only; it never submits the form from inside a fill.
"""

from __future__ import annotations

from typing import Any

from ...keyboard import parse_key
from ..context import ActionContext, Target

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
