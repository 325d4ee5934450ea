"""Widget matrix: TDesign React (tdesign-react, React 18) — every widget kind it has
(harness.py; the cells come from shared_cells.py). TDesign renders few ARIA roles: its
selects are read-only text inputs, its tabs, collapse headers, dropdown items and slider
handles are plain elements, and its form labels are not tied to the controls, so the
strategies must work from what the widget does.

SPEC A1, A3, A6, P5.
"""

from __future__ import annotations

import pytest
import shared_cells as cells
from harness import Library, cells_params, click, shows

LIB = Library("tdesign", vendor="tdesign-react", page="tdesign.html")

CELLS = [
    cells.select_single(inner="input"),
    cells.select_multiple(inner=".t-tag-input"),
    cells.select_search("Country", "Zimbabwe", key="country", inner="input"),
    cells.cascader(("Zhejiang", "Hangzhou"), inner="input", value="hangzhou", shown="Hangzhou"),
    cells.tree_select(inner="input"),
    cells.date("start", inner="input"),
    cells.date_range(("Departure", "Return"), **cells.TRIP),
    cells.time("Meeting time", "14:30", key="meeting", inner="input"),
    cells.slider(role=None, inner=".t-slider__button-wrapper", attr=("style", "left: 30%;")),
    # The stars have no role or name: each is named by its place after the row's label.
    cells.rate(
        click("Rating 4 of 5"),
        shows("rating", inner="li:nth-child(4).t-rate__item--full", visible=True),
    ),
    cells.tabs(role=None, inner=".t-tab-panel", text="Billing details"),
    cells.collapse(
        "Shipping", role=None, inner=".t-collapse-panel__content", text=None, visible=True
    ),
    cells.click_menu(key="command"),
    cells.hover_menu(**cells.EXPORT_MENU),
    cells.modal(**cells.TERMS_DIALOG, state={"confirmed": True, "dialogOpen": False}),
    cells.popconfirm("Yes"),
    cells.pagination("3", ".t-is-current"),
    # Bob's row: index 2 after the header's select-all box; the row boxes have no name.
    cells.table_row(2, "tr.t-table__row--selected", state=cells.BOB, text="Bob"),
    *cells.TDESIGN_CHECKED,
]


@pytest.mark.parametrize("cell", cells_params(CELLS))
def test_widget(widget_page, cell):
    widget_page(LIB).run(cell)
