"""``page_keyboard``: text, named keys and combos (SPEC A1), each press dispatched as
keydown / keypress / keyup, with the default actions that synthetic events do not get from
the browser emulated here and reported in the outcome."""

from __future__ import annotations

from typing import Any

from .. import facts as F
from ..keyboard import KeyPress, parse_key, text_keys
from ..protocol import KeyboardAction
from ..scanner import is_fillable
from .actionability import ensure_actionable
from .context import ActionContext, Target

TYPED_CHARS_LIMIT = 500  # per-character key events beyond this are inserted in one piece


async def run(ctx: ActionContext, action: KeyboardAction, target: Target | None) -> dict[str, Any]:
    page = ctx.page
    if target is not None:
        await ensure_actionable(ctx, target, hit=False)
        page.focus(target.handle)
    focused = page.active_element()
    emulated: list[str] = []
    presses = [parse_key(action.key)] if action.key is not None else text_keys(action.text or "")

    async def perform() -> dict[str, Any]:
        nonlocal focused
        prevented = 0
        bulk = ""
        for position, key in enumerate(presses):
            if action.text is not None and position >= TYPED_CHARS_LIMIT:
                bulk = action.text[position:]
                break
            done, focused = await press(ctx, focused, key, emulated)
            prevented += 0 if done else 1
        if bulk and focused is not None and editable(ctx, focused):
            page.insert_text(focused, bulk)
            emulated.append(f"insertText({len(bulk)} chars at once)")
        return {"keys": len(presses), "prevented": prevented}

    outcome = await ctx.guarded(perform)
    outcome["emulated"] = emulated
    return outcome


def editable(ctx: ActionContext, handle: Any) -> bool:
    row = ctx.page.row_of(handle)
    return bool(row[F.CONTENTEDITABLE]) or (
        row[F.TAG] in ("input", "textarea")
        and is_fillable(row)
        and not row[F.READONLY]
        and not row[F.DISABLED]
    )


async def press(
    ctx: ActionContext, focused: Any, key: KeyPress, emulated: list[str] | None = None
) -> tuple[bool, Any]:
    """One key press: keydown, keypress, default action, keyup. Returns (default action
    allowed, the element focused afterwards)."""
    page = ctx.page
    emulated = emulated if emulated is not None else []
    init = key.event_init()
    for modifier in key.modifier_presses():
        page.dispatch_key(focused, "keydown", modifier)
    allowed = page.dispatch_key(focused, "keydown", init)
    if allowed and key.produces_keypress:
        allowed = page.dispatch_key(focused, "keypress", {**init, "charCode": key.char_code})
    if allowed:
        focused = default_action(ctx, focused, key, emulated)
    page.dispatch_key(focused, "keyup", init)
    for modifier in reversed(key.modifier_presses()):
        page.dispatch_key(focused, "keyup", modifier)
    return allowed, focused


def default_action(ctx: ActionContext, focused: Any, key: KeyPress, emulated: list[str]) -> Any:
    """What the browser would do for a trusted press of ``key`` on ``focused``; returns the
    element focused afterwards."""
    page = ctx.page
    row = page.row_of(focused) if focused is not None else None
    tag = row[F.TAG] if row else ""
    can_edit = focused is not None and editable(ctx, focused)
    name = key.key
    if key.is_select_all:
        if focused is not None and page.select_all(focused):
            emulated.append("selectAll")
        return focused
    if key.has_command_modifier:
        return focused  # shortcuts belong to the page; nothing else is emulated
    if key.is_printable and can_edit:
        page.insert_text(focused, name)
        emulated.append("insertText")
    elif name in ("Backspace", "Delete") and can_edit:
        page.delete_text(focused, name == "Delete")
        emulated.append("delete")
    elif name == "Enter":
        if can_edit and (tag == "textarea" or row[F.CONTENTEDITABLE]):
            page.insert_text(focused, "\n")
            emulated.append("insertLineBreak")
        elif tag == "input" and page.submit_implicitly(focused):
            emulated.append("submitForm")
        elif focused is not None and (
            tag in ("button", "a", "summary")
            or (row and row[F.ROLE] in ("button", "link", "menuitem", "tab", "option"))
        ):
            page.activate(focused)
            emulated.append("activate")
    elif name == " " and focused is not None and not can_edit:
        if (
            tag in ("button", "summary")
            or (
                tag == "input" and row[F.TYPE] in ("checkbox", "radio", "button", "submit", "reset")
            )
            or (
                row
                and row[F.ROLE]
                in ("button", "checkbox", "switch", "radio", "menuitem", "tab", "option")
            )
        ):
            page.activate(focused)
            emulated.append("activate")
    elif name == "Tab":
        moved = page.move_focus(focused, key.shift)
        if moved is not None:
            emulated.append("focusPrevious" if key.shift else "focusNext")
            return moved
    elif name in ("ArrowDown", "ArrowRight", "ArrowUp", "ArrowLeft") and focused is not None:
        delta = 1 if name in ("ArrowDown", "ArrowRight") else -1
        if tag == "input" and row[F.TYPE] == "radio":
            moved = page.step_radio(focused, delta)
            if moved is not None:
                emulated.append("checkNextRadio")
                return moved
        elif tag == "select" and page.step_select(focused, delta):
            emulated.append("changeSelection")
    return focused
