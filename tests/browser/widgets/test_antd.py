"""Widget matrix: Ant Design 5 (React 18) — every widget kind antd has (harness.py; the cells
come from shared_cells.py, this module says what is antd's own).

SPEC A1 (actions on every control), A3 (verified against the library's own state), A6
(structured errors), P5 (no false successes).
"""

from __future__ import annotations

import pytest
import shared_cells as cells
from harness import Cell, Library, cells_params, check, select, shows

LIB = Library("antd", vendor="antd", page="antd.html")

# Where an antd select shows its choice.
SELECTOR = ".ant-select-selector"

CELLS = [
    cells.select_single(role="combobox", inner=SELECTOR),
    cells.select_multiple(role="combobox", inner=SELECTOR),
    cells.select_search("Country", "Zimbabwe", key="country", role="combobox", inner=SELECTOR),
    Cell(
        "select",
        "virtual-far",
        (select("Currency", ["USD"], role="combobox"),),
        state={"currency": "USD"},
        shows=(shows("currency", inner=SELECTOR, text="USD"),),
    ),
    cells.cascader(("Zhejiang", "Hangzhou"), role="combobox", inner=SELECTOR),
    cells.tree_select(role="combobox", inner=SELECTOR),
    cells.date("start"),
    cells.date_range(("Trip", "Return"), **cells.TRIP),
    cells.time("Meeting time", "14:30", key="meeting"),
    cells.slider(),
    # The stars are radios named "star star" and the list has no name: the 4th radio, as an
    # agent reading the snapshot would pick it.
    cells.rate(
        check("star star", role="radio", nth=3),
        shows("rating", inner="li.ant-rate-star-full:nth-child(4)", visible=True),
        shows("rating", inner="li.ant-rate-star-zero:nth-child(5)", visible=True),
        variant="star",
    ),
    cells.tabs(inner=".ant-tabs-tabpane-active", text="Billing details"),
    cells.collapse("collapsed Shipping", text="Ships in 3 days"),
    cells.click_menu("menuitem", key="command"),
    cells.hover_menu(**cells.EXPORT_MENU, item_role="menuitem"),
    cells.modal(**cells.TERMS_DIALOG, state={"confirmed": True, "modalOpen": False}),
    cells.popconfirm("Yes"),
    cells.pagination("3", ".ant-pagination-item-active"),
    # Bob's row (the second); antd's row checkboxes have no accessible name.
    cells.table_row(1, "tr.ant-table-row-selected[data-row-key=bob]", state=cells.BOB),
    *cells.ANT_DESIGN_CHECKED,
]


@pytest.mark.parametrize("cell", cells_params(CELLS))
def test_widget(widget_page, cell):
    widget_page(LIB).run(cell)
