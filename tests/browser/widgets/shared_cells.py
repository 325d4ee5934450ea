"""The matrix's cells, one factory per widget kind (harness.py says what a cell checks).

The library pages build the same widgets with mostly the same labels, options and state keys
(pages/*.html). A factory fixes what its kind always is: the tool calls an agent makes, the
library state that must follow (read through ``window.__state()``) and what the widget must
show afterwards. It takes what a library does its own way: the field's accessible name and
role, the element inside ``[data-widget=...]`` that shows the result (``inner``), how its
model spells the value. Defaults are the Vue pages' words (five of the nine); the React-side
and old-style pages (antd, MUI, TDesign React, Bootstrap) word some widgets otherwise and pass
theirs.

SPEC A1 (actions on every control), A3 (verified against the library's own state), P5 (no
false successes).
"""

from __future__ import annotations

from typing import Any

from harness import Call, Cell, Display, check, click, fill, hover, select, shows


def select_single(
    label: str = "City", *, role: str | None = None, nth: int | None = None, inner: str = ""
) -> Cell:
    return Cell(
        "select",
        "single",
        (select(label, ["Berlin"], role=role, nth=nth),),
        state={"city": "berlin"},
        shows=(shows("city", inner=inner, text="Berlin"),),
    )


def select_multiple(
    label: str = "Tags",
    *,
    role: str | None = None,
    nth: int | None = None,
    inner: str = "",
    shown: tuple[str, str] = ("Red", "Blue"),
) -> Cell:
    """Both tags chosen; the model's order is the library's, so it is compared sorted."""
    return Cell(
        "select",
        "multiple",
        (select(label, ["Red", "Blue"], role=role, nth=nth),),
        state={"tags": ["red", "blue"]},
        sorted_keys=("tags",),
        shows=tuple(shows("tags", inner=inner, text=text) for text in shown),
    )


def select_search(
    label: str = "Fruit",
    option: str = "Strawberry",
    *,
    key: str = "fruit",
    value: str | None = None,
    role: str | None = None,
    nth: int | None = None,
    inner: str = "",
) -> Cell:
    """An option of a long, searchable list; the model holds ``value`` (default: the option
    in lower case)."""
    return Cell(
        "select",
        "search",
        (select(label, [option], role=role, nth=nth),),
        state={key: option.lower() if value is None else value},
        shows=(shows(key, inner=inner, text=option),),
    )


def cascader(
    path: tuple[str, ...] = ("Jiangsu", "Suzhou"),
    *,
    role: str | None = None,
    inner: str = "",
    value: Any = None,
    shown: str | None = None,
) -> Cell:
    """The path chosen level by level; the model holds the path in lower case and the field
    shows it joined by " / " unless the library keeps or shows only the leaf."""
    value = [step.lower() for step in path] if value is None else value
    return Cell(
        "cascader",
        "path",
        (select("Region", list(path), role=role),),
        state={"region": value},
        shows=(shows("region", inner=inner, text=shown or " / ".join(path)),),
    )


def tree_select(
    path: tuple[str, ...] = ("Backend",),
    *,
    role: str | None = None,
    inner: str = "",
    changes: int | None = None,
) -> Cell:
    """The leaf Backend, by its name ("nested") or by its path ("path": the nodes on the way
    are unfolded, never chosen). ``changes``: the page counts the model's changes."""
    state: dict[str, Any] = {"department": path[-1].lower()}
    if changes is not None:
        state["departmentChanges"] = changes
    return Cell(
        "tree-select",
        "nested" if len(path) == 1 else "path",
        (select("Department", list(path), role=role),),
        state=state,
        shows=(shows("department", inner=inner, text=path[-1]),),
    )


def date(key: str = "day", *, inner: str = "") -> Cell:
    return Cell(
        "date",
        "fill-iso",
        (fill("Start date", "2024-05-17"),),
        state={key: "2024-05-17"},
        shows=(shows(key, inner=inner, text="2024-05-17"),),
    )


