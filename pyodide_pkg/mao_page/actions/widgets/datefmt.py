"""Dates and times as pickers write them (pure logic for ``date``): the ISO values an agent
gives, the month a calendar header shows, the date a day cell states, what a picker's
navigation buttons do, and whether a field now shows the wanted value.

Month names are read in English (full or three letters) and in the numeric CJK form
("12 月", "2026年12月"); other languages' pickers are read from the cells' own date labels
or the header's numbers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

_MONTHS = (
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december",
)
_MONTH_WORD = re.compile(r"[a-z]+")
_YEAR = re.compile(r"(?<!\d)(1[89]\d\d|2[01]\d\d)(?!\d)")
_CJK_MONTH = re.compile(r"(?<!\d)(\d{1,2})\s*月")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_TIME = re.compile(r"^(\d{1,2}):(\d{2})(?::(\d{2}))?$")
# "A – B", "A - B", "A ~ B", "A to B", "A/B" (ISO 8601 interval) between two ISO dates.
_RANGE = re.compile(r"^(\d{4}-\d{2}-\d{2})\s*(?:[–—~/]|\s-\s|\sto\s)\s*(\d{4}-\d{2}-\d{2})$")


@dataclass(frozen=True, slots=True)
class Wanted:
    """What a picker fill asks for: one date, a range (two dates) or a time of day."""

    kind: str  # date | range | time
    dates: tuple[date, ...] = ()
    time: tuple[int, ...] = ()  # hour, minute[, second]

    @property
    def text(self) -> str:
        if self.kind == "time":
            return ":".join(f"{part:02d}" for part in self.time)
        return " – ".join(d.isoformat() for d in self.dates)


def parse_wanted(value: str) -> Wanted | None:
    """The picker value an agent gave in ISO form, or None when it is not one."""
    text = " ".join(value.split())
    try:
        if _ISO_DATE.match(text):
            return Wanted("date", (date.fromisoformat(text),))
        if match := _RANGE.match(text):
            first, last = date.fromisoformat(match[1]), date.fromisoformat(match[2])
            return Wanted("range", (first, last)) if first <= last else None
    except ValueError:
        return None
    if match := _TIME.match(text):
        parts = tuple(int(p) for p in match.groups() if p is not None)
        if parts[0] < 24 and all(p < 60 for p in parts[1:]):
            return Wanted("time", time=parts)
    return None


def month_number(word: str) -> int | None:
    """1-12 for an English month name or its first three letters ("Sept" too)."""
    word = word.casefold()
    if len(word) < 3:
        return None
    for index, name in enumerate(_MONTHS):
        if name.startswith(word):
            return index + 1
    return None


def _month_names(text: str) -> list[int]:
    return [m for word in _MONTH_WORD.findall(text.casefold()) if (m := month_number(word))]


def parse_month(text: str) -> tuple[int, int] | None:
    """(year, month) a calendar header shows: "Dec 2026", "December 2026", "12 月 2026",
    "2026年12月", "2026 12"; None when it names no single month of a year."""
    years = _YEAR.findall(text)
    if len(set(years)) != 1:
        return None
    year = int(years[0])
    if match := _CJK_MONTH.search(text):
        month = int(match[1])
        return (year, month) if 1 <= month <= 12 else None
    names = set(_month_names(text))
    if len(names) == 1:
        return year, names.pop()
    if names:
        return None
    rest = [int(n) for n in re.findall(r"(?<!\d)\d{1,2}(?!\d)", _YEAR.sub(" ", text))]
    months = [n for n in rest if 1 <= n <= 12]
    return (year, months[0]) if len(months) == 1 and len(rest) == 1 else None


def parse_date(text: str) -> date | None:
    """The date a day cell states: "2026-12-02", "2026/12/02", "2026年12月2日",
    "Wednesday, December 2, 2026", "2 December 2026"; None for anything else."""
    try:
        if match := re.search(r"(?<!\d)(\d{4})[-/.年]\s*(\d{1,2})[-/.月]\s*(\d{1,2})(?!\d)", text):
            return date(int(match[1]), int(match[2]), int(match[3]))
        years = _YEAR.findall(text)
        names = _month_names(text)
        if len(years) == 1 and len(names) == 1:
            days = [int(n) for n in re.findall(r"(?<!\d)\d{1,2}(?!\d)", _YEAR.sub(" ", text))]
            if len(days) == 1:
                return date(int(years[0]), names[0], days[0])
    except ValueError:
        return None
    return None


def month_index(year: int, month: int) -> int:
    return year * 12 + month - 1


# What a picker button does, from its accessible name or its text.
_PREVIOUS = re.compile(r"\b(prev|previous|last|back|earlier)\b|上一?个?|前一?个?")
_NEXT = re.compile(r"\b(next|forward|later)\b|下一?个?|后一?个?")
_YEAR_WORD = re.compile(r"\byears?\b|年")
_MONTH_WORD_RE = re.compile(r"\bmonths?\b|月")
_DECADE = re.compile(r"\bdecades?\b|十年")
_CONFIRM = re.compile(r"^(ok|okay|confirm|done|apply|select|set|确定|确认|完成)$")
_ARROWS = set("‹›«»<>←→⟨⟩❮❯◀▶◂▸")


def button_step(name: str, text: str) -> int | None:
    """Months one press of a navigation button moves (-12, -1, 1, 12, ±120), from its name or
    text; 0 for a button that is something else; None when nameless (an icon only): what it
    does is learned by pressing it."""
    said = (name or text).casefold()
    if not said.strip() or set(said.replace(" ", "")) <= _ARROWS:
        return None
    backwards = bool(_PREVIOUS.search(said))
    forwards = bool(_NEXT.search(said))
    if backwards == forwards:
        return 0
    if _DECADE.search(said):
        size = 120
    elif _YEAR_WORD.search(said):
        size = 12
    elif _MONTH_WORD_RE.search(said):
        size = 1
    else:
        return 0
    return -size if backwards else size


def is_confirm(name: str, text: str) -> bool:
    """Whether a panel button commits the choice (OK, Confirm, Done, 确定)."""
    return bool(_CONFIRM.match(" ".join((text or name).split()).casefold()))


def shows_date(shown: str, wanted: date) -> bool:
    """Whether a field's text shows the date, in ISO or a common local format (numeric in
    any of the usual orders, or with the month's name)."""
    if wanted.isoformat() in shown:
        return True
    y, m, d = wanted.year, wanted.month, wanted.day
    for a, b, c in re.findall(
        r"(?<!\d)(\d{1,4})[-/.年]\s*(\d{1,2})[-/.月]\s*(\d{1,4})(?!\d)", shown
    ):
        numbers = (int(a), int(b), int(c))
        if numbers in ((y, m, d), (m, d, y), (d, m, y), (m, d, y % 100), (d, m, y % 100)):
            return True
    for chunk in re.split(r"[–—~]|\s-\s|\sto\s", shown):
        if parse_date(chunk) == wanted:
            return True
    return False


def shows_time(shown: str, wanted: tuple[int, ...]) -> bool:
    """Whether a field's text shows the time (24-hour, or 12-hour with AM/PM)."""
    for match in re.finditer(
        r"(?<!\d)(\d{1,2}):(\d{2})(?::(\d{2}))?\s*([ap]\.?m\.?)?", shown, re.I
    ):
        hour, minute = int(match[1]), int(match[2])
        if match[4]:
            hour = hour % 12 + (12 if match[4].lower().startswith("p") else 0)
        second = int(match[3]) if match[3] else 0
        if (hour, minute) == wanted[:2] and (len(wanted) < 3 or second == wanted[2]):
            return True
    return False
