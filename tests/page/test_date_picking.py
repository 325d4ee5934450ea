"""Date and time picking decisions (``mao_page.actions.widgets.date`` / ``datefmt``): the ISO
values a fill accepts, the month a calendar shows, which day cell is clicked, which
navigation button is pressed, and whether the field then shows the value. The browser matrix
(tests/browser/widgets, the date / date-range / time cells) proves the whole pick on real
libraries; this proves the decisions (SPEC A1 actions on every control, A3 verified results,
P5 no success without the value shown)."""

from __future__ import annotations

import asyncio
from datetime import date
from typing import Any

import pytest
from mao_page.actions.widgets import date as picker
from mao_page.actions.widgets import datefmt
from mao_page.bridge.page import CalendarRead
from mao_page.errors import ToolFailure
from mao_page.protocol import ErrorCode

from .fake_page import Element, FakeInspector, FakePage, context, element


@pytest.mark.parametrize(
    ("value", "kind", "text"),
    [
        ("2024-05-17", "date", "2024-05-17"),
        (" 2024-05-17 ", "date", "2024-05-17"),
        ("2024-06-01 – 2024-06-05", "range", "2024-06-01 – 2024-06-05"),
        ("2024-06-01 - 2024-06-05", "range", "2024-06-01 – 2024-06-05"),
        ("2024-06-01 ~ 2024-06-05", "range", "2024-06-01 – 2024-06-05"),
        ("2024-06-01 to 2024-06-05", "range", "2024-06-01 – 2024-06-05"),
        ("2024-06-01/2024-06-05", "range", "2024-06-01 – 2024-06-05"),
        ("08:30", "time", "08:30"),
        ("8:30", "time", "08:30"),
        ("08:30:15", "time", "08:30:15"),
    ],
)
def test_iso_values_a_picker_fill_accepts(value: str, kind: str, text: str) -> None:  # SPEC A1
    wanted = datefmt.parse_wanted(value)
    assert wanted is not None and wanted.kind == kind and wanted.text == text


@pytest.mark.parametrize(
    "value",
    [
        "2024-13-01",
        "2024-02-30",
        "2024-06-05 – 2024-06-01",
        "24:00",
        "08:60",
        "May 17",
        "17.05.2024",
        "",
    ],
)
def test_values_that_are_not_iso_picker_values(value: str) -> None:  # SPEC A6: typed as text
    assert datefmt.parse_wanted(value) is None


@pytest.mark.parametrize(
    ("header", "month"),
    [
        ("Dec 2026 Su Mo Tu We Th Fr Sa", (2026, 12)),
        ("‹ December ▾ › ‹ 2026 ▾ ›", (2026, 12)),
        ("Sept 2024", (2024, 9)),
        ("12 月 2026 一 二 三 四 五 六 日", (2026, 12)),
        ("2026年1月", (2026, 1)),
        ("2026 05", (2026, 5)),
        ("May 2024", (2024, 5)),
    ],
)
def test_the_month_a_calendar_header_shows(header: str, month: tuple[int, int]) -> None:
    assert datefmt.parse_month(header) == month


@pytest.mark.parametrize("header", ["", "Select date", "Dec Jan 2026", "2025 2026 Dec", "Mon Tue"])
def test_headers_naming_no_single_month(header: str) -> None:
    # Two months or years (a range panel's shared header) or none: not guessed.
    assert datefmt.parse_month(header) is None


@pytest.mark.parametrize(
    ("label", "day"),
    [
        ("2026-11-29", date(2026, 11, 29)),
        ("2026/1/5", date(2026, 1, 5)),
        ("2026年12月2日", date(2026, 12, 2)),
        ("Today, Tuesday, December 1, 2026", date(2026, 12, 1)),
        ("Wednesday, December 2, 2026", date(2026, 12, 2)),
        ("2 December 2026", date(2026, 12, 2)),
        ("17", None),
        ("Choose Friday", None),
    ],
)
def test_the_date_a_day_cell_states(label: str, day: date | None) -> None:
    assert datefmt.parse_date(label) == day


