"""Cells the Vue library pages share word for word: each page builds these widgets with the
same labels, texts and state keys (pages/*.html), so one definition serves every module."""

from __future__ import annotations

from harness import Cell, click, hover, shows

TABS_CLICK = Cell(
    "tabs",
    "click",
    (click("Billing", role="tab"),),
    state={"tab": "billing"},
    shows=(shows("tabs", text="Billing pane"),),
)

COLLAPSE_EXPAND = Cell(
    "collapse",
    "expand",
    (click("Returns", role="button"),),
    state={"panels": ["returns"]},
    shows=(shows("collapse", text="Thirty days to return."),),
)

DROPDOWN_CLICK_MENU = Cell(
    "dropdown",
    "click-menu",
    (click("Actions", role="button"), click("Archive")),
    state={"clickMenu": "archive"},
    shows=(shows("command", text="Last command: archive"),),
)

DROPDOWN_HOVER_MENU = Cell(
    "dropdown",
    "hover-menu",
    (hover("More", role="button"), click("Print")),
    state={"hoverMenu": "print"},
    shows=(shows("more", text="Last more: print"),),
)

MODAL_CONFIRM = Cell(
    "modal",
    "confirm",
    (click("Place order", role="button"), click("Confirm", role="button")),
    state={"ordered": True, "dialogOpen": False},
    shows=(shows("ordered", text="Order placed"),),
)

POPCONFIRM_CONFIRM = Cell(
    "popconfirm",
    "confirm",
    (click("Delete draft", role="button"), click("Yes, delete", role="button")),
    state={"deleted": True},
    shows=(shows("deleted", text="Draft deleted"),),
)
