"""Widget matrix: an older-style page — Bootstrap 5 (data attributes, its own JS) with
jQuery handlers and the Select2 plugin (harness.py; the cells come from shared_cells.py).
Select2 hides the native <select> and renders its own combobox, which is named by what it
shows (placeholder, then the choice).

SPEC A1, A3, A6, P5.
"""

from __future__ import annotations

import pytest
import shared_cells as cells
from harness import Display, Library, cells_params

LIB = Library("bootstrap-select2", vendor="bootstrap-select2", page="bootstrap.html")

# Where Select2 shows a single choice.
RENDERED = ".select2-selection__rendered"

CELLS = [
    cells.select_single("Choose a city", role="combobox", inner=RENDERED),
    cells.select_multiple(role="combobox", inner=".select2-selection"),
    cells.select_search(
        "Choose a country", "Zimbabwe", key="country", role="combobox", inner=RENDERED
    ),
    cells.tabs(inner=".tab-pane.active", text="Billing details"),
    cells.collapse("Shipping", inner="#shipping", text=None, visible=True),
    cells.click_menu("link", key="command"),
    # The page keeps no open flag: the dialog itself must be gone.
    cells.modal(
        **cells.TERMS_DIALOG, state={"confirmed": True}, also=(Display("#terms", visible=False),)
    ),
    cells.pagination("3", ".page-item.active", role="link"),
    # Bob's row (the second); the row boxes have no label.
    cells.table_row(1, "tr[data-row=bob] input:checked", state=cells.BOB),
    cells.switch("input:checked"),
    cells.checkbox("input:checked"),
    cells.radio("#plan-pro:checked", text=None, visible=True),
]


@pytest.mark.parametrize("cell", cells_params(CELLS))
def test_widget(widget_page, cell):
    widget_page(LIB).run(cell)