@pytest.mark.parametrize(
    ("name", "text", "step"),
    [
        ("Previous month", "‹", -1),
        ("Next month", "›", 1),
        ("Previous year", "‹", -12),
        ("Next year", "›", 12),
        ("上个月", "", -1),
        ("下个月", "", 1),
        ("上一年", "", -12),
        ("", "«", None),
        ("", "", None),
        ("Select month", "Dec ▾", 0),
        ("", "2026", 0),
        ("当前", "", 0),
        ("", "Today", 0),
    ],
)
def test_what_a_navigation_button_does(name: str, text: str, step: int | None) -> None:
    # None: an icon button; its step is learned by pressing it. 0: not navigation.
    assert datefmt.button_step(name, text) == step


@pytest.mark.parametrize(
    ("text", "confirm"),
    [("OK", True), ("Ok", True), ("确定", True), ("Now", False), ("此刻", False)],
)
def test_confirm_buttons(text: str, confirm: bool) -> None:
    assert datefmt.is_confirm("", text) is confirm


@pytest.mark.parametrize(
    ("shown", "ok"),
    [
        ("2024-05-17", True),
        ("05/17/2024", True),
        ("17.05.2024", True),
        ("May 17, 2024", True),
        ("2024年5月17日", True),
        ("2024-05-18", False),
        ("", False),
        ("2024-05", False),
    ],
)
def test_a_field_shows_the_date(shown: str, ok: bool) -> None:  # SPEC A3, P5
    assert datefmt.shows_date(shown, date(2024, 5, 17)) is ok


@pytest.mark.parametrize(
    ("shown", "wanted", "ok"),
    [
        ("08:30", (8, 30), True),
        ("08:30:00", (8, 30), True),
        ("08:30:00", (8, 30, 0), True),
        ("8:30 AM", (8, 30), True),
        ("2:30 PM", (14, 30), True),
        ("08:31", (8, 30), False),
        ("08:30:15", (8, 30, 0), False),
        ("--:--", (8, 30), False),
    ],
)
def test_a_field_shows_the_time(
    shown: str, wanted: tuple[int, ...], ok: bool
) -> None:  # SPEC A3, P5
    assert datefmt.shows_time(shown, wanted) is ok


def _grid(year: int, month: int, days: int, *, lead: list[int], tail: list[int], grid: int = 0,
          labels: bool = False) -> list[list[Any]]:
    """Cells of one month grid: the previous month's tail, the month, the next month's head."""
    def label(y: int, m: int, d: int) -> str:
        return date(y, m, d).isoformat() if labels else ""
    py, pm = (year, month - 1) if month > 1 else (year - 1, 12)
    ny, nm = (year, month + 1) if month < 12 else (year + 1, 1)
    return (
        [[grid, d, label(py, pm, d), False, False] for d in lead]
        + [[grid, d, label(year, month, d), False, True] for d in range(1, days + 1)]
        + [[grid, d, label(ny, nm, d), False, False] for d in tail]
    )


def _read(facts: list[list[Any]], headers: list[str]) -> CalendarRead:
    cells = [f"cell:{f[0]}:{f[1]}:{'in' if f[4] else 'out'}" for f in facts]
    return CalendarRead(facts, cells, [f"grid:{i}" for i in range(len(headers))], headers)


def test_a_day_by_number_is_never_a_greyed_neighbouring_day() -> None:  # SPEC A3
    # TDesign-like: no date labels; "30" appears twice (November's tail and December).
    read = _read(_grid(2026, 12, 31, lead=[30], tail=[1, 2, 3]), ["12 月 2026"])
    months = picker._shown_months(read)
    assert months == [datefmt.month_index(2026, 12)]
    assert picker._day_cell(read, date(2026, 12, 30), months) == ("cell:0:30:in", False)
    assert picker._day_cell(read, date(2026, 12, 1), months) == ("cell:0:1:in", False)
    # January 2 shows only as a greyed cell without a date: navigate instead of clicking it.
    assert picker._day_cell(read, date(2027, 1, 2), months) is None


