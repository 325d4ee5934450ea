"""Roles: explicit ARIA roles and the implicit HTML-AAM mapping, as data tables."""

from __future__ import annotations

from typing import Any

from . import facts as F

# SPEC S1: ARIA widget roles that make an element interactive on their own.
WIDGET_ROLES = frozenset(
    {
        "button", "link", "textbox", "searchbox", "combobox", "listbox", "option", "checkbox",
        "radio", "switch", "menuitem", "menuitemcheckbox", "menuitemradio", "tab", "slider",
        "spinbutton", "treeitem", "gridcell",
    }
)

# Roles an agent operates like form fields; the rest of the interactive roles are buttons
# or links (seed 004 §6.2 `kind`).
FORM_CONTROL_ROLES = frozenset(
    {
        "textbox", "searchbox", "combobox", "listbox", "checkbox", "radio", "switch", "slider",
        "spinbutton", "option", "menuitemcheckbox", "menuitemradio",
    }
)
BUTTON_ROLES = frozenset({"button", "menuitem", "tab", "treeitem"})

_INPUT_ROLES = {
    "button": "button", "submit": "button", "reset": "button", "image": "button",
    "checkbox": "checkbox", "radio": "radio", "range": "slider", "number": "spinbutton",
    "search": "searchbox", "email": "textbox", "tel": "textbox", "text": "textbox",
    "url": "textbox", "password": "textbox", "": "textbox", "date": "textbox",
    "datetime-local": "textbox", "month": "textbox", "week": "textbox", "time": "textbox",
    "color": "button", "file": "button",
}

_TAG_ROLES = {
    "button": "button", "textarea": "textbox", "summary": "button", "details": "group",
    "form": "form", "nav": "navigation", "main": "main", "dialog": "dialog", "table": "table",
    "ul": "list", "ol": "list", "li": "listitem", "h1": "heading", "h2": "heading",
    "h3": "heading", "h4": "heading", "h5": "heading", "h6": "heading", "img": "img",
    "option": "option", "fieldset": "group", "iframe": "iframe",
}

# Roles whose accessible name may come from their content (accname 1.2, step 2F).
NAME_FROM_CONTENT_ROLES = frozenset(
    {
        "button", "link", "checkbox", "radio", "switch", "menuitem", "menuitemcheckbox",
        "menuitemradio", "tab", "treeitem", "option", "gridcell", "heading", "cell", "row",
        "columnheader", "rowheader", "tooltip",
    }
)


def explicit_role(row: list[Any]) -> str:
    """First token of role="..." (ARIA 1.2 §4.1: the first recognised token wins)."""
    for token in str(row[F.ROLE]).split():
        token = token.lower()
        if token in WIDGET_ROLES or token in _KNOWN_NON_WIDGET:
            return token
    return ""


_KNOWN_NON_WIDGET = frozenset(
    {
        "dialog", "alertdialog", "alert", "status", "form", "navigation", "main", "region",
        "group", "list", "listitem", "menu", "menubar", "tablist", "tabpanel", "tree", "grid",
        "table", "row", "cell", "heading", "img", "presentation", "none", "toolbar",
        "radiogroup", "banner", "contentinfo", "complementary", "search", "tooltip", "log",
    }
)


def implicit_role(row: list[Any]) -> str:
    tag = row[F.TAG]
    if tag == "a" or tag == "area":
        return "link" if row[F.HREF] else ""
    if tag == "input":
        return _INPUT_ROLES.get(row[F.TYPE], "textbox")
    if tag == "select":
        return "listbox" if row[F.MULTIPLE] else "combobox"
    if row[F.CONTENTEDITABLE]:
        return "textbox"
    return _TAG_ROLES.get(tag, "")


def role_of(row: list[Any]) -> str:
    return explicit_role(row) or implicit_role(row)


def kind_of(role: str, row: list[Any]) -> str:
    if role == "link":
        return "link"
    if role in BUTTON_ROLES:
        return "button"
    if role in FORM_CONTROL_ROLES or row[F.TAG] in ("input", "select", "textarea"):
        return "form-control"
    return "other"
