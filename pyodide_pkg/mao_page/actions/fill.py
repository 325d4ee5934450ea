"""``page_fill``: set a field's value the way frameworks observe it, then verify it
(SPEC A1, A3)."""

from __future__ import annotations

import re
from typing import Any

from .. import facts as F
from ..errors import ToolFailure
from ..protocol import ErrorCode, FillAction
from ..scanner import is_fillable
from . import select
from .actionability import ensure_actionable
from .context import ActionContext, Target
from .widgets import date, rate, slider

# Value formats of the input types whose value is not free text (HTML §4.10.5.1).
_NUMBER = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")
VALUE_FORMATS: dict[str, tuple[re.Pattern[str], str]] = {
    "date": (re.compile(r"^\d{4}-\d{2}-\d{2}$"), "YYYY-MM-DD"),
    "time": (re.compile(r"^\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$"), "HH:MM or HH:MM:SS"),
    "datetime-local": (
        re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$"),
        "YYYY-MM-DDTHH:MM",
    ),
    "month": (re.compile(r"^\d{4}-\d{2}$"), "YYYY-MM"),
    "week": (re.compile(r"^\d{4}-W\d{2}$"), "YYYY-Www"),
    "color": (re.compile(r"^#[0-9a-fA-F]{6}$"), "#rrggbb"),
    "number": (_NUMBER, "a number"),
    "range": (_NUMBER, "a number"),
}


def format_error(row: list[Any], value: str) -> str | None:
    """The expected format when ``value`` is not one the field's input type accepts."""
    input_type = row[F.TYPE] if row[F.TAG] == "input" else ""
    if input_type in VALUE_FORMATS and value != "":
        pattern, expected = VALUE_FORMATS[input_type]
        if not pattern.match(value):
            return f"{value!r} is not a valid value for a {input_type} field; give {expected}"
    return None


async def run(ctx: ActionContext, action: FillAction, target: Target) -> dict[str, Any]:
    row, value = target.row, action.value
    if row[F.TAG] == "select":
        return await select.choose(ctx, target, [value])
    if "slider" in (target.entry.role, row[F.ROLE]) and row[F.TAG] != "input":
        return await slider.set_value(ctx, target, value)
    if rate.is_rating(ctx, target, value):
        return await rate.set_value(ctx, target, value)
    if not is_fillable(row) and slider.is_slider_shaped(ctx, target):
        return await slider.set_value(ctx, target, value)
    # A read-only picker field: the value is picked in the calendar or clock it opens.
    if (wanted := date.wants_picker(target, value)) is not None:
        return await date.pick(ctx, target, wanted)
    if not is_fillable(row):
        raise target.failure(
            ErrorCode.NOT_EDITABLE,
            f"{target.name} cannot be filled; use page_click, page_check or page_select for it",
        )
    wrong = format_error(row, value)
    if wrong is not None:
        raise target.failure(ErrorCode.INVALID_REQUEST, f"{wrong}. Nothing was done")
    await ensure_actionable(ctx, target, editable=True, hit=True)
    page, handle = ctx.page, target.handle
    previous = page.read_value(handle)

    async def perform() -> dict[str, Any]:
        # Focus first and let the page react, as it does to a user's click before typing:
        # pickers mount their panel on focus and drop a `change` that arrives before it.
        page.focus(handle)
        await page.next_frame()
        immediate = page.fill(handle, value)
        await page.next_frame()
        after_frame = page.read_value(handle)
        after_blur = page.blur(handle)
        # Whatever the page does on leaving the field (a picker closing commits its own
        # selection) lands within a frame; the value must still be the one asked for.
        await page.next_frame()
        return {
            "readBack": {"immediate": immediate, "afterFrame": after_frame, "afterBlur": after_blur}
        }

    outcome = await ctx.guarded(perform)
    final = page.read_value(handle)
    expected_value = " ".join(value.split()) if row[F.CONTENTEDITABLE] else value
    if final == expected_value:
        status = "applied"
    elif value != "" and final in ("", previous) and await date.commit_with_enter(ctx, target, value) == value:
        final, status = value, "applied"
        outcome["committedWith"] = "Enter"
    elif value != "" and final in ("", previous):
        raise ToolFailure(
            ErrorCode.VERIFICATION_FAILED,
            f"the page reverted the value of {target.name}",
            element_id=target.entry.element_id,
            details={
                "status": "reverted",
                **({} if target.entry.sensitive else outcome["readBack"]),
            },
        )
    else:
        status = "reformatted"
    outcome["status"] = status
    if target.entry.sensitive:  # SPEC P5: never echo a sensitive value
        outcome.pop("readBack", None)
    else:
        outcome["value"] = final
    return outcome
