"""Widget matrix: Vuetify 3 (Vue 3) — every widget kind Vuetify has (harness.py; the cells
come from shared_cells.py); it has no cascader, tree select or pop-confirm. Its date and time
fields are read-only text fields that open a picker in a menu (Vuetify's usual pattern
without the labs date input): the value is set in the picker, by clicking days or the clock
face.

SPEC A1 (actions on every control), A3 (verified against the library's own state), A6
(structured errors), P5 (no false successes).
"""

from __future__ import annotations

import pytest
import shared_cells as cells
from harness import Library, cells_params, click, shows

LIB = Library("vuetify", vendor="vuetify", page="vuetify.html")

# A select's field wrapper and its input are both comboboxes with the field's name; the agent
# takes the input (the second), the control a user clicks and types into.
SELECT_INPUT = {"role": "combobox", "nth": 1}
# Vuetify marks a checked control of every kind with this class.
CHECKED = ".v-selection-control--dirty"

CELLS = [
    cells.select_single(**SELECT_INPUT),
    cells.select_multiple(**SELECT_INPUT),
    cells.select_search(**SELECT_INPUT),
    cells.date(),
    # One field for both ends.
    cells.date_range(("Stay",)),
    cells.time(value="08:30"),
    cells.slider(),
    cells.rate(
        click("Rating 4 of 5", role="button"),
        shows("rating", inner=".v-rating > div:nth-of-type(4) .v-icon", text="\u2605"),
        shows("rating", inner=".v-rating > div:nth-of-type(5) .v-icon", text="\u2606"),
    ),
    cells.tabs(),
    cells.collapse(),
    *cells.VUE_MENUS_AND_DIALOG,
    cells.pagination("Go to page 3", ".v-pagination__item--is-active", role="button"),
    # Grace's row, the second "Select row".
    cells.table_row(1, f"tbody tr:nth-child(2) {CHECKED}", label="Select row"),
    cells.switch(CHECKED, role=None),
    cells.checkbox(CHECKED),
    cells.radio(CHECKED),
]


@pytest.mark.parametrize("cell", cells_params(CELLS))
def test_widget(widget_page, cell):
    widget_page(LIB).run(cell)
