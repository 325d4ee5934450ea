"""``page_keyboard``: text, named keys and combos (SPEC A1), each press dispatched as
keydown / keypress / keyup, with the default actions that synthetic events do not get from
the browser emulated here and reported in the outcome."""

from __future__ import annotations

from typing import Any

from ..bridge.page import Submission
from ..dom import facts as F
from ..protocol import KeyboardAction
from ..snapshot.scanner import is_fillable
from .actionability import ensure_actionable
from .context import ActionContext, Target
from .keys import KeyPress, parse_key, text_keys

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


# Where each default action happens in a real key press, as in Chromium: on keydown (editing
# keys, focus moves, arrow keys, Enter on a link, which then gets no keypress), on keypress
# (text, Enter in fields and on buttons) or on keyup (Space activates what it pressed).
# Controls with a role but no native behaviour (a div with role=button) get none: a real
# key does nothing there either, the page's own key handlers do the rest.
_SPACE_INPUTS = frozenset({"checkbox", "radio", "button", "submit", "reset", "image"})
_ENTER_CLICKS_INPUTS = frozenset({"button", "submit", "reset", "image"})
_SUBMISSION_NOTES = {
    Submission.CLICKED_DEFAULT: "clickDefaultButton",
    Submission.SUBMITTED: "submitForm",
    Submission.DEFAULT_DISABLED: "noSubmit(defaultButtonDisabled)",
    Submission.TOO_MANY_FIELDS: "noSubmit(severalFields)",
}


async def press(
    ctx: ActionContext, focused: Any, key: KeyPress, emulated: list[str] | None = None
) -> tuple[bool, Any]:
    """One key press: keydown, keypress, keyup, each followed by the default actions a real
    press has there. Returns (keydown not cancelled, the element focused afterwards)."""
    page = ctx.page
    emulated = emulated if emulated is not None else []
    init = key.event_init()
    for modifier in key.modifier_presses():
        page.dispatch_key(focused, "keydown", modifier)
    allowed = page.dispatch_key(focused, "keydown", init)
    pressed = None  # what Space pressed, activated when the key comes up
    if allowed:
        focused, keypress, pressed = _on_keydown(ctx, focused, key, emulated)
        if keypress and page.dispatch_key(focused, "keypress", {**init, "charCode": key.char_code}):
            _on_keypress(ctx, focused, key, emulated)
    if page.dispatch_key(focused, "keyup", init) and pressed is not None:
        page.activate(pressed)
        emulated.append("activate")
    for modifier in reversed(key.modifier_presses()):
        page.dispatch_key(focused, "keyup", modifier)
    return allowed, focused


def _facts(ctx: ActionContext, focused: Any) -> tuple[list[Any] | None, str, str, bool]:
    if focused is None:
        return None, "", "", False
    row = ctx.page.row_of(focused)
    return row, row[F.TAG], row[F.TYPE] if row[F.TAG] == "input" else "", editable(ctx, focused)


def _on_keydown(
    ctx: ActionContext, focused: Any, key: KeyPress, emulated: list[str]
) -> tuple[Any, bool, Any]:
    """Keydown's default actions. Returns (the element focused afterwards, whether a
    keypress follows, the element Space pressed)."""
    page = ctx.page
    row, tag, input_type, can_edit = _facts(ctx, focused)
    name = key.key
    keypress = key.produces_keypress
    if key.is_select_all:
        if focused is not None and page.select_all(focused):
            emulated.append("selectAll")
        return focused, False, None
    if key.has_command_modifier:
        return focused, False, None  # shortcuts belong to the page; nothing else is emulated
    if name in ("Backspace", "Delete") and can_edit:
        page.delete_text(focused, name == "Delete")
        emulated.append("delete")
    elif name == "Enter" and row is not None and tag in ("a", "area") and row[F.HREF]:
        page.activate(focused)  # follows the link; the browser sends no keypress then
        emulated.append("followLink")
        return focused, False, None
    elif (
        name == " "
        and row is not None
        and not can_edit
        and (tag in ("button", "summary") or input_type in _SPACE_INPUTS)
    ):
        return focused, keypress, focused
    elif name == "Tab":
        moved = page.move_focus(focused, key.shift)
        if moved is not None:
            emulated.append("focusPrevious" if key.shift else "focusNext")
            return moved, keypress, None
    elif name in ("ArrowDown", "ArrowRight", "ArrowUp", "ArrowLeft") and focused is not None:
        delta = 1 if name in ("ArrowDown", "ArrowRight") else -1
        if input_type == "radio":
            moved = page.step_radio(focused, delta)
            if moved is not None:
                emulated.append("checkNextRadio")
                return moved, keypress, None
        elif tag == "select" and page.step_select(focused, delta):
            emulated.append("changeSelection")
    return focused, keypress, None


def _on_keypress(ctx: ActionContext, focused: Any, key: KeyPress, emulated: list[str]) -> None:
    page = ctx.page
    row, tag, input_type, can_edit = _facts(ctx, focused)
    if row is None:
        return
    if key.is_printable and can_edit:
        page.insert_text(focused, key.key)
        emulated.append("insertText")
    elif key.key == "Enter":
        if can_edit and (tag == "textarea" or row[F.CONTENTEDITABLE]):
            page.insert_text(focused, "\n")
            emulated.append("insertLineBreak")
        elif input_type in _ENTER_CLICKS_INPUTS or tag in ("button", "summary"):
            page.activate(focused)
            emulated.append("activate")
        elif tag == "input":
            note = _SUBMISSION_NOTES.get(page.submit_implicitly(focused))
            if note is not None:
                emulated.append(note)