def date_range(
    labels: tuple[str, ...] = ("Stay", "Check-out"),
    *,
    key: str = "stay",
    dates: tuple[str, str] = ("2024-06-01", "2024-06-05"),
    inners: tuple[str, str] = ("", ""),
) -> Cell:
    """Both ends filled, each into its own input; a range in one field (one label) takes
    both dates in one value, as the field shows them."""
    if len(labels) == 1:
        both = " – ".join(dates)
        calls: tuple[Call, ...] = (fill(labels[0], both),)
        shown = (shows(key, text=both),)
    else:
        calls = tuple(fill(label, day) for label, day in zip(labels, dates, strict=True))
        shown = tuple(
            shows(key, inner=inner, text=day) for inner, day in zip(inners, dates, strict=True)
        )
    return Cell("date-range", "fill-both", calls, state={key: list(dates)}, shows=shown)


def time(
    label: str = "Alarm", value: str = "08:30:00", *, key: str = "alarm", inner: str = ""
) -> Cell:
    return Cell(
        "time",
        "fill",
        (fill(label, value),),
        state={key: value},
        shows=(shows(key, inner=inner, text=value),),
    )


def slider(
    label: str = "Volume",
    *,
    role: str | None = "slider",
    inner: str = "[role=slider]",
    attr: tuple[str, str] = ("aria-valuenow", "30"),
) -> Cell:
    """Volume 30; ``attr`` is where the widget shows it (the thumb's ARIA value, else its
    place on the rail)."""
    return Cell(
        "slider",
        "value",
        (fill(label, "30", role=role),),
        state={"volume": 30},
        shows=(shows("volume", inner=inner, attr=attr),),
    )


def rate(call: Call, *shown: Display, variant: str = "value") -> Cell:
    """Four stars: the libraries name, role and draw their stars too differently to share
    more than the model's 4 (``shown``: ``shows("rating", ...)`` checks)."""
    return Cell("rate", variant, (call,), state={"rating": 4}, shows=shown)


def tabs(*, role: str | None = "tab", inner: str = "", text: str = "Billing pane") -> Cell:
    return Cell(
        "tabs",
        "click",
        (click("Billing", role=role),),
        state={"tab": "billing"},
        shows=(shows("tabs", inner=inner, text=text),),
    )


def collapse(
    label: str = "Returns",
    *,
    role: str | None = "button",
    state: dict[str, Any] | None = None,
    inner: str = "",
    text: str | None = "Thirty days to return.",
    visible: bool | None = None,
) -> Cell:
    """The panel whose header's name ends with its title opens: the model lists it (``state``
    where the library keeps it otherwise) and its text or body shows."""
    panel = label.split()[-1].lower()
    return Cell(
        "collapse",
        "expand",
        (click(label, role=role),),
        state={"panels": [panel]} if state is None else state,
        shows=(shows("collapse", inner=inner, text=text, visible=visible),),
    )


def click_menu(item_role: str | None = None, *, key: str = "clickMenu") -> Cell:
    return Cell(
        "dropdown",
        "click-menu",
        (click("Actions", role="button"), click("Archive", role=item_role)),
        state={key: "archive"},
        shows=(shows("command", text="Last command: archive"),),
    )


def hover_menu(
    trigger: str = "More",
    item: str = "Print",
    *,
    item_role: str | None = None,
    state: dict[str, Any] | None = None,
    widget: str = "more",
    text: str = "Last more: print",
) -> Cell:
    return Cell(
        "dropdown",
        "hover-menu",
        (hover(trigger, role="button"), click(item, role=item_role)),
        state={"hoverMenu": "print"} if state is None else state,
        shows=(shows(widget, text=text),),
    )


def modal(
    opener: str = "Place order",
    *,
    state: dict[str, Any] | None = None,
    widget: str = "ordered",
    text: str = "Order placed",
    also: tuple[Display, ...] = (),
) -> Cell:
    """Open the dialog, confirm: the page records it and the dialog closes (the model's open
    flag, or ``also`` checks where the page keeps none)."""
    return Cell(
        "modal",
        "confirm",
        (click(opener, role="button"), click("Confirm", role="button")),
        state={"ordered": True, "dialogOpen": False} if state is None else state,
        shows=(shows(widget, text=text), *also),
    )


def popconfirm(confirm: str = "Yes, delete") -> Cell:
    return Cell(
        "popconfirm",
        "confirm",
        (click("Delete draft", role="button"), click(confirm, role="button")),
        state={"deleted": True},
        shows=(shows("deleted", text="Draft deleted"),),
    )


