"""The rendered text of a page as a tree, for the read tools (SPEC T1, T2).

``loader_js/primitives/read.js`` (``readText``) walks the composed tree once and sends what
the browser renders as nested JSON, so that ``json.loads`` builds the tree (in C) and no
Python loop goes over the page twice. A node is a list::

    [tag, display, role, flags, extra, order, listed, children]

``children`` holds nodes and strings (text, white space not yet collapsed); ``order`` is the
node's position among the walk's items (preorder), ``listed`` its position in the ``listed``
elements given to the walk (-1 when not listed), ``extra`` a link's absolute URL, an image's
alt text, a cell's "colspan,rowspan" or a heading's aria-level.

``excluded`` says which subtrees no read tool may return: ``aria-hidden`` content, the page
owner's ``data-mao-private`` / ``data-mao-ignore`` content, and editable regions the snapshot
engine's rules call sensitive (SPEC P5, S4). What counts as page chrome is the Markdown's
business (``extract``), not the tree's: a find also searches the navigation.
"""

from __future__ import annotations

from typing import Any

# Positions in a node.
TAG, DISPLAY, ROLE, FLAGS, EXTRA, ORDER, LISTED, CHILDREN = range(8)

# Flags (read.js READ_*).
ARIA_HIDDEN = 1
PRIVATE = 2
EDITABLE_ROOT = 8
FRAME = 16
BLOCKY = 32  # it or something inside it is block-level: its content is not one line of text
_HIDDEN = ARIA_HIDDEN | PRIVATE

# A node (see the module docstring).
TextNode = list[Any]

# The CSS display values of inline-level boxes: their content flows into the surrounding text.
INLINE_DISPLAYS = frozenset({
    "inline", "inline-block", "inline-flex", "inline-grid", "inline-table", "ruby", "ruby-text", "ruby-base",
    "inline flow", "inline flow-root", "inline flex", "inline grid", "contents",
})


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
            children[:] = [c for c in children if c.__class__ is not list or not excluded(c, sensitive)]
        stack.extend(c for c in children if c.__class__ is list)
    return root


def node(tag: str, *children: Any, display: str = "block", role: str = "", flags: int = 0, extra: str = "",
         order: int = 0, listed: int = -1) -> TextNode:
    """A node as read.js makes one (for tests and tools that build trees by hand); BLOCKY is
    set as read.js sets it."""
    if display not in INLINE_DISPLAYS or any(isinstance(c, list) and c[FLAGS] & BLOCKY for c in children):
        flags |= BLOCKY
    return [tag, display, role, flags, extra, order, listed, list(children)]


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