def test_a_day_cell_stating_its_date_is_clicked_in_either_panel() -> None:
    # antd-like range panel: two grids, cells titled with their dates; the month comes from them.
    facts = _grid(2026, 12, 31, lead=[29, 30], tail=[1, 2], labels=True) + _grid(
        2027, 1, 31, lead=[27, 28, 29, 30, 31], tail=[1], grid=1, labels=True
    )
    read = _read(facts, ["", ""])
    months = picker._shown_months(read)
    assert months == [datefmt.month_index(2026, 12), datefmt.month_index(2027, 1)]
    # January 1 is greyed in December's grid and current in January's: the current one.
    assert picker._day_cell(read, date(2027, 1, 1), months) == ("cell:1:1:in", False)
    assert picker._day_cell(read, date(2027, 2, 1), months) == ("cell:1:1:out", False)


class _Buttons:
    def __init__(self, facts: list[list[Any]]) -> None:
        self.facts = facts

    def picker_buttons(
        self, roots: list[Any], grids: list[Any]
    ) -> tuple[list[list[Any]], list[Any]]:
        return self.facts, [f"button:{i}" for i in range(len(self.facts))]


def test_the_largest_named_step_that_does_not_overshoot() -> None:
    page = _Buttons(
        [
            ["Previous month", "‹", False],
            ["Select month", "Dec", False],
            ["Next month", "›", False],
            ["Previous year", "‹", False],
            ["Next year", "›", False],
        ]
    )
    assert picker._nav_button(page, [], [], -31, {})[1] == "button:3"  # a year back
    assert picker._nav_button(page, [], [], -7, {})[1] == "button:0"  # then months
    assert picker._nav_button(page, [], [], 13, {})[1] == "button:4"


def test_nameless_arrows_are_learned_by_pressing_them() -> None:
    page = _Buttons(
        [["", "", False], ["", "", False], ["", "Dec", False], ["", "", False], ["", "", False]]
    )
    assert picker._nav_button(page, [], [], -31, {})[1] == "button:0"  # untried: press to learn
    learned = {(0, "", ""): -12}
    assert picker._nav_button(page, [], [], -31, learned)[1] == "button:0"  # known: a year back
    assert picker._nav_button(page, [], [], -7, learned)[1] == "button:1"  # next untried one
    learned = {(0, "", ""): -12, (1, "", ""): -1, (3, "", ""): 1, (4, "", ""): 12}
    assert picker._nav_button(page, [], [], -7, learned)[1] == "button:1"
    assert picker._nav_button(page, [], [], 2, learned)[1] == "button:3"


def test_no_button_moves_that_way() -> None:  # SPEC A6: reported as not_found, not guessed
    page = _Buttons(
        [["Next month", "›", False], ["Today", "Today", False], ["Previous month", "‹", True]]
    )
    assert picker._nav_button(page, [], [], -3, {}) is None


# ---------------------------------------------------------------------------------------
# The whole pick against a scripted calendar (nameless arrows, no date labels).
# ---------------------------------------------------------------------------------------

_NAMES = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


