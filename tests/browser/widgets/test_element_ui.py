"""Widget matrix: Element UI 2 on Vue 2.7 — every widget kind Element UI has (harness.py; the
cells come from shared_cells.py); it has no tree select. Its form labels are not tied to their
controls: the snapshot names the selects by their placeholders and the pickers, switch and
rating by the form-row label beside them (SPEC S3).

SPEC A1 (actions on every control), A3 (verified against the library's own state), A6
(structured errors), P5 (no false successes).
"""

from __future__ import annotations

import pytest
import shared_cells as cells
from harness import Library, cells_params

LIB = Library("element-ui", vendor="element-ui", page="element_ui.html")

CELLS = [
    cells.select_single("Select a city"),
    cells.select_multiple("Select tags"),
    cells.select_search("Search a fruit"),
    # Named by its form row: the menu items of its closed (display:none) dropdown inside the
    # row are no other control a user sees there.
    cells.cascader(),
    cells.date(),
    cells.date_range(("Check-in", "Check-out")),
    cells.time(),
    # Element UI keeps aria-valuetext at "0"; the bar's width shows the value.
    cells.slider(
        "slider between 0 and 100", inner=".el-slider__bar", attr=("style", "width: 30%; left: 0%;")
    ),
    cells.ELEMENT_RATE,
    cells.tabs(),
    cells.collapse(),
    *cells.VUE_MENUS_AND_DIALOG,
    cells.popconfirm(),
    cells.pagination("3", ".el-pager li.active", role="listitem"),
    *cells.ELEMENT_CHECKED,
]


@pytest.mark.parametrize("cell", cells_params(CELLS))
def test_widget(widget_page, cell):
    widget_page(LIB).run(cell)
