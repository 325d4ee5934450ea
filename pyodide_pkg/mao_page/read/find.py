"""``page_find``: where text occurs on the page, and the nearest element to act on (SPEC T2).

The text searched is what ``page_extract`` reads, page chrome included (navigation is where
many things an agent looks for live): one line per block, table cells side by side, white
space collapsed, so a query matches across inline elements (``Total: <b>$5</b>``). Each
hit is tied to the element whose text it starts in; its ref is the nearest listed element:
the element itself or its closest listed ancestor, else the listed element closest in
document order inside the nearest ancestor that holds one (the row's button for a cell's
text). Only ``body`` and ``html`` are too wide for that: a hit with nothing listed nearer has
no ``elementId``.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

from ..dom.textrules import ASCII_SPACE_RUN
from .pagetext import BLOCKY, CHILDREN, DISPLAY, EXTRA, FLAGS, LISTED, ORDER, TAG, TextNode, plain

CONTEXT_CHARS = 60
_TOO_WIDE = frozenset({"body", "html"})


@dataclass(frozen=True, slots=True)
class SearchText:
    """The searchable text of a tree: ``starts[i]`` is where the text of the node of order
    ``owners[i]`` begins (ascending). Per node order: its parent's order (-1 for the root),
    the last order in its subtree, its tag and its ``listed`` position; ``listed_orders``
    are the listed nodes' orders, ascending."""

    text: str
    starts: list[int]
    owners: list[int]
    parents: dict[int, int]
    ends: dict[int, int]
    tags: dict[int, str]
    listed: dict[int, int]
    listed_orders: list[int]

    def owner_at(self, offset: int) -> int:
        return self.owners[max(bisect_right(self.starts, offset) - 1, 0)]


def search_text(root: TextNode | None, limit: int) -> SearchText:
    """The tree's text (at most ``limit`` characters) with who owns each piece."""
    parts: list[str] = []
    starts: list[int] = []
    owners: list[int] = []
    parents: dict[int, int] = {}
    ends: dict[int, int] = {}
    tags: dict[int, str] = {}
    listed: dict[int, int] = {}
    length = 0
    last = "\n"  # the last character of the text so far

    def add(piece: str, owner: int) -> None:
        nonlocal length, last
        if piece[0] == " " and last in (" ", "\n"):
            piece = piece[1:]
            if not piece:
                return
        if not owners or owners[-1] != owner:
            starts.append(length)
            owners.append(owner)
        parts.append(piece)
        length += len(piece)
        last = piece[-1]

    def separate(owner: int) -> None:
        nonlocal length, last
        if last == "\n":
            return
        if last == " ":
            parts[-1] = parts[-1][:-1]
            length -= 1
        add("\n", owner)

    def walk(node: TextNode, parent: int) -> int:
        order = node[ORDER]
        parents[order] = parent
        tags[order] = node[TAG]
        if node[LISTED] >= 0:
            listed[order] = node[LISTED]
        display = node[DISPLAY]
        cell = display == "table-cell"
        block = not cell and node[FLAGS] & BLOCKY and display != "contents"
        if block:
            separate(order)
        elif cell:
            add(" ", order)
        if node[TAG] == "br":
            separate(order)
        elif node[TAG] == "img" and node[EXTRA].strip():
            add(node[EXTRA], order)
        end = order
        for child in node[CHILDREN]:
            if length >= limit:
                break
            if child.__class__ is str:
                piece = ASCII_SPACE_RUN.sub(" ", plain(child))
                if piece:  # a folded link with no text
                    add(piece, order)
            else:
                end = walk(child, order)
        if block:
            separate(order)
        elif cell:
            add(" ", order)
        ends[order] = end
        return end

    if root is not None:
        walk(root, -1)
    return SearchText(
        "".join(parts)[:limit], starts, owners, parents, ends, tags, listed, sorted(listed)
    )


def literal_pattern(query: str) -> re.Pattern[str]:
    """A case-insensitive pattern for plain text: its words in order, any white space between
    (the searched text has collapsed white space)."""
    return re.compile(r"\s+".join(map(re.escape, query.split())) or re.escape(query), re.IGNORECASE)


def context_of(text: str, start: int, end: int, chars: int = CONTEXT_CHARS) -> str:
    """The match with up to ``chars`` characters either side, on one line."""
    before = max(start - chars, 0)
    after = min(end + chars, len(text))
    snippet = ASCII_SPACE_RUN.sub(" ", text[before:after]).strip()
    return ("…" if before > 0 else "") + snippet + ("…" if after < len(text) else "")


def nearest_listed(searched: SearchText, owner: int) -> int | None:
    """The ``listed`` position of the listed node nearest to node ``owner`` (see the module
    docstring), or None."""
    orders = searched.listed_orders
    node = owner
    while node >= 0 and searched.tags[node] not in _TOO_WIDE:
        if node in searched.listed:
            return searched.listed[node]
        low = bisect_right(orders, node)
        high = bisect_right(orders, searched.ends[node])
        if low < high:
            # Closest in document order to where the hit's text is.
            at = bisect_right(orders, owner, low, high)
            candidates = [orders[i] for i in (at - 1, at) if low <= i < high]
            return searched.listed[min(candidates, key=lambda order: abs(order - owner))]
        node = searched.parents[node]
    return None


def utf16_to_index(text: str) -> list[int] | None:
    """For converting JavaScript (UTF-16) offsets into ``text``: the UTF-16 offsets of the
    characters outside the BMP (two code units each there, one character here), or None when
    there are none and the offsets agree."""
    if text.isascii() or max(text) < "\U00010000":
        return None
    out = []
    extra = 0
    for index, char in enumerate(text):
        if char >= "\U00010000":
            out.append(index + extra)
            extra += 1
    return out


def from_utf16(offset: int, astral: list[int] | None) -> int:
    if astral is None:
        return offset
    return offset - bisect_right(astral, offset - 1)