class CalendarPage(FakePage):
    """A read-only field whose click opens a one-month calendar showing ``month`` (an index,
    ``datefmt.month_index``), with nameless arrow buttons of the given steps; a day click
    writes the ISO date into the field (unless ``takes_pick`` is off) and closes it."""

    def __init__(self, month: int, steps: tuple[int, ...] = (-12, -1, 1, 12), *, opens: bool = True,
                 takes_pick: bool = True) -> None:
        super().__init__()
        self.field = element(
            "field", "input", role="textbox", label="Start date", type="text", readonly=True
        )
        self.popup = element("popup", "div")
        self.month = month
        self.open = False
        self.opens = opens
        self.takes_pick = takes_pick
        self.arrows = [(element(f"arrow:{step}", "button"), step) for step in steps]

    def click(
        self, handle: Element, x: float, y: float, click_count: int = 1, button: str = "left"
    ) -> None:
        super().click(handle, x, y)
        if handle is self.field and self.opens:
            self.open = True
        for arrow, step in self.arrows:
            if handle is arrow:
                self.month += step
        if handle.name.startswith("day:"):
            if self.takes_pick:
                self.field.value = handle.name[4:]
            self.open = False

    def popup_roots(self, before: list[Any] | None = None) -> list[Any]:
        roots = [self.popup] if self.open else []
        return [r for r in roots if r not in (before or [])]

    def contains(self, ancestor: Any, node: Any) -> bool:
        return ancestor is node

    def calendar_grids(self, roots: list[Any]) -> CalendarRead:
        if not (self.open and roots):
            return CalendarRead([], [], [], [])
        year, month = divmod(self.month, 12)
        first = date(year, month + 1, 1)
        days = ((date(year + (month == 11), (month + 1) % 12 + 1, 1)) - first).days
        facts = [[0, d, "", False, False] for d in (30, 31)]
        facts += [[0, d, "", False, True] for d in range(1, days + 1)]
        facts += [[0, d, "", False, False] for d in (1, 2, 3)]
        cells = [
            element(
                f"day:{date(year, month + 1, f[1]).isoformat()}" if f[4] else f"out:{f[1]}", "td"
            )
            for f in facts
        ]
        return CalendarRead(facts, cells, [self.popup], [f"{_NAMES[month]} {year} Su Mo Tu"])

    def picker_buttons(
        self, roots: list[Any], grids: list[Any]
    ) -> tuple[list[list[Any]], list[Any]]:
        if not (self.open and roots):
            return [], []
        return [["", "", False] for _ in self.arrows], [arrow for arrow, _ in self.arrows]

    def time_columns(self, roots: list[Any], grids: list[Any]) -> tuple[list[list[Any]], list[Any]]:
        return [], []

    def combobox_display(self, handle: Any) -> str:
        return handle.value

    def pressed(self) -> list[str]:
        return [a[1] for a in self.acts if a[0] == "click" and a[1].startswith("arrow:")]


@pytest.fixture
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    # The fake renders at once: the waits for panels animating in only slow the tests down.
    monkeypatch.setattr(picker, "PANEL_WAIT_S", 0.01)
    monkeypatch.setattr(picker, "VERIFY_WAIT_S", 0.01)
    monkeypatch.setattr(picker, "NAV_WAIT_S", 0.01)


def _pick(page: CalendarPage, value: str) -> dict[str, Any]:
    ctx, _ = context(page, FakeInspector(page, [page.field]))
    wanted = datefmt.parse_wanted(value)
    assert wanted is not None
    return asyncio.run(picker.pick(ctx, page.field.target(), wanted))


def test_navigates_by_learned_arrows_and_picks_the_day(quick: None) -> None:  # SPEC A1, A3
    page = CalendarPage(datefmt.month_index(2026, 12))
    outcome = _pick(page, "2024-05-17")
    assert page.field.value == "2024-05-17" and outcome["value"] == "2024-05-17"
    # Learning presses the -12 arrow first; two years back, then seven months: 9 presses.
    assert page.pressed() == ["arrow:-12"] * 2 + ["arrow:-1"] * 7
    assert [a[1] for a in page.acts if a[0] == "click"][-1] == "day:2024-05-17"


def test_a_month_no_arrow_reaches_is_not_found(quick: None) -> None:  # SPEC A6
    page = CalendarPage(datefmt.month_index(2026, 12), steps=(1,))
    with pytest.raises(ToolFailure) as failed:
        _pick(page, "2024-05-17")
    assert failed.value.code is ErrorCode.NOT_FOUND
    assert failed.value.details["shownMonths"] == ["2027-01"]  # learned it goes forward only
    assert page.field.value == ""


def test_a_pick_the_field_does_not_show_is_no_success(quick: None) -> None:  # SPEC P5
    page = CalendarPage(datefmt.month_index(2024, 5), takes_pick=False)
    with pytest.raises(ToolFailure) as failed:
        _pick(page, "2024-05-17")
    assert failed.value.code is ErrorCode.VERIFICATION_FAILED
    assert failed.value.details["picked"] == ["2024-05-17"]


def test_a_read_only_field_opening_no_panel_stays_not_editable(quick: None) -> None:  # SPEC A6
    page = CalendarPage(datefmt.month_index(2024, 5), opens=False)
    with pytest.raises(ToolFailure) as failed:
        _pick(page, "2024-05-17")
    assert failed.value.code is ErrorCode.NOT_EDITABLE
    assert page.field.value == ""
