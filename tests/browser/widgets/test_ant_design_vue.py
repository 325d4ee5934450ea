"""Widget matrix: Ant Design Vue 4 (Vue 3) — every widget kind Ant Design Vue has
(harness.py; the cells come from shared_cells.py, this module says what is its own).

SPEC A1 (actions on every control), A3 (verified against the library's own state), A6
(structured errors), P5 (no false successes).
"""

from __future__ import annotations

import pytest
import shared_cells as cells
from harness import Cell, Library, cells_params, fill, shows

LIB = Library("ant-design-vue", vendor="ant-design-vue", page="ant_design_vue.html")

# Where an Ant Design select shows its choice.
SELECTOR = ".ant-select-selector"

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
    cells.select_single(role="combobox", inner=SELECTOR),
    cells.select_multiple(role="combobox", inner=SELECTOR),
    # A virtual list: Strawberry is not rendered until the list scrolls or the user types.
    cells.select_search(role="combobox", inner=SELECTOR),
    cells.cascader(role="combobox"),
    cells.tree_select(role="combobox", inner=SELECTOR, changes=1),
    # The same leaf as a path: the node on the way is unfolded (its caret), never chosen
    # (one change: the leaf's).
    cells.tree_select(("Engineering", "Backend"), role="combobox", inner=SELECTOR, changes=1),
    cells.date(),
    cells.date_range(),
    cells.time(),
    cells.slider(),
    cells.rate(
        fill("Rating", "4", role="radiogroup"),
        shows("rating", inner="li:nth-child(4).ant-rate-star-full", visible=True),
        shows("rating", inner="li:nth-child(5).ant-rate-star-zero", visible=True),
    ),
    cells.tabs(),
    # The panel header's name starts with its arrow icon's aria-label.
    cells.collapse("right Returns"),
    *cells.VUE_MENUS_AND_DIALOG,
    cells.popconfirm(),
    cells.pagination("3", ".ant-pagination-item-active", role="listitem"),
    # Grace's row (the second); row checkboxes have no name, the header's is "Select all".
    cells.table_row(1, 'tr.ant-table-row-selected[data-row-key="2"]'),
    *cells.ANT_DESIGN_CHECKED,
]


@pytest.mark.parametrize("cell", cells_params(CELLS))
def test_widget(widget_page, cell):
    widget_page(LIB).run(cell)
