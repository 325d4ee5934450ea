"""Widget matrix: Ant Design Vue 4 (Vue 3) — every widget kind Ant Design Vue has (harness.py).

SPEC A1 (actions on every control), A3 (verified against the library's own state), A6
(structured errors), P5 (no false successes).
"""

from __future__ import annotations

import pytest
from harness import Cell, Library, cells_params, check, click, fill, select, shows
from shared_cells import (
    DROPDOWN_CLICK_MENU,
    DROPDOWN_HOVER_MENU,
    MODAL_CONFIRM,
    POPCONFIRM_CONFIRM,
    TABS_CLICK,
)

LIB = Library("ant-design-vue", vendor="ant-design-vue", page="ant_design_vue.html")

CELLS = [
    # antd's label colon is an ::after pseudo-element that vertical forms hide (display: none);
    # the field's name is the label the user sees, without it.
    Cell(
        "label",
        "hidden-colon",
        (fill("Nickname", "Ada"),),
        state={"nickname": "Ada"},
        shows=(shows("nickname", text="Ada"),),
    ),
    Cell(
        "select",
        "single",
        (select("City", ["Berlin"], role="combobox"),),
        state={"city": "berlin"},
        shows=(shows("city", inner=".ant-select-selector", text="Berlin"),),
    ),
    Cell(
        "select",
        "multiple",
        (select("Tags", ["Red", "Blue"], role="combobox"),),
        state={"tags": ["red", "blue"]},
        sorted_keys=("tags",),
        shows=(
            shows("tags", inner=".ant-select-selector", text="Red"),
            shows("tags", inner=".ant-select-selector", text="Blue"),
        ),
    ),
    # A virtual list: Strawberry is not rendered until the list scrolls or the user types.
    Cell(
        "select",
        "search",
        (select("Fruit", ["Strawberry"], role="combobox"),),
        state={"fruit": "strawberry"},
        shows=(shows("fruit", inner=".ant-select-selector", text="Strawberry"),),
    ),
    Cell(
        "cascader",
        "path",
        (select("Region", ["Jiangsu", "Suzhou"], role="combobox"),),
        state={"region": ["jiangsu", "suzhou"]},
        shows=(shows("region", text="Jiangsu / Suzhou"),),
    ),
    Cell(
        "tree-select",
        "nested",
        (select("Department", ["Backend"], role="combobox"),),
        state={"department": "backend", "departmentChanges": 1},
        shows=(shows("department", inner=".ant-select-selector", text="Backend"),),
    ),
    # The same leaf as a path: the node on the way is unfolded (its caret), never chosen
    # (one change: the leaf's).
    Cell(
        "tree-select",
        "path",
        (select("Department", ["Engineering", "Backend"], role="combobox"),),
        state={"department": "backend", "departmentChanges": 1},
        shows=(shows("department", inner=".ant-select-selector", text="Backend"),),
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
        (fill("Stay", "2024-06-01"), fill("Check-out", "2024-06-05")),
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
        (fill("Volume", "30", role="slider"),),
        state={"volume": 30},
        shows=(shows("volume", inner="[role=slider]", attr=("aria-valuenow", "30")),),
    ),
    Cell(
        "rate",
        "value",
        (fill("Rating", "4", role="radiogroup"),),
        state={"rating": 4},
        shows=(
            shows("rating", inner="li:nth-child(4).ant-rate-star-full", visible=True),
            shows("rating", inner="li:nth-child(5).ant-rate-star-zero", visible=True),
        ),
    ),
    TABS_CLICK,
    # The panel header's name starts with its arrow icon's aria-label.
    Cell(
        "collapse",
        "expand",
        (click("right Returns", role="button"),),
        state={"panels": ["returns"]},
        shows=(shows("collapse", text="Thirty days to return."),),
    ),
    DROPDOWN_CLICK_MENU,
    DROPDOWN_HOVER_MENU,
    MODAL_CONFIRM,
    POPCONFIRM_CONFIRM,
    Cell(
        "pagination",
        "page",
        (click("3", role="listitem"),),
        state={"page": 3},
        shows=(shows("pagination", inner=".ant-pagination-item-active", text="3"),),
    ),
    # Grace's row (the second); row checkboxes have no name, the header's is "Select all".
    Cell(
        "table",
        "row-select",
        (check("", role="checkbox", nth=1),),
        state={"selected": [2]},
        shows=(shows("table", inner='tr.ant-table-row-selected[data-row-key="2"]', visible=True),),
    ),
    Cell(
        "switch",
        "on",
        (check("Notifications", role="switch"),),
        state={"notify": True},
        shows=(shows("notify", inner="[role=switch]", attr=("aria-checked", "true")),),
    ),
    Cell(
        "checkbox",
        "check",
        (check("I agree", role="checkbox"),),
        state={"agree": True},
        shows=(shows("agree", inner=".ant-checkbox-wrapper-checked", visible=True),),
    ),
    Cell(
        "radio",
        "check",
        (check("Pro", role="radio"),),
        state={"plan": "pro"},
        shows=(shows("plan", inner=".ant-radio-wrapper-checked", text="Pro"),),
    ),
]


@pytest.mark.parametrize("cell", cells_params(CELLS))
def test_widget(widget_page, cell):
    widget_page(LIB).run(cell)
