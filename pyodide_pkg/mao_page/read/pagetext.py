"""The rendered text of a page as a tree, for the read tools (SPEC T1, T2).

``loader_js/primitives/read.js`` (``readText``) walks the composed tree once and sends what
the browser renders as nested JSON, so that ``json.loads`` builds the tree (in C) and no
Python loop goes over the page twice. A node is a list::

    [tag, display, role, flags, extra, order, listed, children]

``children`` holds nodes and strings (text, white space not yet collapsed); ``order`` is the
node's position among the walk's items (preorder), ``listed`` its position in the ``listed``
elements given to the walk (-1 when not listed), ``extra`` a link's absolute URL, an image's
alt text, a cell's "colspan,rowspan" or a heading's aria-level.

Two kinds of element, the commonest on a page, arrive folded into text instead (read.js
takes these marks out of the page's own text, so only the walk writes them):

* a link holding only text: ``LINK + url + LINK_TEXT + text + LINK_END`` inside its parent's
  text (a link without an ``href``: its text alone);
* a table row whose cells are plain ``td`` / ``th`` holding only text: the row's one child,
  each cell's text after ``CELL`` (``td``) or ``HEADER_CELL`` (``th``).

A walk for ``page_extract`` (``fold_blocks``; a find keeps each row and item apart, where its
hits are) folds two more, outside ``<pre>``:

* a ``table``, ``thead``, ``tbody`` or ``tfoot`` whose rows all folded: its one child, each
  row's folded text after ``ROW``;
* a ``ul``, ``ol`` or ``menu`` whose children are plain ``li`` boxes holding only text: its
  one child, each item's text after ``ITEM``.

Whatever has a role, a flag, spans or a ``listed`` position keeps its node, so every rule
still sees them; what folds is only what those rules would read as plain text.

``excluded`` says which subtrees no read tool may return: ``aria-hidden`` content, the page
owner's ``data-mao-private`` / ``data-mao-ignore`` content, and editable regions the snapshot
engine's rules call sensitive (SPEC P5, S4). What counts as page chrome is the Markdown's
business (``extract``), not the tree's: a find also searches the navigation.
"""

from __future__ import annotations

import re
from typing import Any

# Positions in a node.
TAG, DISPLAY, ROLE, FLAGS, EXTRA, ORDER, LISTED, CHILDREN = range(8)

# Flags (read.js READ_*, generated from these by dom/jstables.py).
ARIA_HIDDEN = 1
PRIVATE = 2  # data-mao-private or data-mao-ignore on the element
EDITABLE_ROOT = 8  # contenteditable, its parent not
FRAME = 16  # a same-origin frame: its document's body follows as content
BLOCKY = 32  # it or something inside it is block-level: its content is not one line of text
_HIDDEN = ARIA_HIDDEN | PRIVATE

# The marks of folded text (see the module docstring; read.js READ_LINK...).
LINK, LINK_TEXT, LINK_END = "\x01", "\x02", "\x03"
HEADER_CELL, CELL = "\x1e", "\x1f"
ITEM, ROW = "\x1c", "\x1d"
FOLDED_LINK = re.compile("\x01([^\x02]*)\x02([^\x03]*)\x03")
_CELLS = str.maketrans({HEADER_CELL: " ", CELL: " ", ROW: " ", ITEM: " "})

# A node (see the module docstring).
TextNode = list[Any]

# The CSS display values of inline-level boxes: their content flows into the surrounding text.
INLINE_DISPLAYS = frozenset(
    {
        "inline",
        "inline-block",
        "inline-flex",
        "inline-grid",
        "inline-table",
        "ruby",
        "ruby-text",
        "ruby-base",
        "inline flow",
        "inline flow-root",
        "inline flex",
        "inline grid",
        "contents",
    }
)


def excluded(node: TextNode, sensitive: frozenset[int] | set[int]) -> bool:
    """Whether ``node``'s subtree is left out of every read (``sensitive``: the orders of the
    editable regions found sensitive)."""
    flags = node[FLAGS]
    return bool(flags & _HIDDEN or flags & EDITABLE_ROOT and node[ORDER] in sensitive)


def prune(root: TextNode | None, sensitive: frozenset[int] | set[int]) -> TextNode | None:
    """``root`` without its ``excluded`` subtrees (in place); None when the root itself is.
    (read.js counts the nodes flagged aria-hidden or private: with none of them and nothing
    sensitive, callers skip this walk over the tree.)"""
    if root is None or excluded(root, sensitive):
        return None
    stack = [root]
    while stack:
        current = stack.pop()
        children = current[CHILDREN]
        if any(c.__class__ is list and excluded(c, sensitive) for c in children):
            children[:] = [
                c for c in children if c.__class__ is not list or not excluded(c, sensitive)
            ]
        stack.extend(c for c in children if c.__class__ is list)
    return root


