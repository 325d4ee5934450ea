"""Roles: explicit ARIA roles and the implicit HTML-AAM mapping, as data tables.

Everything here reads one fact row; nothing walks the document.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import compress, repeat
from operator import not_
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
# or links. This decides an element's ``kind`` in the snapshot (SPEC S2).
FORM_CONTROL_ROLES = frozenset(
    {
        "textbox", "searchbox", "combobox", "listbox", "checkbox", "radio", "switch", "slider",
        "spinbutton", "option", "menuitemcheckbox", "menuitemradio",
    }
)
BUTTON_ROLES = frozenset({"button", "menuitem", "tab", "treeitem"})

# SPEC S1: the cursors a page gives a thumb the user drags (a role-less slider built from
# divs often shows "grab", not "pointer"). Such an element is listed when it is shaped like a
# slider's thumb (snapshot.scanner.is_slider_thumb); the page walk keeps its rows (collect.js).
DRAG_CURSORS = frozenset(
    {
        "grab", "grabbing", "move", "ew-resize", "ns-resize", "col-resize", "row-resize",
        "e-resize", "w-resize", "n-resize", "s-resize",
    }
)

# SPEC S9: containers whose children are items a page may handle with one delegated listener
# (snapshot.scanner.delegated_items), and how many rows a container of items that appeared
# may hold (a popup, a suggestion list). The page walk keeps their rows too (collect.js).
ITEM_CONTAINER_ROLES = frozenset({"listbox", "menu", "menubar", "tree"})
ITEM_CONTAINER_ROWS = 400

# Every ARIA 1.2 role (and the Graphics/DPub ones pages use); role="x" with an unknown
# token falls through to the next token, then to the implicit role (ARIA 1.2 §4.1).
_NON_WIDGET_ROLES = frozenset(
    {
        "alert", "alertdialog", "application", "article", "banner", "blockquote", "caption",
        "cell", "code", "columnheader", "complementary", "contentinfo", "definition",
        "deletion", "dialog", "directory", "document", "emphasis", "feed", "figure", "form",
        "generic", "grid", "group", "heading", "img", "image", "insertion", "list", "listitem",
        "log", "main", "mark", "marquee", "math", "menu", "menubar", "meter", "navigation",
        "none", "note", "paragraph", "presentation", "progressbar", "radiogroup", "region",
        "row", "rowgroup", "rowheader", "scrollbar", "search", "separator", "status",
        "strong", "subscript", "superscript", "table", "tablist", "tabpanel", "term", "time",
        "timer", "toolbar", "tooltip", "tree", "treegrid", "comment", "suggestion",
        "graphics-document", "graphics-object", "graphics-symbol",
    }
)
KNOWN_ROLES = WIDGET_ROLES | _NON_WIDGET_ROLES

_INPUT_ROLES = {
    "button": "button", "submit": "button", "reset": "button", "image": "button",
    "checkbox": "checkbox", "radio": "radio", "range": "slider", "number": "spinbutton",
    "search": "searchbox", "email": "textbox", "tel": "textbox", "text": "textbox",
    "url": "textbox", "password": "textbox", "": "textbox", "date": "textbox",
    "datetime-local": "textbox", "month": "textbox", "week": "textbox", "time": "textbox",
    "color": "button", "file": "button",
}
# HTML-AAM: text-like inputs with a `list` attribute are comboboxes.
_LIST_INPUT_TYPES = frozenset({"", "text", "search", "email", "tel", "url"})

_TAG_ROLES = {
    "address": "group", "article": "article", "aside": "complementary", "blockquote": "blockquote",
    "button": "button", "caption": "caption", "code": "code", "datalist": "listbox",
    "del": "deletion", "details": "group", "dfn": "term", "dialog": "dialog", "em": "emphasis",
    "fieldset": "group", "figure": "figure", "footer": "contentinfo", "form": "form",
    "h1": "heading", "h2": "heading", "h3": "heading", "h4": "heading", "h5": "heading",
    "h6": "heading", "header": "banner", "hr": "separator", "iframe": "iframe", "ins": "insertion",
    "li": "listitem", "main": "main", "mark": "mark", "math": "math", "menu": "list",
    "meter": "meter", "nav": "navigation", "ol": "list", "optgroup": "group", "option": "option",
    "output": "status", "p": "paragraph", "progress": "progressbar", "search": "search",
    "section": "region", "strong": "strong", "sub": "subscript", "summary": "button",
    "sup": "superscript", "table": "table", "tbody": "rowgroup", "td": "cell",
    "textarea": "textbox", "tfoot": "rowgroup", "th": "columnheader", "thead": "rowgroup",
    "time": "time", "tr": "row", "ul": "list", "img": "img", "svg": "img",
}

# Roles whose accessible name may come from their content (ARIA 1.2, accname 2F).
NAME_FROM_CONTENT_ROLES = frozenset(
    {
        "button", "cell", "checkbox", "columnheader", "gridcell", "heading", "link", "menuitem",
        "menuitemcheckbox", "menuitemradio", "option", "radio", "row", "rowheader", "switch",
        "tab", "tooltip", "treeitem", "comment", "sectionhead",
    }
)

# Presentational-children roles: their descendants are not separate accessible nodes
# (ARIA 1.2 "Children Presentational: True").
PRESENTATIONAL_CHILDREN_ROLES = frozenset(
    {"button", "checkbox", "img", "meter", "menuitemcheckbox", "menuitemradio", "option",
     "progressbar", "radio", "scrollbar", "separator", "slider", "switch", "tab"}
)

# Global ARIA attributes whose presence makes role="none"/"presentation" be ignored (ARIA 1.2
# §4.6 presentational role conflict resolution); only the ones we read.
_GLOBAL_ARIA_COLUMNS = (F.ARIA_LABEL, F.ARIA_LABELLEDBY, F.ARIA_DESCRIBEDBY, F.ARIA_OWNS)


def explicit_role(row: list[Any]) -> str:
    """First recognised token of role="..." (ARIA 1.2 §4.1), after conflict resolution:
    none/presentation on a focusable element or one with global ARIA attributes is ignored."""
    for token in str(row[F.ROLE]).split():
        token = token.lower()
        if token not in KNOWN_ROLES:
            continue
        if token in ("none", "presentation") and (
            _focusable(row) or any(row[c] for c in _GLOBAL_ARIA_COLUMNS)
        ):
            continue
        return "img" if token == "image" else token
    return ""


def _focusable(row: list[Any]) -> bool:
    if row[F.TABINDEX] != "":
        return True
    tag = row[F.TAG]
    if tag in ("button", "select", "textarea") or (tag == "input" and row[F.TYPE] != "hidden"):
        return not row[F.DISABLED]
    return (tag in ("a", "area") and bool(row[F.HREF])) or bool(row[F.CONTENTEDITABLE])


# Tags implicit_role decides by more than the tag table.
_ATTRIBUTE_ROLE_TAGS = frozenset({"a", "area", "input", "select", "img", "section", "form"})


def implicit_role(row: list[Any]) -> str:
    """HTML-AAM implicit role of an element, from its tag and attributes."""
    tag = row[F.TAG]
    # Most rows of a scan skip straight to the tag table: one set lookup on the hot path.
    if tag in _ATTRIBUTE_ROLE_TAGS:
        if tag == "a" or tag == "area":
            return "link" if row[F.HREF] else ""
        if tag == "input":
            kind = row[F.TYPE]
            if row[F.LIST] == 1 and kind in _LIST_INPUT_TYPES:
                return "combobox"
            return _INPUT_ROLES.get(kind, "textbox")
        if tag == "select":
            return "listbox" if row[F.MULTIPLE] or row[F.LIST] == 2 else "combobox"
        if (
            tag == "img"
            and row[F.ALT] == ""
            and not (row[F.TITLE] or row[F.ARIA_LABEL] or row[F.ARIA_LABELLEDBY])
        ):
            return "presentation"  # HTML-AAM: alt="" marks a decorative image
        if tag == "section" and not (row[F.ARIA_LABEL] or row[F.ARIA_LABELLEDBY]):
            return ""  # HTML-AAM: a <section> is a region only when it has a name
        if tag == "form" and not (row[F.ARIA_LABEL] or row[F.ARIA_LABELLEDBY] or row[F.TITLE]):
            return "form"
    if row[F.CLASS_STATE] and "switch" in row[F.CLASS_STATE].split():
        # SPEC DIFFERENCE: a clickable element a library names a switch only in its classes
        # (a div toggling "is-checked") is a switch to an agent, as it is to its users.
        return "switch"
    role = _TAG_ROLES.get(tag)
    if role is not None:
        return role
    return (
        "textbox" if row[F.CONTENTEDITABLE] else ""
    )  # an editable element the table does not name


def role_of(row: list[Any]) -> str:
    if row[F.ROLE]:
        role = explicit_role(row)
        if role:
            return role
    return implicit_role(row)


# The tag table with the usual role of the tags implicit_role decides by their attributes:
# a whole-page pass then looks only at the rows of those tags that may differ.
_USUAL_ROLES = {
    **_TAG_ROLES,
    "a": "link",
    "area": "link",
    "input": "textbox",
    "select": "combobox",
    "section": "",
}


def roles_of_rows(
    rows: Sequence[Sequence[Any]],
    columns: Sequence[Sequence[Any]],
    rows_of_tag: Callable[[str], list[int]] | None = None,
) -> list[str]:
    """``role_of`` of every row: the usual role of each tag over the tag column in C, then
    ``implicit_role`` spelled over the columns for the rows whose attributes may change it
    (links without href, inputs, selects, images, sections), then ``role_of`` of the whole
    row for the few with a role attribute or contenteditable. A whole-page scan asks for
    most rows' roles. ``rows_of_tag``: the rows of a tag (``facts.TagRows`` of the tags)."""
    tags = columns[F.TAG]
    if rows_of_tag is None:
        rows_of_tag = F.TagRows(tags)
    count = len(tags)
    indexes = range(count)
    roles = list(map(_USUAL_ROLES.get, tags, repeat("", count)))
    whole_row = set(compress(indexes, columns[F.ROLE]))
    whole_row.update(compress(indexes, columns[F.CONTENTEDITABLE]))
    whole_row.update(compress(indexes, columns[F.CLASS_STATE]))
    hrefs = columns[F.HREF]
    for tag in ("a", "area"):
        links = rows_of_tag(tag)
        for index in compress(links, map(not_, map(hrefs.__getitem__, links))):
            roles[index] = ""
    types, lists = columns[F.TYPE], columns[F.LIST]
    for index in rows_of_tag("input"):
        kind = types[index]
        roles[index] = (
            "combobox"
            if lists[index] == 1 and kind in _LIST_INPUT_TYPES
            else _INPUT_ROLES.get(kind, "textbox")
        )
    multiple = columns[F.MULTIPLE]
    for index in rows_of_tag("select"):
        if multiple[index] or lists[index] == 2:
            roles[index] = "listbox"
    titles, aria_labels, labelledby, alts = (
        columns[F.TITLE],
        columns[F.ARIA_LABEL],
        columns[F.ARIA_LABELLEDBY],
        columns[F.ALT],
    )
    for index in rows_of_tag("img"):
        if alts[index] == "" and not (titles[index] or aria_labels[index] or labelledby[index]):
            roles[index] = "presentation"
    for index in rows_of_tag("section"):
        if aria_labels[index] or labelledby[index]:
            roles[index] = "region"
    # a <form> is "form" named or not: the tag table's role stands.
    for index in whole_row:
        roles[index] = role_of(rows[index])
    return roles


def kind_of(role: str, tag: str) -> str:
    if role == "link":
        return "link"
    if role in BUTTON_ROLES:
        return "button"
    if role in FORM_CONTROL_ROLES or tag in ("input", "select", "textarea"):
        return "form-control"
    return "other"


def heading_level(tag: str, aria_level: str) -> int:
    try:
        level = int(aria_level)
    except ValueError:
        level = 0
    if level > 0:
        return level
    return int(tag[1]) if len(tag) == 2 and tag[0] == "h" and tag[1] in "123456" else 2
