"""Custom selects (SPEC A1): single, multiple (tags), searchable, cascaders and tree selects.

Open the widget as a user would (a click, unless its popup is already open), reach each
wanted choice in the popup (``popup.locate``), click it, close what stays open, then verify
what the widget now *shows*. Several values are several choices in order: the tags of a
multiple select, or a cascader's path (``["Zhejiang", "Hangzhou"]``), where each pick opens
the next column and the last closes the popup; a path widget then shows at least the last
label. In a tree select the same path unfolds the nodes on the way and chooses the leaf. An element
whose click opens no popup is not a select: ``unsupported``.
"""

from __future__ import annotations

from typing import Any

from ...dom import facts as F
from ...dom.textrules import fold
from ...protocol import ErrorCode
from .. import keyboard
from ..actionability import ensure_actionable, hit_test
from ..context import ActionContext, Target
from ..keys import parse_key
from . import popup

# Text fields that may be a select's face: a read-only one is a picker's display, an editable
# one may filter a list of suggestions as it is typed into.
_FIELD_TYPES = ("text", "search", "")


def opens_choices(target: Target) -> bool:
    """Whether choosing on this element may open a list of choices, from what it states
    (role, aria-expanded) or is (a text field); clicking anything else to find out could act
    on a button the agent did not mean to press."""
    row = target.row
    roles = {target.entry.role, row[F.ROLE]}
    if roles & {"combobox", "listbox"}:
        return True
    if row[F.ARIA_EXPANDED] in ("true", "false"):
        return True
    return row[F.TAG] == "input" and (row[F.TYPE] or "").lower() in _FIELD_TYPES


def _expanded(ctx: ActionContext, target: Target) -> str | None:
    """The widget's own aria-expanded ("true"/"false"), or None when it states none."""
    value = ctx.page.row_of(target.handle)[F.ARIA_EXPANDED]
    return value if value in ("true", "false") else None


def is_open(ctx: ActionContext, target: Target, before: list[Any]) -> bool:
    expanded = _expanded(ctx, target)
    if expanded is not None:
        return expanded == "true"
    return bool(ctx.page.popup_roots(before))  # type: ignore[attr-defined]


async def choose(ctx: ActionContext, target: Target, values: list[str]) -> dict[str, Any]:
    point = await ensure_actionable(ctx, target)
    assert point is not None
    page = ctx.page
    is_listbox = (target.entry.role == "listbox" or target.row[F.ROLE] == "listbox")
    before = page.popup_roots(None)  # type: ignore[attr-defined]
    chosen: list[str] = []
    methods: list[str] = []
    unfolded: list[str] = []
    closed_itself = False

    async def perform() -> dict[str, Any]:
        nonlocal closed_itself
        for position, wanted in enumerate(values):
            search = popup.Search(wanted, before)
            if not is_listbox and not is_open(ctx, target, before):
                page.click(target.handle, point.x, point.y)
                await ctx.settle(short=True)
            choice = await popup.locate(ctx, target, search)
            if choice is None:
                opened = is_listbox or is_open(ctx, target, before) or bool(search.seen)
                await _close(ctx, target, before)
                if not opened:
                    raise target.failure(
                        ErrorCode.UNSUPPORTED,
                        f"clicking {target.name} opened no list of choices; it is not a select "
                        "(use page_click, page_fill or page_check for it); nothing was chosen",
                    )
                raise popup.failure(target, search)
            # A path down a tree ("Engineering", "Backend"): the nodes on the way are unfolded,
            # not chosen; a cascader's columns have no toggle and are clicked.
            if position < len(values) - 1 and await popup.expand_node(ctx, search, choice):
                unfolded.append(choice.label)
                continue
            await popup.activate(ctx, target, choice)
            chosen.append(choice.label)
            methods.append(choice.via)
            await ctx.settle(short=True)
        closed_itself = not is_listbox and not is_open(ctx, target, before)
        return {}

    outcome = await ctx.guarded(perform)
    left_open = not is_listbox and is_open(ctx, target, before)
    closed_with = await _close(ctx, target, before, toggle=True)
    if left_open:
        # SPEC A7: what the select opened to do its work is closed again, and checked.
        outcome["popupClosed"] = not is_open(ctx, target, before)
        outcome["closedWith"] = closed_with
    shown = page.combobox_display(target.handle)
    # A path widget (each pick kept the popup open, the last closed it) may show only the leaf.
    required = chosen[-1:] if closed_itself and len(chosen) > 1 else chosen
    missing = [label for label in required if fold(label) not in fold(shown)]
    if missing:
        raise target.failure(
            ErrorCode.VERIFICATION_FAILED,
            f"{target.name} does not show {missing} after choosing it",
            {"shown": shown[:200]},
        )
    outcome.update({"selected": chosen, "via": methods})
    if unfolded:
        outcome["unfolded"] = unfolded
    return outcome


async def _close(
    ctx: ActionContext, target: Target, before: list[Any], *, toggle: bool = False
) -> str:
    """Close a popup that stayed open (multiple choice), as a person would: Escape, and when
    the widget ignores it and ``toggle`` (choices were made: the trigger is known to be the
    widget's), a click on its trigger, which toggles it. Only when it is open: an Escape with
    nothing open may close the dialog the widget sits in. Answers how it closed ("" when it
    was not open or stayed open)."""
    if not is_open(ctx, target, before):
        return ""
    await keyboard.press(ctx, target.handle, parse_key("Escape"))
    await ctx.settle(short=True)
    if not is_open(ctx, target, before):
        return "Escape"
    if not toggle:
        return ""
    point = hit_test(ctx, target.handle)
    if point.ok:
        ctx.page.click(target.handle, point.x, point.y)
        await ctx.settle(short=True)
        if not is_open(ctx, target, before):
            return "trigger"
    return ""
