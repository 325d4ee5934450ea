"""Widget matrix: Element Plus 2 (Vue 3) — every widget kind Element Plus has (harness.py;
the cells come from shared_cells.py, this module says what is Element Plus's own).

SPEC A1 (actions on every control), A3 (verified against the library's own state), A6
(structured errors), P5 (no false successes).
"""

from __future__ import annotations

import pytest
import shared_cells as cells
from harness import Library, cells_params

LIB = Library("element-plus", vendor="element-plus", page="element_plus.html")

CELLS = [
    cells.select_single(role="combobox"),
    cells.select_multiple(role="combobox"),
    cells.select_search(role="combobox"),
    cells.cascader(),
    cells.tree_select(role="combobox"),
    cells.date(),
    cells.date_range(),
    cells.time(),
    cells.slider(),
    cells.ELEMENT_RATE,
    cells.tabs(),
    cells.collapse(),
    *cells.VUE_MENUS_AND_DIALOG,
    cells.popconfirm(),
    cells.pagination("page 3", ".el-pager li.is-active"),
    *cells.ELEMENT_CHECKED,
]


@pytest.mark.parametrize("cell", cells_params(CELLS))
def test_widget(widget_page, cell):
    widget_page(LIB).run(cell)
