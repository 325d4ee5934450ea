"""Widget matrix: TDesign React (tdesign-react, React 18) — every widget kind it has
(harness.py). TDesign renders few ARIA roles: its selects are read-only text inputs, its
tabs, collapse headers, dropdown items and slider handles are plain elements, and its form
labels are not tied to the controls, so the strategies must work from what the widget does.

SPEC A1, A3, A6, P5.
"""

from __future__ import annotations

import pytest
from harness import Cell, Library, cells_params, check, click, fill, hover, select, shows

LIB = Library("tdesign", vendor="tdesign-react", page="tdesign.html")

CELLS = [
    Cell("select", "single", (select("City", ["Berlin"]),),
         state={"city": "berlin"}, shows=(shows("city", inner="input", text="Berlin"),)),
    Cell("select", "multiple", (select("Tags", ["Red", "Blue"]),),
         state={"tags": ["red", "blue"]}, sorted_keys=("tags",),
         shows=(shows("tags", inner=".t-tag-input", text="Red"), shows("tags", inner=".t-tag-input", text="Blue"))),
    Cell("select", "search", (select("Country", ["Zimbabwe"]),),
         state={"country": "zimbabwe"}, shows=(shows("country", inner="input", text="Zimbabwe"),)),
    Cell("cascader", "path", (select("Region", ["Zhejiang", "Hangzhou"]),),
         state={"region": "hangzhou"}, shows=(shows("region", inner="input", text="Hangzhou"),)),
    Cell("tree-select", "nested", (select("Department", ["Backend"]),),
         state={"department": "backend"}, shows=(shows("department", inner="input", text="Backend"),)),
    Cell("date", "fill-iso", (fill("Start date", "2024-05-17"),),
         state={"start": "2024-05-17"}, shows=(shows("start", inner="input", text="2024-05-17"),)),
    Cell("date-range", "fill-both", (fill("Departure", "2024-05-17"), fill("Return", "2024-05-20")),
         state={"trip": ["2024-05-17", "2024-05-20"]},
         shows=(shows("trip", inner="input[placeholder=Departure]", text="2024-05-17"),
                shows("trip", inner="input[placeholder=Return]", text="2024-05-20"))),
    Cell("time", "fill", (fill("Meeting time", "14:30"),),
         state={"meeting": "14:30"}, shows=(shows("meeting", inner="input", text="14:30"),)),
    Cell("slider", "value", (fill("Volume", "30"),),
         state={"volume": 30}, shows=(shows("volume", inner=".t-slider__button-wrapper", attr=("style", "left: 30%;")),)),
    # The stars have no role or name: each is named by its place after the row's label.
    Cell("rate", "value", (click("Rating 4 of 5"),),
         state={"rating": 4}, shows=(shows("rating", inner="li:nth-child(4).t-rate__item--full", visible=True),)),
    Cell("tabs", "click", (click("Billing"),),
         state={"tab": "billing"}, shows=(shows("tabs", inner=".t-tab-panel", text="Billing details"),)),
    Cell("collapse", "expand", (click("Shipping"),),
         state={"panels": ["shipping"]}, shows=(shows("collapse", inner=".t-collapse-panel__content", visible=True),)),
    Cell("dropdown", "click-menu", (click("Actions", role="button"), click("Archive")),
         state={"command": "archive"}, shows=(shows("command", text="Last command: archive"),)),
    Cell("dropdown", "hover-menu", (hover("Export", role="button"), click("Export PDF")),
         state={"exported": "pdf"}, shows=(shows("exported", text="Exported pdf"),)),
    Cell("modal", "confirm", (click("Open dialog", role="button"), click("Confirm", role="button")),
         state={"confirmed": True, "dialogOpen": False}, shows=(shows("confirmed", text="Terms confirmed"),)),
    Cell("popconfirm", "confirm", (click("Delete draft", role="button"), click("Yes", role="button")),
         state={"deleted": True}, shows=(shows("deleted", text="Draft deleted"),)),
    Cell("pagination", "page", (click("3"),),
         state={"page": 3}, shows=(shows("pagination", inner=".t-is-current", text="3"),)),
    # Bob's row: index 2 after the header's select-all box; the row boxes have no name.
    Cell("table", "row-select", (check("", role="checkbox", nth=2),),
         state={"selectedRows": ["bob"]}, shows=(shows("table", inner="tr.t-table__row--selected", text="Bob"),)),
    Cell("switch", "on", (check("Notifications", role="switch"),),
         state={"notify": True}, shows=(shows("notify", inner=".t-switch.t-is-checked", visible=True),)),
    Cell("checkbox", "check", (check("I agree", role="checkbox"),),
         state={"agree": True}, shows=(shows("agree", inner=".t-checkbox.t-is-checked", visible=True),)),
    Cell("radio", "check", (check("Pro", role="radio"),),
         state={"plan": "pro"}, shows=(shows("plan", inner=".t-radio.t-is-checked", text="Pro"),)),
]


@pytest.mark.parametrize("cell", cells_params(CELLS))
def test_widget(widget_page, cell):
    widget_page(LIB).run(cell)
