"""The rendered text of a page as a tree, for the read tools (SPEC T1, T2).

``loader_js/primitives/read.js`` (``readText``) walks the composed tree once and sends what
the browser renders as a flat list: a string is a text node's text, a list opens an element
(``[tag, display, role, flags, extra, node, listed]``, its content follows), ``0`` closes it.
``parse`` builds the tree and leaves out, with their whole subtree, what no read tool may
return: ``aria-hidden`` content, the page owner's ``data-mao-private`` / ``data-mao-ignore``
content, and editable regions the snapshot engine's rules call sensitive (SPEC P5, S4).
What counts as page chrome is the Markdown's business (``extract``), not the tree's: a find
also searches the navigation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# Flags of an element item (read.js READ_*).
ARIA_HIDDEN = 1
PRIVATE = 2
PRE = 4
EDITABLE_ROOT = 8
FRAME = 16
_EXCLUDED = ARIA_HIDDEN | PRIVATE

# The CSS display values of inline-level boxes: their content flows into the surrounding text.
INLINE_DISPLAYS = frozenset({
    "inline", "inline-block", "inline-flex", "inline-grid", "inline-table", "ruby", "ruby-text", "ruby-base",
    "inline flow", "inline flow-root", "inline flex", "inline grid",
})


class TextNode:
    """One rendered element. ``order`` is its position among the walk's elements (preorder),
    ``end`` the order of the last element of its subtree; ``listed`` its position in the
    ``listed`` list given to the walk (-1 when not listed); ``blocky``: it or something inside
    it is block-level, so its content does not fit on one line of text."""

    __slots__ = ("tag", "display", "role", "flags", "extra", "order", "listed", "children", "parent", "end", "blocky")

    def __init__(self, tag: str, display: str, role: str, flags: int, extra: str, order: int, listed: int,
                 parent: TextNode | None) -> None:
        self.tag = tag
        self.display = display
        self.role = role
        self.flags = flags
        self.extra = extra
        self.order = order
        self.listed = listed
        self.parent = parent
        self.children: list[TextNode | str] = []
        self.end = order
        self.blocky = display not in INLINE_DISPLAYS and display != "contents"


# Decides whether an editable region (by its ``order``) is a sensitive field.
SensitiveEditable = Callable[[int], bool]


def parse(items: list[Any], sensitive_editable: SensitiveEditable = lambda order: False) -> TextNode:
    """The tree of a ``readText`` walk under a root of tag ``#root``, without the excluded
    subtrees (see the module docstring)."""
    root = TextNode("#root", "block", "", 0, "", -1, -1, None)
    stack = [root]
    # Inside an excluded subtree: its depth, so its items are read past without a node.
    skipping = 0
    top = root
    for item in items:
        if item.__class__ is str:
            if not skipping:
                top.children.append(item)
            continue
        if item == 0:
            if skipping:
                skipping -= 1
                continue
            done = stack.pop()
            top = stack[-1]
            if done.blocky:
                top.blocky = True
            if done.end > top.end:
                top.end = done.end
            continue
        if skipping:
            skipping += 1
            continue
        tag, display, role, flags, extra, order, listed = item
        if flags & _EXCLUDED or (flags & EDITABLE_ROOT and sensitive_editable(order)):
            skipping = 1
            continue
        node = TextNode(tag, display, role, flags, extra, order, listed, top)
        if order > top.end:
            top.end = order
        top.children.append(node)
        stack.append(node)
        top = node
    # A cut-short walk closes everything itself; be safe with one that did not.
    while len(stack) > 1:
        done = stack.pop()
        if done.blocky:
            stack[-1].blocky = True
        stack[-1].end = max(stack[-1].end, done.end)
    return root


def editable_roots(items: list[Any]) -> list[int]:
    """The ``order`` of every editable region's root in a walk (a handful on most pages)."""
    return [item[5] for item in items if item.__class__ is list and item[3] & EDITABLE_ROOT]
