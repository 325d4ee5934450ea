"""Widget matrix: TDesign Vue Next (Vue 3) — every widget kind TDesign has (harness.py).

TDesign's form labels are not tied to their controls: the snapshot names them by the visible
form-row label beside them (SPEC S3). Its pickers are read-only by default (a user picks in
the panel) and its calendar text is Chinese (no locale is loaded).

SPEC A1 (actions on every control), A3 (verified against the library's own state), A6
(structured errors), P5 (no false successes).
"""

from __future__ import annotations

import pytest
from harness import Cell, Library, cells_params, check, click, fill, select, shows
from shared_cells import DROPDOWN_CLICK_MENU, DROPDOWN_HOVER_MENU, MODAL_CONFIRM, POPCONFIRM_CONFIRM

LIB = Library("tdesign-vue-next", vendor="tdesign-vue-next", page="tdesign_vue_next.html")

CELLS = [
    Cell(
        "select",
        "single",
        (select("City", ["Berlin"]),),
        state={"city": "berlin"},
        shows=(shows("city", text="Berlin"),),
    ),
    Cell(
        "select",
        "multiple",
        (select("Tags", ["Red", "Blue"]),),
        state={"tags": ["red", "blue"]},
        sorted_keys=("tags",),
        shows=(shows("tags", text="Red"), shows("tags", text="Blue")),
    ),
    Cell(
        "select",
        "search",
        (select("Fruit", ["Strawberry"]),),
        state={"fruit": "strawberry"},
        shows=(shows("fruit", text="Strawberry"),),
    ),
    Cell(
        "cascader",
        "path",
        (select("Region", ["Jiangsu", "Suzhou"]),),
        state={"region": ["jiangsu", "suzhou"]},
        shows=(shows("region", text="Suzhou"),),
    ),
    Cell(
        "tree-select",
        "nested",
        (select("Department", ["Backend"]),),
        state={"department": "backend"},
        shows=(shows("department", text="Backend"),),
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
        (fill("Volume", "30", role="slider"),),
        state={"volume": 30},
        # TDesign Vue never sets aria-valuenow: the thumb's place on the rail shows the value.
        shows=(shows("volume", inner=".t-slider__button-wrapper", attr=("style", "left: 30%;")),),
    ),
    Cell(
        "rate",
        "value",
        # The stars have no role or name: each is named by its place after the row's label.
        (click("Rating 4 of 5"),),
        state={"rating": 4},
        shows=(
            shows("rating", inner="li:nth-child(4).t-rate__item--full", visible=True),
            shows("rating", inner="li:nth-child(5).t-rate__item--full", visible=False),
        ),
    ),
    Cell(
        "tabs",
        "click",
        (click("Billing"),),
        state={"tab": "billing"},
        shows=(shows("tabs", text="Billing pane"),),
    ),
    Cell(
        "collapse",
        "expand",
        (click("Returns"),),
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
        shows=(shows("pagination", inner=".t-is-current", text="3"),),
    ),
    # Grace's row: the row checkboxes have no name; the header's select-all is the first.
    Cell(
        "table",
        "row-select",
        (check("", role="checkbox", nth=2),),
        state={"selected": [2]},
        shows=(shows("table", inner="tr.t-table__row--selected", text="Grace"),),
    ),
    Cell(
        "switch",
        "on",
        (check("Notifications", role="switch"),),
        state={"notify": True},
        shows=(shows("notify", inner=".t-switch.t-is-checked", visible=True),),
    ),
    Cell(
        "checkbox",
        "check",
        (check("I agree", role="checkbox"),),
        state={"agree": True},
        shows=(shows("agree", inner=".t-checkbox.t-is-checked", visible=True),),
    ),
    Cell(
        "radio",
        "check",
        (check("Pro", role="radio"),),
        state={"plan": "pro"},
        shows=(shows("plan", inner=".t-radio.t-is-checked", text="Pro"),),
    ),
]


@pytest.mark.parametrize("cell", cells_params(CELLS))
def test_widget(widget_page, cell):
    widget_page(LIB).run(cell)
