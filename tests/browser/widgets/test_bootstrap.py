"""Widget matrix: an older-style page — Bootstrap 5 (data attributes, its own JS) with
jQuery handlers and the Select2 plugin (harness.py). Select2 hides the native <select> and
renders its own combobox, which is named by what it shows (placeholder, then the choice).

SPEC A1, A3, A6, P5.
"""

from __future__ import annotations

import pytest
from harness import Cell, Display, Library, cells_params, check, click, select, shows

LIB = Library("bootstrap-select2", vendor="bootstrap-select2", page="bootstrap.html")

CELLS = [
    Cell(
        "select",
        "single",
        (select("Choose a city", ["Berlin"], role="combobox"),),
        state={"city": "berlin"},
        shows=(shows("city", inner=".select2-selection__rendered", text="Berlin"),),
    ),
    Cell(
        "select",
        "multiple",
        (select("Tags", ["Red", "Blue"], role="combobox"),),
        state={"tags": ["red", "blue"]},
        sorted_keys=("tags",),
        shows=(
            shows("tags", inner=".select2-selection", text="Red"),
            shows("tags", inner=".select2-selection", text="Blue"),
        ),
    ),
    Cell(
        "select",
        "search",
        (select("Choose a country", ["Zimbabwe"], role="combobox"),),
        state={"country": "zimbabwe"},
        shows=(shows("country", inner=".select2-selection__rendered", text="Zimbabwe"),),
    ),
    Cell(
        "tabs",
        "click",
        (click("Billing", role="tab"),),
        state={"tab": "billing"},
        shows=(shows("tabs", inner=".tab-pane.active", text="Billing details"),),
    ),
    Cell(
        "collapse",
        "expand",
        (click("Shipping", role="button"),),
        state={"panels": ["shipping"]},
        shows=(shows("collapse", inner="#shipping", visible=True),),
    ),
    Cell(
        "dropdown",
        "click-menu",
        (click("Actions", role="button"), click("Archive", role="link")),
        state={"command": "archive"},
        shows=(shows("command", text="Last command: archive"),),
    ),
    Cell(
        "modal",
        "confirm",
        (click("Open dialog", role="button"), click("Confirm", role="button")),
        state={"confirmed": True},
        shows=(shows("confirmed", text="Terms confirmed"), Display("#terms", visible=False)),
    ),
    Cell(
        "pagination",
        "page",
        (click("3", role="link"),),
        state={"page": 3},
        shows=(shows("pagination", inner=".page-item.active", text="3"),),
    ),
    # Bob's row (the second); the row boxes have no label.
    Cell(
        "table",
        "row-select",
        (check("", role="checkbox", nth=1),),
        state={"selectedRows": ["bob"]},
        shows=(shows("table", inner="tr[data-row=bob] input:checked", visible=True),),
    ),
    Cell(
        "switch",
        "on",
        (check("Notifications", role="switch"),),
        state={"notify": True},
        shows=(shows("notify", inner="input:checked", visible=True),),
    ),
    Cell(
        "checkbox",
        "check",
        (check("I agree", role="checkbox"),),
        state={"agree": True},
        shows=(shows("agree", inner="input:checked", visible=True),),
    ),
    Cell(
        "radio",
        "check",
        (check("Pro", role="radio"),),
        state={"plan": "pro"},
        shows=(shows("plan", inner="#plan-pro:checked", visible=True),),
    ),
]


@pytest.mark.parametrize("cell", cells_params(CELLS))
def test_widget(widget_page, cell):
    widget_page(LIB).run(cell)
