"""Compact text rendering of a snapshot for a model (SPEC S7, S8; seed 000 §1.1).

One line per node, indented under the forms, dialogs, lists, tables and landmarks that hold
it: ``- role "name" [states] [ref=...]`` for elements, ``- heading "..." [level=N]`` and
``- text: "..."`` for context. Page-derived text sits inside a delimited block carrying a
per-snapshot nonce, so the backend can mark it untrusted and page text cannot forge the end
marker. The token budget is enforced with an explicit ``[truncated: N nodes]`` notice,
never silently: off-viewport text goes first, then in-viewport text, then off-viewport
elements, and in-viewport elements last (refs are what the agent acts on).
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from itertools import chain, compress
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from .inspector import SnapshotElement
    from .protocol import PageElement

    ElementLike = PageElement | SnapshotElement

CHARS_PER_TOKEN = 4  # a conservative estimate for ASCII text and markup


class OutlineLike(Protocol):
    kind: str
    depth: int
    role: str
    name: str
    element: int
    in_viewport: bool
    level: int


def estimate_tokens(text: str) -> int:
    """Tokens of a line: ~4 ASCII characters per token, one per other character (CJK text
    tokenizes at about a token per character)."""
    if text.isascii():
        return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN
    # Characters beyond ASCII take 2-4 UTF-8 bytes; CJK (3 bytes) is the common case here.
    wide = (len(text.encode("utf-8")) - len(text) + 1) // 2
    return (len(text) - wide + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN + wide


def _quote(text: str, limit: int = 80) -> str:
    if "\\" not in text and '"' not in text and "\n" not in text:
        return '"' + text[:limit] + '"'  # nothing to escape (most labels)
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")[:limit] + '"'


def element_line(element: ElementLike) -> str:
    # Runs once per listed element (thousands on a whole page): the fields are read once, and
    # the common states are plain tests rather than a loop over names. A ``SnapshotElement``
    # (what page_inspect renders) is a tuple, unpacked in one step: about twice as fast as
    # reading its fields by name in Pyodide (tests/page/test_render.py holds both ways equal).
    if isinstance(element, tuple):
        (element_id, _kind, role, type_, label, text, value, options, _visible, in_viewport, disabled, readonly,
         required, _rect, checked, selected, expanded, _placeholder, _href, sensitive, _form, frame, invalid,
         pressed, _description, opaque) = element
    else:
        element_id, role, type_, label, text, value, options = (
            element.element_id, element.role, element.type, element.label, element.text, element.value, element.options)
        in_viewport, disabled, readonly, required, checked, selected, expanded = (
            element.in_viewport, element.disabled, element.readonly, element.required, element.checked,
            element.selected, element.expanded)
        sensitive, frame, invalid, pressed, opaque = (
            element.sensitive, element.frame, element.invalid, element.pressed, element.opaque)
    states = []
    if opaque:
        states.append("cross-origin frame, not readable" if opaque == "cross_origin_frame" else "closed shadow root, not readable")
    if type_ and type_ != "text" and type_ != role:
        states.append(f"type={type_}")
    if checked is not None:
        states.append("checked" if checked is True else "mixed" if checked == "mixed" else "unchecked")
    if pressed is not None:
        states.append("pressed" if pressed is True else "mixed" if pressed == "mixed" else "not pressed")
    if expanded is not None:
        states.append("expanded" if expanded else "collapsed")
    if selected:
        states.append("selected")
    if disabled:
        states.append("disabled")
    if readonly:
        states.append("readonly")
    if required:
        states.append("required")
    if invalid:
        states.append("invalid")
    if sensitive:
        states.append("sensitive")
    if not in_viewport:
        states.append("offscreen")
    if frame != "main":
        states.append(f"frame={_quote(frame, 40)}")
    if value:
        if isinstance(value, str):
            states.append(f"value={_quote(value)}")
        elif isinstance(value, list):
            states.append("value=[" + ", ".join(_quote(v) for v in value) + "]")
    if options:
        states.append("options=[" + ", ".join(_quote(o.label or o.value, 40) for o in options[:12]) + ("…" if len(options) > 12 else "") + "]")
    line = f"- {role} {_quote(label)}"
    if text and text != label:
        line += f" text={_quote(text, 60 if in_viewport else 30)}"
    if states:
        return f"{line} [{'] ['.join(states)}] [ref={element_id}]"
    return f"{line} [ref={element_id}]"


def _node_line(node: OutlineLike, elements: Sequence[ElementLike]) -> str:
    kind = node.kind
    if kind == "element":
        line = element_line(elements[node.element])
    elif kind == "heading":
        line = f"- heading {_quote(node.name, 100)} [level={node.level}]"
    elif kind == "text":
        line = f"- text: {_quote(node.name, 100)}"
    else:
        line = f"- {node.role}" + (f" {_quote(node.name, 60)}" if node.name else "") + ":"
    depth = node.depth
    return "  " * depth + line if depth else line


def _line_costs(lines: list[str]) -> list[int]:
    """``estimate_tokens(line) + 1`` (its newline) for each line, with the ASCII case (most
    lines) computed in place: one call per line was a tenth of rendering a whole page."""
    return [
        (len(line) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN + 1 if line.isascii() else estimate_tokens(line) + 1
        for line in lines
    ]


def _drop_class(node: OutlineLike) -> int:
    """Budget order: 0 goes first. Containers are never dropped on their own; they vanish
    when nothing inside them is left."""
    interactive = node.kind == "element"
    if node.kind == "container":
        return 9
    if interactive:
        return 3 if node.in_viewport else 2
    return 1 if node.in_viewport else 0


def render_text(
    *,
    url: str,
    title: str,
    snapshot_id: str,
    elements: Sequence[ElementLike],
    max_tokens: int,
    outline: list[OutlineLike] | None = None,
    page_version: str = "",
) -> tuple[str, int]:
    """(text, number of nodes left out)."""
    if outline is None:
        from .scanner import OutlineNode

        outline = [OutlineNode("element", 0, element=i, in_viewport=e.in_viewport) for i, e in enumerate(elements)]
    nonce = secrets.token_hex(6)
    header = [f"snapshot {snapshot_id}" + (f" (page version {page_version})" if page_version else "")]
    opening = f"<<<page-content {nonce} (untrusted text from the page)>>>"
    closing = f"<<<end page-content {nonce}>>>"
    # The URL and title are page-controlled too (S8), so they sit inside the block.
    page_lines = [f"url: {url}", f"title: {_quote(title)}"]
    fixed = sum(estimate_tokens(line) + 1 for line in (*header, opening, *page_lines, closing)) + 12
    lines = [_node_line(node, elements) for node in outline]
    cost = _line_costs(lines)
    keep = [True] * len(outline)
    total = fixed + sum(cost)
    left_out = 0
    if total > max_tokens:
        # Drop by class, and within a class from the end of the page up: a bucket per class
        # in page order, each walked backwards (what sorting on (class, -index) gives).
        buckets: tuple[list[int], ...] = ([], [], [], [])
        for i, node in enumerate(outline):
            if node.kind != "container":
                buckets[_drop_class(node)].append(i)
        for i in chain.from_iterable(map(reversed, buckets)):
            if total <= max_tokens:
                break
            keep[i] = False
            total -= cost[i]
            left_out += 1
    # A container stays only when something directly after it, deeper, stays (inner
    # containers first, so an outer one sees whether they stayed).
    end = len(outline)
    for i in reversed([i for i, node in enumerate(outline) if node.kind == "container"]):
        depth = outline[i].depth
        j = i + 1
        while j < end and outline[j].depth > depth and not keep[j]:
            j += 1
        keep[i] = j < end and outline[j].depth > depth
    body_lines = compress(lines, keep)
    body = [*header, opening, *page_lines, *body_lines, closing]
    if left_out:
        body.append(f"[truncated: {left_out} nodes]")
    return "\n".join(body), left_out