def pagination(label: str, inner: str, *, role: str | None = None) -> Cell:
    """Page 3 by its button (``label``); ``inner`` is the current page's marker."""
    return Cell(
        "pagination",
        "page",
        (click(label, role=role),),
        state={"page": 3},
        shows=(shows("pagination", inner=inner, text="3"),),
    )


def table_row(
    nth: int | None,
    inner: str,
    *,
    label: str = "",
    state: dict[str, Any] | None = None,
    text: str | None = None,
) -> Cell:
    """The row's checkbox, the ``nth`` of that name (row boxes usually have none); the row
    then shows as selected (``inner`` visible, or holding ``text``)."""
    return Cell(
        "table",
        "row-select",
        (check(label, role="checkbox", nth=nth),),
        state={"selected": [2]} if state is None else state,
        shows=(shows("table", inner=inner, text=text, visible=True if text is None else None),),
    )


def switch(inner: str, *, role: str | None = "switch", attr: tuple[str, str] | None = None) -> Cell:
    """Notifications on; the switch shows it by ``attr`` on ``inner``, else ``inner`` is
    visible (a checked-state class)."""
    return Cell(
        "switch",
        "on",
        (check("Notifications", role=role),),
        state={"notify": True},
        shows=(shows("notify", inner=inner, attr=attr, visible=True if attr is None else None),),
    )


def checkbox(inner: str) -> Cell:
    return Cell(
        "checkbox",
        "check",
        (check("I agree", role="checkbox"),),
        state={"agree": True},
        shows=(shows("agree", inner=inner, visible=True),),
    )


def radio(inner: str, *, text: str | None = "Pro", visible: bool | None = None) -> Cell:
    return Cell(
        "radio",
        "check",
        (check("Pro", role="radio"),),
        state={"plan": "pro"},
        shows=(shows("plan", inner=inner, text=text, visible=visible),),
    )


# ---------------------------------------------------------------------------------------
# What several pages share beyond the defaults.
# ---------------------------------------------------------------------------------------

# The React-side pages' words for the widgets the Vue pages word otherwise: a trip range, an
# export menu, a terms dialog, Bob's table row (the Vue pages select Grace, id 2).
TRIP: dict[str, Any] = {
    "key": "trip",
    "dates": ("2024-05-17", "2024-05-20"),
    "inners": ("input[placeholder=Departure]", "input[placeholder=Return]"),
}
EXPORT_MENU: dict[str, Any] = {
    "trigger": "Export",
    "item": "Export PDF",
    "state": {"exported": "pdf"},
    "widget": "exported",
    "text": "Exported pdf",
}
TERMS_DIALOG = {"opener": "Open dialog", "widget": "confirmed", "text": "Terms confirmed"}
BOB = {"selectedRows": ["bob"]}

# The Vue pages build their menus and their dialog word for word.
VUE_MENUS_AND_DIALOG = (click_menu(), hover_menu(), modal())

# A design system draws its checked switch, checkbox and radio with the same markup in its
# React and Vue builds (Ant Design, TDesign) and in its Vue 3 and Vue 2 ones (Element Plus,
# Element UI, which also share their rating and table).
ANT_DESIGN_CHECKED = (
    switch("[role=switch]", attr=("aria-checked", "true")),
    checkbox(".ant-checkbox-wrapper-checked"),
    radio(".ant-radio-wrapper-checked"),
)
TDESIGN_CHECKED = (
    switch(".t-switch.t-is-checked"),
    checkbox(".t-checkbox.t-is-checked"),
    radio(".t-radio.t-is-checked"),
)
ELEMENT_RATE = rate(
    fill("Rating", "4", role="slider"),
    shows("rating", inner="[role=slider]", attr=("aria-valuenow", "4")),
)
ELEMENT_CHECKED = (
    # Grace's row: the row checkboxes have no name; the header's select-all is the first.
    table_row(2, ".el-table__row:nth-child(2) .el-checkbox.is-checked"),
    switch(".el-switch.is-checked"),
    checkbox(".el-checkbox.is-checked"),
    radio(".el-radio.is-checked"),
)
