"""``page_fill``: set a field's value the way frameworks observe it, then verify it
(SPEC A1, A3)."""

from __future__ import annotations

import asyncio
import re
import time
import unicodedata
from decimal import Decimal, InvalidOperation
from typing import Any

from ..dom import facts as F
from ..dom.textrules import squash_any
from ..errors import ToolFailure
from ..protocol import ErrorCode, FillAction
from ..snapshot.scanner import is_fillable
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


# What a number may be shown with besides digits: grouping (comma, dot, spaces, apostrophe,
# underscore) and one decimal mark (comma or dot).
_SHOWN_NUMBER = re.compile(r"^[-+]?[\d,. \u00a0\u202f\u2009'_]*\d[\d,. \u00a0\u202f\u2009'_]*$")


def number_parts(text: str) -> tuple[str, str, str] | None:
    """(sign, integer digits, fraction digits without trailing zeros) of a number as a field
    shows it ("1,280.50", "1.280,5", "$ 1 280", "12%"), or None when the text is not one
    number. Of two kinds of mark the last is the decimal one; one comma before exactly three
    digits groups thousands ("1,280"), any other single mark is decimal. Leading zeros count
    (a code "0012" is not "12")."""
    body = text.strip().strip("%").strip()
    while body and unicodedata.category(body[0]) == "Sc":  # a currency sign before it
        body = body[1:].strip()
    while body and unicodedata.category(body[-1]) == "Sc":
        body = body[:-1].strip()
    if not _SHOWN_NUMBER.match(body):
        return None
    sign = "-" if body[0] == "-" else ""
    body = body.lstrip("+-")
    marks = [i for i, c in enumerate(body) if c in ",."]
    decimal_at = -1
    if len({body[i] for i in marks}) == 2:
        decimal_at = marks[-1]
    elif len(marks) == 1:
        tail = body[marks[0] + 1:]
        thousands = body[marks[0]] == "," and len(tail) == 3 and tail.isdigit()
        decimal_at = -1 if thousands else marks[0]
    whole = body if decimal_at < 0 else body[:decimal_at]
    fraction = "" if decimal_at < 0 else body[decimal_at + 1:]
    groups = re.split(r"[,.]", "".join(c for c in whole if c.isdigit() or c in ",."))
    if not fraction.isdigit() and decimal_at >= 0 or any(len(g) != 3 for g in groups[1:]):
        return None  # "1.2.3", "1,2": not grouped thousands
    return sign, "".join(c for c in whole if c.isdigit()), fraction.rstrip("0")


_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_ISO_MOMENT = re.compile(r"^(?:(\d{4})-(\d{2})-(\d{2}))?[T ]?(?:(\d{2}):(\d{2})(?::(\d{2}))?)?$")
_SHOWN_TIME = re.compile(r"(\d{1,2}):(\d{2})(?::(\d{2}))?\s*([ap])?\.?m?\.?", re.IGNORECASE)


def moment_parts(text: str) -> tuple[list[int], tuple[int, int, int] | None] | None:
    """(the date's numbers in any order, (hour, minute, second)) of an ISO 8601 date and/or
    time ("2024-05-17", "08:30", "2024-05-17T08:30"), or of the same moment as a field shows
    it ("17/05/2024", "May 17, 2024", "2:30 PM"); None for text that is neither. A shown
    date is compared by its numbers as a set: day and month order is the field's business."""
    text = text.strip()
    iso = _ISO_MOMENT.match(text)
    if iso is not None and (iso.group(1) or iso.group(4)):
        year, month, day, hour, minute, second = iso.groups()
        date = sorted(int(v) for v in (year, month, day) if v is not None)
        clock = None if hour is None else (int(hour), int(minute), int(second or 0))
        return date, clock
    clock = None
    time = _SHOWN_TIME.search(text)
    if time is not None:
        hour, minute, second, half = time.groups()
        hours = int(hour) % 12 + (12 if half and half.lower() == "p" else 0) if half else int(hour)
        clock = (hours, int(minute), int(second or 0))
        text = text[:time.start()] + " " + text[time.end():]
    words = re.findall(r"[^\W\d_]+", text.casefold())
    months = [_MONTHS.index(w[:3]) + 1 for w in words if w[:3] in _MONTHS]
    date = sorted([int(v) for v in re.findall(r"\d+", text)] + months)
    if len(date) not in (0, 3) or (not date and clock is None):
        return None
    return date, clock


