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

from .pagetext import TextNode

CONTEXT_CHARS = 60
_WS = re.compile(r"[ \t\n\r\f]+")
_TOO_WIDE = frozenset({"body", "html", "#root"})


@dataclass(frozen=True, slots=True)
class SearchText:
    """The searchable text of a tree: ``starts[i]`` is where the text of ``owners[i]``
    begins (ascending)."""

    text: str
    starts: list[int]
    owners: list[TextNode]
    listed: list[TextNode]  # the listed nodes, in document order

    def owner_at(self, offset: int) -> TextNode:
        return self.owners[max(bisect_right(self.starts, offset) - 1, 0)]


def search_text(root: TextNode, limit: int) -> SearchText:
    """The tree's text (at most ``limit`` characters) with who owns each piece."""
    parts: list[str] = []
    starts: list[int] = []
    owners: list[TextNode] = []
    listed: list[TextNode] = []
    length = 0
    # What ends the text so far: "" (nothing yet), " ", "\n" or another character.
    last = "\n"

    def add(piece: str, owner: TextNode) -> None:
        nonlocal length, last
        if not piece or length >= limit:
            return
        if piece[0] == " " and last in (" ", "\n"):
            piece = piece[1:]
            if not piece:
                return
        if not owners or owners[-1] is not owner:
            starts.append(length)
            owners.append(owner)
        parts.append(piece)
        length += len(piece)
        last = piece[-1]

    def separate(mark: str, owner: TextNode) -> None:
        nonlocal last, length
        if last == "\n" or length >= limit:
            return
        if last == " ":
            parts[-1] = parts[-1][:-1]
            length -= 1
        add(mark, owner)

    def walk(node: TextNode) -> None:
        if node.listed >= 0:
            listed.append(node)
        block = node.blocky and node.display not in ("table-cell", "contents")
        cell = node.display == "table-cell"
        if block:
            separate("\n", node)
        elif cell:
            add(" ", node)
        if node.tag == "br":
            separate("\n", node)
        elif node.tag == "img" and node.extra.strip():
            add(node.extra, node)
        for child in node.children:
            if child.__class__ is str:
                add(_WS.sub(" ", child), node)  # type: ignore[arg-type]
            else:
                walk(child)  # type: ignore[arg-type]
        if block:
            separate("\n", node)
        elif cell:
            add(" ", node)

    walk(root)
    return SearchText("".join(parts)[:limit], starts, owners, listed)


def literal_pattern(query: str) -> re.Pattern[str]:
    """A case-insensitive pattern for plain text: its words in order, any white space between
    (the searched text has collapsed white space)."""
    return re.compile(r"\s+".join(map(re.escape, query.split())) or re.escape(query), re.IGNORECASE)


def context_of(text: str, start: int, end: int, chars: int = CONTEXT_CHARS) -> str:
    """The match with up to ``chars`` characters either side, on one line."""
    before = max(start - chars, 0)
    after = min(end + chars, len(text))
    snippet = _WS.sub(" ", text[before:after]).strip()
    return ("…" if before > 0 else "") + snippet + ("…" if after < len(text) else "")


def nearest_listed(owner: TextNode, listed: list[TextNode]) -> TextNode | None:
    """The listed node nearest to ``owner`` (see the module docstring)."""
    orders = [node.order for node in listed]
    node: TextNode | None = owner
    while node is not None and node.tag not in _TOO_WIDE:
        if node.listed >= 0:
            return node
        low = bisect_right(orders, node.order)
        high = bisect_right(orders, node.end)
        if low < high:
            # Closest in document order to where the hit's text is.
            at = bisect_right(orders, owner.order, low, high)
            candidates = [i for i in (at - 1, at) if low <= i < high]
            return min((listed[i] for i in candidates), key=lambda n: abs(n.order - owner.order))
        node = node.parent
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
