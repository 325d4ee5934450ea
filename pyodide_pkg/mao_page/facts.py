"""Column layout of the fact rows produced by ``collectDocument`` / ``rowOf``.

Mirrors ``factsOf`` in ``loader_js/primitives/collect.js``; change both together. Rows are
plain lists (not objects) because one flat structure per page is the cheap way across the
Pyodide boundary (NOTES-pyodide.md: 5 ms per 1k elements versus 23 ms through proxies).
Computed-style columns hold computed values (inherited ones appear on descendants too).
"""

from __future__ import annotations

TAG = 0
PARENT = 1  # row index of the parent in the composed tree (an iframe row for a frame's <html>)
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
X = 17  # rect in the viewport of the element's own frame
Y = 18
WIDTH = 19
HEIGHT = 20
DISABLED = 21
READONLY = 22
REQUIRED = 23
CHECKED = 24  # -1 not a checkbox/radio, 0 unchecked, 1 checked, 2 indeterminate
VALUE = 25
OWN_TEXT = 26  # direct text children, whitespace squashed (see TEXT_PARTS for their order)
ARIA_CHECKED = 27
ARIA_EXPANDED = 28
ARIA_SELECTED = 29
ARIA_DISABLED = 30
ARIA_HIDDEN = 31
AUTOCOMPLETE = 32
LABEL_FOR = 33
ALT = 34  # None when the attribute is absent
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
SCOPE = 46  # tree scope (document or shadow root): IDREFs and label[for] resolve within it
SHADOW = 47  # "open", "closed" (a detected closed shadow host) or ""
FRAME = 48  # for <iframe>/<frame>: "same" (walked) or "cross" (placeholder), else ""
CONTENT_VISIBILITY = 49
OVERFLOW = 50  # computed `overflow` shorthand: "visible", "hidden", "auto scroll", ...
POSITION = 51
ARIA_INVALID = 52
USER_INVALID = 53  # 1 when a form control matches :user-invalid
ARIA_PRESSED = 54
ARIA_DESCRIBEDBY = 55
OPEN = 56  # <details open> / <dialog open>
INERT = 57
PSEUDO = 58  # 0 or [::before content, its display, ::after content, its display]
ARIA_LEVEL = 59
ARIA_VALUE = 60  # aria-valuetext, else aria-valuenow
TEXT_PARTS = 61  # [position, text, ...]: own text nodes, each after `position` element children
LIST = 62  # 1: <input list=...>, 2: <select size > 1>, else 0
ARIA_OWNS = 63
TEXT_TRANSFORM = 64

COLUMNS = 65

# Tables returned next to the rows by collectDocument.
SCOPE_KIND, SCOPE_FRAME, SCOPE_HOST = 0, 1, 2
FRAME_OWNER, FRAME_URL, FRAME_X, FRAME_Y, FRAME_WIDTH, FRAME_HEIGHT = 0, 1, 2, 3, 4, 5
