"""Widget matrix: MUI 5 (@mui/material, React 18) — every widget kind MUI core has
(harness.py; the cells come from shared_cells.py). MUI core has no cascader, tree select,
date or time pickers (those live in @mui/x-*, which ships no UMD build), no hover-triggered
menu and no pop-confirm.

SPEC A1, A3, A6, P5.
"""

from __future__ import annotations

import pytest
import shared_cells as cells
from harness import Library, cells_params, check, shows

LIB = Library("mui", vendor="mui", page="mui.html")

CELLS = [
    cells.select_single(role="combobox", inner="[role=combobox]"),
    # The page renders the chosen values (renderValue), not their labels.
    cells.select_multiple(role="combobox", inner="[role=combobox]", shown=("red", "blue")),
    # An Autocomplete: the model holds the option itself.
    cells.select_search(
        "Country", "Zimbabwe", key="country", value="Zimbabwe", role="combobox", inner="input"
    ),
    cells.slider(inner="input[type=range]"),
    cells.rate(
        check("4 Stars", role="radio"),
        shows("rating", inner="input[value='4']:checked"),
        variant="star",
    ),
    cells.tabs(inner="[role=tabpanel]", text="Billing details"),
    cells.collapse(
        "Shipping", state={"expanded": "shipping"}, inner=".Mui-expanded", text=None, visible=True
    ),
    cells.click_menu("menuitem", key="command"),
    cells.modal(**cells.TERMS_DIALOG, state={"confirmed": True, "dialogOpen": False}),
    cells.pagination("Go to page 3", "[aria-current=true]", role="button"),
    cells.table_row(None, "tr.Mui-selected[data-row=bob]", label="Bob", state=cells.BOB),
    cells.switch(".Mui-checked", role=None),
    cells.checkbox(".Mui-checked"),
    cells.radio("input[value=pro]:checked", text=None),
]


@pytest.mark.parametrize("cell", cells_params(CELLS))
def test_widget(widget_page, cell):
    widget_page(LIB).run(cell)