def plain(text: str) -> str:
    """Folded text as the page shows it: a link's text without its URL, cells apart."""
    if LINK in text:
        text = FOLDED_LINK.sub(r"\2", text)
    return plain_cells(text)


def plain_cells(text: str) -> str:
    """Folded text with the cells of a row, the rows of a table and the items of a list apart
    (read as a line of text)."""
    if CELL in text or HEADER_CELL in text or ITEM in text:
        return text.translate(_CELLS)
    return text


def node(
    tag: str,
    *children: Any,
    display: str = "block",
    role: str = "",
    flags: int = 0,
    extra: str = "",
    order: int = 0,
    listed: int = -1,
) -> TextNode:
    """A node as read.js makes one (for tests and tools that build trees by hand): BLOCKY set,
    adjacent texts joined, and links and rows folded as read.js folds them."""
    if display not in INLINE_DISPLAYS or any(
        isinstance(c, list) and c[FLAGS] & BLOCKY for c in children
    ):
        flags |= BLOCKY
    kids: list[Any] = []
    for child in children:
        if (
            isinstance(child, list)
            and child[TAG] == "a"
            and child[FLAGS] == 0
            and not child[ROLE]
            and child[LISTED] < 0
            and (text := _only_text(child)) is not None
            and LINK not in text
        ):
            child = LINK + child[EXTRA] + LINK_TEXT + text + LINK_END if child[EXTRA] else text
        if isinstance(child, str) and kids and isinstance(kids[-1], str):
            kids[-1] += child
        else:
            kids.append(child)
    if tag == "tr" and not role and flags == BLOCKY and listed < 0:
        kids = _folded_row(kids) or kids
    return [tag, display, role, flags, extra, order, listed, kids]


def _only_text(item: TextNode) -> str | None:
    kids = item[CHILDREN]
    if not kids:
        return ""
    return kids[0] if len(kids) == 1 and isinstance(kids[0], str) else None


def _folded_row(kids: list[Any]) -> list[str] | None:
    folded = []
    for kid in kids:
        if isinstance(kid, str):
            if kid.strip(" \t\n\r\f"):
                return None
            continue
        text = _only_text(kid)
        if (
            kid[TAG] not in ("td", "th")
            or kid[DISPLAY] != "table-cell"
            or kid[ROLE]
            or kid[FLAGS] != BLOCKY
            or kid[EXTRA]
            or kid[LISTED] >= 0
            or text is None
        ):
            return None
        folded.append((HEADER_CELL if kid[TAG] == "th" else CELL) + text)
    return ["".join(folded)] if folded else None


def fold_blocks(root: TextNode) -> TextNode:
    """``root`` with its lists and row groups folded as read.js folds them for an extract (in
    place; the root itself and ``<pre>`` content stay as they are)."""
    for child in root[CHILDREN]:
        if child.__class__ is list and child[TAG] != "pre":
            fold_blocks(child)
            if child[ROLE] or child[LISTED] >= 0:
                continue
            if child[TAG] in ("ul", "ol", "menu"):
                child[CHILDREN] = _folded(child[CHILDREN], "li", ITEM) or child[CHILDREN]
            elif child[TAG] in ("table", "thead", "tbody", "tfoot"):
                child[CHILDREN] = _folded(child[CHILDREN], "tr", ROW) or child[CHILDREN]
    return root


def _folded(kids: list[Any], tag: str, mark: str) -> list[str] | None:
    folded = []
    for kid in kids:
        if isinstance(kid, str):
            if kid.strip(" \t\n\r\f"):
                return None
            continue
        text = _only_text(kid)
        if kid[TAG] != tag or kid[ROLE] or kid[FLAGS] != BLOCKY or kid[LISTED] >= 0 or text is None:
            return None
        if tag == "tr" and not text.startswith((CELL, HEADER_CELL)):
            return None  # a row that did not fold
        folded.append(mark + text)
    return ["".join(folded)] if folded else None


def number(root: TextNode) -> TextNode:
    """``root`` with every node's ``order`` set in preorder, as read.js numbers them."""
    counter = 0
    stack = [root]
    while stack:
        current = stack.pop()
        current[ORDER] = counter
        counter += 1
        stack.extend(reversed([c for c in current[CHILDREN] if isinstance(c, list)]))
    return root
