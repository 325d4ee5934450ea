"""Widget matrix: MUI 5 (@mui/material, React 18) — every widget kind MUI core has
(harness.py). MUI core has no cascader, tree select, date or time pickers (those live in
@mui/x-*, which ships no UMD build), no hover-triggered menu and no pop-confirm.

SPEC A1, A3, A6, P5.
"""

from __future__ import annotations

import pytest
from harness import Cell, Library, cells_params, check, click, fill, select, shows

LIB = Library("mui", vendor="mui", page="mui.html")

CELLS = [
    Cell(
        "select",
        "single",
        (select("City", ["Berlin"], role="combobox"),),
        state={"city": "berlin"},
        shows=(shows("city", inner="[role=combobox]", text="Berlin"),),
    ),
    Cell(
        "select",
        "multiple",
        (select("Tags", ["Red", "Blue"], role="combobox"),),
        state={"tags": ["red", "blue"]},
        sorted_keys=("tags",),
        shows=(
            shows("tags", inner="[role=combobox]", text="red"),
            shows("tags", inner="[role=combobox]", text="blue"),
        ),
    ),
    Cell(
        "select",
        "search",
        (select("Country", ["Zimbabwe"], role="combobox"),),
        state={"country": "Zimbabwe"},
        shows=(shows("country", inner="input", text="Zimbabwe"),),
    ),
    Cell(
        "slider",
        "value",
        (fill("Volume", "30", role="slider"),),
        state={"volume": 30},
        shows=(shows("volume", inner="input[type=range]", attr=("aria-valuenow", "30")),),
    ),
    Cell(
        "rate",
        "star",
        (check("4 Stars", role="radio"),),
        state={"rating": 4},
        shows=(shows("rating", inner="input[value='4']:checked", visible=None),),
    ),
    Cell(
        "tabs",
        "click",
        (click("Billing", role="tab"),),
        state={"tab": "billing"},
        shows=(shows("tabs", inner="[role=tabpanel]", text="Billing details"),),
    ),
    Cell(
        "collapse",
        "expand",
        (click("Shipping", role="button"),),
        state={"expanded": "shipping"},
        shows=(shows("collapse", inner=".Mui-expanded", visible=True),),
    ),
    Cell(
        "dropdown",
        "click-menu",
        (click("Actions", role="button"), click("Archive", role="menuitem")),
        state={"command": "archive"},
        shows=(shows("command", text="Last command: archive"),),
    ),
    Cell(
        "modal",
        "confirm",
        (click("Open dialog", role="button"), click("Confirm", role="button")),
        state={"confirmed": True, "dialogOpen": False},
        shows=(shows("confirmed", text="Terms confirmed"),),
    ),
    Cell(
        "pagination",
        "page",
        (click("Go to page 3", role="button"),),
        state={"page": 3},
        shows=(shows("pagination", inner="[aria-current=true]", text="3"),),
    ),
    Cell(
        "table",
        "row-select",
        (check("Bob", role="checkbox"),),
        state={"selectedRows": ["bob"]},
        shows=(shows("table", inner="tr.Mui-selected[data-row=bob]", visible=True),),
    ),
    Cell(
        "switch",
        "on",
        (check("Notifications"),),
        state={"notify": True},
        shows=(shows("notify", inner=".Mui-checked", visible=True),),
    ),
    Cell(
        "checkbox",
        "check",
        (check("I agree", role="checkbox"),),
        state={"agree": True},
        shows=(shows("agree", inner=".Mui-checked", visible=True),),
    ),
    Cell(
        "radio",
        "check",
        (check("Pro", role="radio"),),
        state={"plan": "pro"},
        shows=(shows("plan", inner="input[value=pro]:checked", visible=None),),
    ),
]


@pytest.mark.parametrize("cell", cells_params(CELLS))
def test_widget(widget_page, cell):
    widget_page(LIB).run(cell)
