"""Column layout of the fact rows produced by ``collectDocument`` / ``rowOf``.

Mirrors ``factsOf`` in ``loader_js/primitives/*.js``; change both together. Rows are plain
lists (not objects) because converting one flat array per document is the cheap way across
the Pyodide boundary (NOTES-pyodide.md: 5 ms per 1k elements versus 23 ms through proxies).
"""

from __future__ import annotations

TAG = 0
PARENT = 1
ID = 2
ROLE = 3
TYPE = 4
ARIA_LABEL = 5
ARIA_LABELLEDBY = 6
TITLE = 7
PLACEHOLDER = 8
NAME = 9
HREF = 10
TABINDEX = 11
CONTENTEDITABLE = 12
CURSOR = 13
DISPLAY = 14
VISIBILITY = 15
OPACITY = 16
X = 17
Y = 18
WIDTH = 19
HEIGHT = 20
DISABLED = 21
READONLY = 22
REQUIRED = 23
CHECKED = 24  # -1 not a checkbox/radio, 0 unchecked, 1 checked, 2 indeterminate
VALUE = 25
OWN_TEXT = 26
ARIA_CHECKED = 27
ARIA_EXPANDED = 28
ARIA_SELECTED = 29
ARIA_DISABLED = 30
ARIA_HIDDEN = 31
AUTOCOMPLETE = 32
LABEL_FOR = 33
ALT = 34
FORM = 35  # row index of the owning form, -1 when none
OPTIONS = 36  # [[value, label, selected, disabled], ...] for <select>, else 0
PRIVACY = 37  # "", "private" (value withheld) or "ignore" (subtree excluded)
POINTER_EVENTS = 38
FORM_ACTION = 39
FORM_METHOD = 40
MULTIPLE = 41
ARIA_REQUIRED = 42
ARIA_READONLY = 43
IS_PASSWORD = 44
VALUE_ATTR = 45

COLUMNS = 46
