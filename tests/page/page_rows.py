"""Synthetic fact rows for the scanner tests.

A row mirrors ``factsOf`` in ``loader_js/primitives/collect.js`` (column layout in
``mao_page.dom.facts``). ``PageRows`` builds one document: ``html`` and ``body`` first, then the
elements a test adds, each with defaults of an ordinary visible block inside the viewport.
"""

from __future__ import annotations

from typing import Any

from mao_page.dom import facts as F
from mao_page.protocol import Viewport
from mao_page.snapshot.element import Element
from mao_page.snapshot.scanner import OutlineNode, scan, scan_page

VIEWPORT = Viewport(width=1280, height=800, scroll_x=0, scroll_y=0)
BODY = 1

_DEFAULTS: dict[int, Any] = {
    F.TAG: "div",
    F.PARENT: -1,
    F.ID: "",
    F.ROLE: "",
    F.TYPE: "",
    F.ARIA_LABEL: "",
    F.ARIA_LABELLEDBY: "",
    F.TITLE: "",
    F.PLACEHOLDER: "",
    F.NAME: "",
    F.HREF: "",
    F.TABINDEX: "",
    F.CONTENTEDITABLE: False,
    F.CURSOR: "auto",
    F.DISPLAY: "block",
    F.VISIBILITY: "visible",
    F.OPACITY: 1.0,
    F.X: 10.0,
    F.Y: 10.0,
    F.WIDTH: 120.0,
    F.HEIGHT: 24.0,
    F.DISABLED: False,
    F.READONLY: False,
    F.REQUIRED: False,
    F.CHECKED: -1,
    F.VALUE: "",
    F.OWN_TEXT: "",
    F.ARIA_CHECKED: "",
    F.ARIA_EXPANDED: "",
    F.ARIA_SELECTED: "",
    F.ARIA_DISABLED: "",
    F.ARIA_HIDDEN: "",
    F.AUTOCOMPLETE: "",
    F.LABEL_FOR: "",
    F.ALT: "",
    F.FORM: -1,
    F.OPTIONS: 0,
    F.PRIVACY: "",
    F.POINTER_EVENTS: "auto",
    F.FORM_ACTION: "",
    F.FORM_METHOD: "",
    F.MULTIPLE: False,
    F.ARIA_REQUIRED: "",
    F.ARIA_READONLY: "",
    F.IS_PASSWORD: 0,
    F.VALUE_ATTR: "",
    F.SCOPE: 0,
    F.SHADOW: "",
    F.FRAME: "",
    F.CONTENT_VISIBILITY: "visible",
    F.OVERFLOW: "visible",
    F.POSITION: "static",
    F.ARIA_INVALID: "",
    F.USER_INVALID: 0,
    F.ARIA_PRESSED: "",
    F.ARIA_DESCRIBEDBY: "",
    F.OPEN: False,
    F.INERT: False,
    F.PSEUDO: 0,
    F.ARIA_LEVEL: "",
    F.ARIA_VALUE: "",
    F.TEXT_PARTS: [],
    F.LIST: 0,
    F.ARIA_OWNS: "",
    F.TEXT_TRANSFORM: "none",
    F.FRESH: False,
    F.CLASS_STATE: "",
}
assert len(_DEFAULTS) == F.COLUMNS


def fact_row(tag: str, parent: int = -1, **columns: Any) -> list[Any]:
    """One row; keyword names are the ``mao_page.dom.facts`` column names in lower case."""
    row = [_DEFAULTS[i] for i in range(F.COLUMNS)]
    row[F.TAG] = tag
    row[F.PARENT] = parent
    for name, value in columns.items():
        row[getattr(F, name.upper())] = value
    # factsOf derives these columns from other facts; keep synthetic rows consistent.
    if tag == "input" and row[F.TYPE] == "password" and "is_password" not in columns:
        row[F.IS_PASSWORD] = 1
    if row[F.OWN_TEXT] and "text_parts" not in columns:
        row[F.TEXT_PARTS] = [0, row[F.OWN_TEXT]]
    if tag in ("span", "a", "b", "em", "strong", "label", "img") and "display" not in columns:
        row[F.DISPLAY] = "inline"
    return row


# A scanned element's fields when a test names none: a visible, in-viewport button.
_ELEMENT_DEFAULTS: dict[str, Any] = {
    "index": 0, "tag": "button", "kind": "button", "role": "button", "type": "", "label": "",
    "label_source": "", "text": "", "value": None, "options": (), "visible": True,
    "in_viewport": True, "disabled": False, "readonly": False, "required": False,
    "rect": (10.0, 10.0, 120.0, 24.0), "checked": None, "selected": None, "expanded": None,
    "placeholder": "", "href": "", "sensitive": False, "private": False, "form": None,
    "key": (),
}


def scanned(**fields: Any) -> Element:
    """An ``Element`` as the scan makes one (the refs' tests need no rows to scan)."""
    return Element(**{**_ELEMENT_DEFAULTS, **fields})


class PageRows:
    def __init__(self) -> None:
        self.rows: list[list[Any]] = [fact_row("html"), fact_row("body", 0)]

    def add(self, tag: str, parent: int = BODY, **columns: Any) -> int:
        self.rows.append(fact_row(tag, parent, **columns))
        return len(self.rows) - 1

    def scan(self, *, include_offscreen: bool = False) -> list[Element]:
        return scan(self.rows, VIEWPORT, include_offscreen=include_offscreen)

    def outline(self, *, include_offscreen: bool = False) -> list[OutlineNode]:
        return scan_page(
            self.rows, VIEWPORT, include_offscreen=include_offscreen, outline=True
        ).outline

    def scanned(self, index: int, **options: Any) -> Element:
        """The scanned element for row ``index``; fails the test when it was not listed."""
        found = [e for e in self.scan(**options) if e.index == index]
        assert found, f"row {index} ({self.rows[index][F.TAG]}) was not listed"
        return found[0]

    def listed(self, **options: Any) -> set[int]:
        return {e.index for e in self.scan(**options)}
