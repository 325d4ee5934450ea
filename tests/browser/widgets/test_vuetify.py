"""Widget matrix: Vuetify 3 (Vue 3) — every widget kind Vuetify has (harness.py); it has no
cascader, tree select or pop-confirm. Its date and time fields are read-only text fields that
open a picker in a menu (Vuetify's usual pattern without the labs date input): the value is
set in the picker, by clicking days or the clock face.

SPEC A1 (actions on every control), A3 (verified against the library's own state), A6
(structured errors), P5 (no false successes).
"""

from __future__ import annotations

import pytest
from harness import Call, Cell, Library, cells_params, check, click, fill, shows
from shared_cells import (
    COLLAPSE_EXPAND,
    DROPDOWN_CLICK_MENU,
    DROPDOWN_HOVER_MENU,
    MODAL_CONFIRM,
    TABS_CLICK,
)

LIB = Library("vuetify", vendor="vuetify", page="vuetify.html")


def select(label: str, values: list[str]) -> Call:
    """The select's field wrapper and its input are both comboboxes with the field's name;
    the agent takes the input (the second), the control a user clicks and types into."""
    return Call("page_select", label, "combobox", {"values": values}, nth=1)


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
        "date",
        "fill-iso",
        (fill("Start date", "2024-05-17"),),
        state={"day": "2024-05-17"},
        shows=(shows("day", text="2024-05-17"),),
    ),
    Cell(
        "date-range",
        "fill-both",
        (fill("Stay", "2024-06-01 – 2024-06-05"),),
        state={"stay": ["2024-06-01", "2024-06-05"]},
        shows=(shows("stay", text="2024-06-01 – 2024-06-05"),),
    ),
    Cell(
        "time",
        "fill",
        (fill("Alarm", "08:30"),),
        state={"alarm": "08:30"},
        shows=(shows("alarm", text="08:30"),),
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
        (click("Rating 4 of 5", role="button"),),
        state={"rating": 4},
        shows=(
            shows("rating", inner=".v-rating > div:nth-of-type(4) .v-icon", text="\u2605"),
            shows("rating", inner=".v-rating > div:nth-of-type(5) .v-icon", text="\u2606"),
        ),
    ),
    TABS_CLICK,
    COLLAPSE_EXPAND,
    DROPDOWN_CLICK_MENU,
    DROPDOWN_HOVER_MENU,
    MODAL_CONFIRM,
    Cell(
        "pagination",
        "page",
        (click("Go to page 3", role="button"),),
        state={"page": 3},
        shows=(shows("pagination", inner=".v-pagination__item--is-active", text="3"),),
    ),
    # Grace's row, the second "Select row".
    Cell(
        "table",
        "row-select",
        (check("Select row", role="checkbox", nth=1),),
        state={"selected": [2]},
        shows=(
            shows("table", inner="tbody tr:nth-child(2) .v-selection-control--dirty", visible=True),
        ),
    ),
    Cell(
        "switch",
        "on",
        (check("Notifications"),),
        state={"notify": True},
        shows=(shows("notify", inner=".v-selection-control--dirty", visible=True),),
    ),
    Cell(
        "checkbox",
        "check",
        (check("I agree", role="checkbox"),),
        state={"agree": True},
        shows=(shows("agree", inner=".v-selection-control--dirty", visible=True),),
    ),
    Cell(
        "radio",
        "check",
        (check("Pro", role="radio"),),
        state={"plan": "pro"},
        shows=(shows("plan", inner=".v-selection-control--dirty", text="Pro"),),
    ),
]


@pytest.mark.parametrize("cell", cells_params(CELLS))
def test_widget(widget_page, cell):
    widget_page(LIB).run(cell)
