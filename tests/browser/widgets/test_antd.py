"""Widget matrix: Ant Design 5 (React 18) — every widget kind antd has (harness.py).

SPEC A1 (actions on every control), A3 (verified against the library's own state), A6
(structured errors), P5 (no false successes).
"""

from __future__ import annotations

import pytest
from harness import Cell, Library, cells_params, check, click, fill, hover, select, shows

LIB = Library("antd", vendor="antd", page="antd.html")

CELLS = [
    Cell("select", "single", (select("City", ["Berlin"], role="combobox"),),
         state={"city": "berlin"}, shows=(shows("city", inner=".ant-select-selector", text="Berlin"),)),
    Cell("select", "multiple", (select("Tags", ["Red", "Blue"], role="combobox"),),
         state={"tags": ["red", "blue"]}, sorted_keys=("tags",),
         shows=(shows("tags", inner=".ant-select-selector", text="Red"),
                shows("tags", inner=".ant-select-selector", text="Blue"))),
    Cell("select", "search", (select("Country", ["Zimbabwe"], role="combobox"),),
         state={"country": "zimbabwe"}, shows=(shows("country", inner=".ant-select-selector", text="Zimbabwe"),)),
    Cell("select", "virtual-far", (select("Currency", ["USD"], role="combobox"),),
         state={"currency": "USD"}, shows=(shows("currency", inner=".ant-select-selector", text="USD"),)),
    Cell("cascader", "path", (select("Region", ["Zhejiang", "Hangzhou"], role="combobox"),),
         state={"region": ["zhejiang", "hangzhou"]},
         shows=(shows("region", inner=".ant-select-selector", text="Zhejiang / Hangzhou"),)),
    Cell("tree-select", "nested", (select("Department", ["Backend"], role="combobox"),),
         state={"department": "backend"}, shows=(shows("department", inner=".ant-select-selector", text="Backend"),)),
    Cell("date", "fill-iso", (fill("Start date", "2024-05-17"),),
         state={"start": "2024-05-17"}, shows=(shows("start", text="2024-05-17"),)),
    Cell("date-range", "fill-both", (fill("Trip", "2024-05-17"), fill("Return", "2024-05-20")),
         state={"trip": ["2024-05-17", "2024-05-20"]},
         shows=(shows("trip", inner="input[placeholder=Departure]", text="2024-05-17"),
                shows("trip", inner="input[placeholder=Return]", text="2024-05-20"))),
    Cell("time", "fill", (fill("Meeting time", "14:30"),),
         state={"meeting": "14:30"}, shows=(shows("meeting", text="14:30"),)),
    Cell("slider", "value", (fill("Volume", "30", role="slider"),),
         state={"volume": 30}, shows=(shows("volume", inner="[role=slider]", attr=("aria-valuenow", "30")),)),
    # The stars are radios named "star star" and the list has no name: the 4th radio, as an
    # agent reading the snapshot would pick it.
    Cell("rate", "star", (check("star star", role="radio", nth=3),),
         state={"rating": 4}, shows=(shows("rating", inner="li.ant-rate-star-full:nth-child(4)", visible=True),
                                     shows("rating", inner="li.ant-rate-star-zero:nth-child(5)", visible=True))),
    Cell("tabs", "click", (click("Billing", role="tab"),),
         state={"tab": "billing"}, shows=(shows("tabs", inner=".ant-tabs-tabpane-active", text="Billing details"),)),
    Cell("collapse", "expand", (click("collapsed Shipping", role="button"),),
         state={"panels": ["shipping"]}, shows=(shows("collapse", text="Ships in 3 days"),)),
    Cell("dropdown", "click-menu", (click("Actions", role="button"), click("Archive", role="menuitem")),
         state={"command": "archive"}, shows=(shows("command", text="Last command: archive"),)),
    Cell("dropdown", "hover-menu", (hover("Export", role="button"), click("Export PDF", role="menuitem")),
         state={"exported": "pdf"}, shows=(shows("exported", text="Exported pdf"),)),
    Cell("modal", "confirm", (click("Open dialog", role="button"), click("Confirm", role="button")),
         state={"confirmed": True, "modalOpen": False},
         shows=(shows("confirmed", text="Terms confirmed"),)),
    Cell("popconfirm", "confirm", (click("Delete draft", role="button"), click("Yes", role="button")),
         state={"deleted": True}, shows=(shows("deleted", text="Draft deleted"),)),
    Cell("pagination", "page", (click("3"),),
         state={"page": 3}, shows=(shows("pagination", inner=".ant-pagination-item-active", text="3"),)),
    # Bob's row (the second); antd's row checkboxes have no accessible name.
    Cell("table", "row-select", (check("", role="checkbox", nth=1),),
         state={"selectedRows": ["bob"]}, shows=(shows("table", inner="tr.ant-table-row-selected[data-row-key=bob]", visible=True),)),
    Cell("switch", "on", (check("Notifications", role="switch"),),
         state={"notify": True}, shows=(shows("notify", inner="[role=switch]", attr=("aria-checked", "true")),)),
    Cell("checkbox", "check", (check("I agree", role="checkbox"),),
         state={"agree": True}, shows=(shows("agree", inner=".ant-checkbox-wrapper-checked", visible=True),)),
    Cell("radio", "check", (check("Pro", role="radio"),),
         state={"plan": "pro"}, shows=(shows("plan", inner=".ant-radio-wrapper-checked", text="Pro"),)),
]


@pytest.mark.parametrize("cell", cells_params(CELLS))
def test_widget(widget_page, cell):
    widget_page(LIB).run(cell)