def _letters_and_digits(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKC", text).casefold() if c.isalnum())


def same_value(row: list[Any], asked: str, shown: str) -> bool:
    """SPEC A3: whether a field that shows ``shown`` after being filled with ``asked`` holds
    the value asked for, only formatted its own way (the success ``reformatted``), or holds
    another value (a failure: cut to its maxlength, a digit dropped, a different choice).

    - number and range inputs: the same number ("1280.50" for "1280.5");
    - date and time inputs: the same instant (Chromium drops ":00" seconds);
    - color inputs: the same color in any case;
    - other text: a date or time asked as ISO 8601 shown with the same day and time in the
      field's own format ("17/05/2024", "May 17, 2024", "2:30 PM"); the same number when
      both read as one ("1,280.50" for "1280.5", never "12805"); else the same letters and digits in
      the same order, only case, spacing and punctuation differing (an upper-cased code, a phone
      number with a mask's brackets and dashes) -- "12" of "123" is not the value asked for.
    """
    input_type = (row[F.TYPE] or "text").lower() if row[F.TAG] == "input" else "text"
    if input_type in ("number", "range"):
        try:
            return Decimal(asked) == Decimal(shown)
        except InvalidOperation:
            return False
    if input_type in ("time", "datetime-local"):
        return _instant(asked) == _instant(shown) is not None or asked == shown
    if input_type in ("color", "date", "month", "week"):
        return asked.casefold() == shown.casefold()
    asked_moment = moment_parts(asked)
    if asked_moment is not None:
        return asked_moment == moment_parts(shown)
    asked_number, shown_number = number_parts(asked), number_parts(shown)
    if asked_number is not None and shown_number is not None:
        return asked_number == shown_number
    letters = _letters_and_digits(asked)
    return bool(letters) and letters == _letters_and_digits(shown)


def _instant(text: str) -> str | None:
    """A time or local date-time with its seconds spelled out ("08:30" -> "08:30:00.000")."""
    match = re.match(r"^(\d{4}-\d{2}-\d{2}T)?(\d{2}:\d{2})(:\d{2})?(\.\d{1,3})?$", text)
    if match is None:
        return None
    day, minutes, seconds, fraction = match.groups()
    return f"{day or ''}{minutes}{seconds or ':00'}{(fraction or '.').ljust(4, '0')}"


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
    page, handle = ctx.page, target.handle
    # A user's typing stops at the field's maxlength; the value setter would not, and store a
    # value no user could have entered. Lengths in UTF-16 code units, as the browser counts.
    limit = page.max_length(handle)
    if 0 <= limit < len(value.encode("utf-16-le")) // 2:
        raise target.failure(
            ErrorCode.INVALID_REQUEST,
            f"{target.name} takes at most {limit} characters; the value has more. Nothing was done",
            {"maxLength": limit},
        )
    await ensure_actionable(ctx, target, editable=True, hit=True)
    previous = page.read_value(handle)
    waits_for_suggestions = page.suggests_while_typing(handle)
    suggestions: tuple[str, list[str]] = ("", [])

    async def perform() -> dict[str, Any]:
        nonlocal suggestions
        # Focus first and let the page react, as it does to a user's click before typing:
        # pickers mount their panel on focus and drop a `change` that arrives before it.
        page.focus(handle)
        await page.next_frame()
        # What focus opened (a picker's panel) is not an answer to the typing.
        popups_before = page.popup_roots()
        immediate = page.fill(handle, value)
        await page.next_frame()
        after_frame = page.read_value(handle)
        read = {"immediate": immediate, "afterFrame": after_frame}
        suggestions = await _suggestions(ctx, handle, popups_before, waits_for_suggestions)
        if suggestions[0] and value:
            # SPEC A3: the page answered the typing with suggestions tied to the field; a
            # person would now pick one, and leaving the field would cancel them.
            return {"readBack": read}
        after_blur = page.commit_value(handle, after_frame != previous)
        # Whatever the page does on leaving the field (a picker closing commits its own
        # selection) lands within a frame; the value must still be the one asked for.
        await page.next_frame()
        return {"readBack": {**read, "afterBlur": after_blur}}

    outcome = await ctx.guarded(perform)
    if suggestions[0] and value:
        outcome["suggestions"] = {"shownAs": suggestions[0], "texts": suggestions[1]}
        outcome["left"] = False
    final = page.read_value(handle)
    # An editable region reads back as a person reads it (act.js readValue: squashAny).
    expected_value = squash_any(value) if row[F.CONTENTEDITABLE] else value
    if final == expected_value:
        status = "applied"
    elif (
        value != ""
        and final in ("", previous)
        and await date.commit_with_enter(ctx, target, value) == value
    ):
        final, status = value, "applied"
        outcome["committedWith"] = "Enter"
    elif value != "" and final in ("", previous):
        raise _not_kept(
            target, f"the page reverted the value of {target.name}", "reverted", outcome["readBack"]
        )
    elif same_value(row, expected_value, final):
        status = "reformatted"
    else:
        # The field kept another value (cut to its maxlength, a digit dropped): not the one
        # asked for, whatever the page meant by it.
        kept = "" if target.entry.sensitive else f" ({final[:80]!r} for {value[:80]!r})"
        raise _not_kept(
            target, f"{target.name} holds another value than the one asked for{kept}", "changed",
            {"value": final, **outcome["readBack"]},
        )
    outcome["status"] = status
    if target.entry.sensitive:  # SPEC P5: never echo a sensitive value
        outcome.pop("readBack", None)
    else:
        outcome["value"] = final
    return outcome


# How long a field that says it suggests while typing (a combobox, aria-autocomplete) is
# given to show its suggestions before the fill leaves it: debounced searches wait 100-300 ms.
SUGGESTION_WAIT_MS = 700
_SUGGESTION_POLL_S = 0.05


async def _suggestions(
    ctx: ActionContext, handle: Any, popups_before: list[Any], wait: bool
) -> tuple[str, list[str]]:
    """The suggestions the page showed for the field after typing (``fieldSuggestions``):
    checked at once, and for a field that suggests while typing until they appear, within
    ``SUGGESTION_WAIT_MS``."""
    page = ctx.page
    found = page.field_suggestions(handle, popups_before)
    deadline = time.monotonic() + (SUGGESTION_WAIT_MS / 1000 if wait else 0)
    while not found[0] and time.monotonic() < deadline:
        await asyncio.sleep(_SUGGESTION_POLL_S)
        found = page.field_suggestions(handle, popups_before)
    return found


def _not_kept(target: Target, message: str, status: str, read: dict[str, Any]) -> ToolFailure:
    """``verification_failed``: the field does not hold the value asked for. ``read`` (what was
    read back) goes into the details, except for a sensitive field (SPEC P5)."""
    details = {"status": status, **({} if target.entry.sensitive else read)}
    return target.failure(ErrorCode.VERIFICATION_FAILED, message, details)
