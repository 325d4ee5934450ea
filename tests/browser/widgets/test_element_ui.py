"""Widget matrix: Element UI 2 on Vue 2.7 — every widget kind Element UI has (harness.py); it
has no tree select. Its form labels are not tied to their controls: the snapshot names the
selects by their placeholders and the pickers, switch and rating by the form-row label
beside them (SPEC S3).

SPEC A1 (actions on every control), A3 (verified against the library's own state), A6
(structured errors), P5 (no false successes).
"""

from __future__ import annotations

import pytest
from harness import Cell, Library, cells_params, check, click, fill, select, shows
from shared_cells import (
    COLLAPSE_EXPAND,
    DROPDOWN_CLICK_MENU,
    DROPDOWN_HOVER_MENU,
    MODAL_CONFIRM,
    POPCONFIRM_CONFIRM,
    TABS_CLICK,
)

LIB = Library("element-ui", vendor="element-ui", page="element_ui.html")

CELLS = [
    Cell(
        "select",
        "single",
        (select("Select a city", ["Berlin"]),),
        state={"city": "berlin"},
        shows=(shows("city", text="Berlin"),),
    ),
    Cell(
        "select",
        "multiple",
        (select("Select tags", ["Red", "Blue"]),),
        state={"tags": ["red", "blue"]},
        sorted_keys=("tags",),
        shows=(shows("tags", text="Red"), shows("tags", text="Blue")),
    ),
    Cell(
        "select",
        "search",
        (select("Search a fruit", ["Strawberry"]),),
        state={"fruit": "strawberry"},
        shows=(shows("fruit", text="Strawberry"),),
    ),
    Cell(
        "cascader",
        "path",
        # Named by its form row: the menu items of its closed (display:none) dropdown inside
        # the row are no other control a user sees there.
        (select("Region", ["Jiangsu", "Suzhou"]),),
        state={"region": ["jiangsu", "suzhou"]},
        shows=(shows("region", text="Jiangsu / Suzhou"),),
    ),
    Cell(
        "date",
        "fill-iso",
        (fill("Start date", "2024-05-17"),),
        state={"day": "2024-05-17"},
        shows=(shows("day", text="2024-05-17"),),
    ),
    Cell(
        "date-range",
        "fill-both",
        (fill("Check-in", "2024-06-01"), fill("Check-out", "2024-06-05")),
        state={"stay": ["2024-06-01", "2024-06-05"]},
        shows=(shows("stay", text="2024-06-01"), shows("stay", text="2024-06-05")),
    ),
    Cell(
        "time",
        "fill",
        (fill("Alarm", "08:30:00"),),
        state={"alarm": "08:30:00"},
        shows=(shows("alarm", text="08:30:00"),),
    ),
    Cell(
        "slider",
        "value",
        (fill("slider between 0 and 100", "30", role="slider"),),
        state={"volume": 30},
        # Element UI keeps aria-valuetext at "0"; the bar's width shows the value.
        shows=(shows("volume", inner=".el-slider__bar", attr=("style", "width: 30%; left: 0%;")),),
    ),
    Cell(
        "rate",
        "value",
        (fill("Rating", "4", role="slider"),),
        state={"rating": 4},
        shows=(shows("rating", inner="[role=slider]", attr=("aria-valuenow", "4")),),
    ),
    TABS_CLICK,
    COLLAPSE_EXPAND,
    DROPDOWN_CLICK_MENU,
    DROPDOWN_HOVER_MENU,
    MODAL_CONFIRM,
    POPCONFIRM_CONFIRM,
    Cell(
        "pagination",
        "page",
        (click("3", role="listitem"),),
        state={"page": 3},
        shows=(shows("pagination", inner=".el-pager li.active", text="3"),),
    ),
    # Grace's row: the row checkboxes have no name; the header's select-all is the first.
    Cell(
        "table",
        "row-select",
        (check("", role="checkbox", nth=2),),
        state={"selected": [2]},
        shows=(
            shows(
                "table", inner=".el-table__row:nth-child(2) .el-checkbox.is-checked", visible=True
            ),
        ),
    ),
    Cell(
        "switch",
        "on",
        (check("Notifications", role="switch"),),
        state={"notify": True},
        shows=(shows("notify", inner=".el-switch.is-checked", visible=True),),
    ),
    Cell(
        "checkbox",
        "check",
        (check("I agree", role="checkbox"),),
        state={"agree": True},
        shows=(shows("agree", inner=".el-checkbox.is-checked", visible=True),),
    ),
    Cell(
        "radio",
        "check",
        (check("Pro", role="radio"),),
        state={"plan": "pro"},
        shows=(shows("plan", inner=".el-radio.is-checked", text="Pro"),),
    ),
]


@pytest.mark.parametrize("cell", cells_params(CELLS))
def test_widget(widget_page, cell):
    widget_page(LIB).run(cell)
