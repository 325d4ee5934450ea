"""Widget matrix: TDesign Vue Next (Vue 3) — every widget kind TDesign has (harness.py; the
cells come from shared_cells.py, this module says what is its own).

TDesign's form labels are not tied to their controls: the snapshot names them by the visible
form-row label beside them (SPEC S3). Its pickers are read-only by default (a user picks in
the panel) and its calendar text is Chinese (no locale is loaded).

SPEC A1 (actions on every control), A3 (verified against the library's own state), A6
(structured errors), P5 (no false successes).
"""

from __future__ import annotations

import pytest
import shared_cells as cells
from harness import Library, cells_params, click, shows

LIB = Library("tdesign-vue-next", vendor="tdesign-vue-next", page="tdesign_vue_next.html")

CELLS = [
    cells.select_single(),
    cells.select_multiple(),
    cells.select_search(),
    cells.cascader(shown="Suzhou"),
    cells.tree_select(),
    cells.date(),
    cells.date_range(("Check-in", "Check-out")),
    cells.time(),
    # TDesign Vue never sets aria-valuenow: the thumb's place on the rail shows the value.
    cells.slider(inner=".t-slider__button-wrapper", attr=("style", "left: 30%;")),
    # The stars have no role or name: each is named by its place after the row's label.
    cells.rate(
        click("Rating 4 of 5"),
        shows("rating", inner="li:nth-child(4).t-rate__item--full", visible=True),
        shows("rating", inner="li:nth-child(5).t-rate__item--full", visible=False),
    ),
    cells.tabs(role=None),
    cells.collapse(role=None),
    *cells.VUE_MENUS_AND_DIALOG,
    cells.popconfirm(),
    cells.pagination("3", ".t-is-current", role="listitem"),
    # Grace's row: the row checkboxes have no name; the header's select-all is the first.
    cells.table_row(2, "tr.t-table__row--selected", text="Grace"),
    *cells.TDESIGN_CHECKED,
]


@pytest.mark.parametrize("cell", cells_params(CELLS))
def test_widget(widget_page, cell):
    widget_page(LIB).run(cell)
