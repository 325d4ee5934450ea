"""Compact text rendering of a snapshot for a model (SPEC S7, S8).

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
from collections.abc import Callable, Sequence
from itertools import chain, compress
from typing import TYPE_CHECKING, Any, NamedTuple

from .scanner import OutlineNode

if TYPE_CHECKING:
    from ..protocol import PageElement
    from .element import SnapshotElement

    ElementLike = PageElement | SnapshotElement

CHARS_PER_TOKEN = 4  # a conservative estimate for ASCII text and markup


def estimate_tokens(text: str) -> int:
    """Tokens of a line: ~4 ASCII characters per token, one per other character (CJK text
    tokenizes at about a token per character)."""
    # Characters beyond ASCII take 2-4 UTF-8 bytes; CJK (3 bytes) is the common case here.
    wide = (len(text.encode("utf-8")) - len(text) + 1) // 2
    return (len(text) - wide + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN + wide


def _quote(text: str, limit: int = 80) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")[:limit] + '"'


class ElementColumns(NamedTuple):
    """What the lines of the listed elements show, one column (a sequence in element order)
    per field: the inspector hands over the scan's columns, so no object is made per element
    for the text form. ``options`` holds (value, label, selected, disabled) tuples."""

    element_id: Sequence[str]
    role: Sequence[str]
    type: Sequence[str]
    label: Sequence[str]
    text: Sequence[str]
    value: Sequence[str | bool | list[str] | None]
    options: Sequence[Sequence[tuple[str, str, bool, bool]]]
    in_viewport: Sequence[bool]
    disabled: Sequence[bool]
    readonly: Sequence[bool]
    required: Sequence[bool]
    checked: Sequence[bool | str | None]
    selected: Sequence[bool | None]
    expanded: Sequence[bool | None]
    sensitive: Sequence[bool]
    frame: Sequence[str]
    invalid: Sequence[bool]
    pressed: Sequence[bool | str | None]
    opaque: Sequence[str | None]
    new: Sequence[bool | None]

    @classmethod
    def of(
        cls, element_ids: Sequence[str], column: Callable[[str], Sequence[Any]]
    ) -> ElementColumns:
        """The columns by field name: ``column(name)`` gives that field of every element (the
        names are ``element.Element``'s)."""
        return cls(element_ids, *map(column, cls._fields[1:]))


def element_columns(elements: Sequence[ElementLike]) -> ElementColumns:
    """The columns of protocol or snapshot elements (read by name; tests and small lists)."""

    def column(name: str) -> list[Any]:
        if name == "options":
            return [
                tuple((o.value, o.label, o.selected, o.disabled) for o in element.options)
                for element in elements
            ]
        return [getattr(element, name) for element in elements]

    return ElementColumns(*map(column, ElementColumns._fields))


def element_line(element: ElementLike) -> str:
    return element_lines(element_columns([element]))[0]


def _state_run(
    new: bool | None,
    opaque: str | None,
    type_: str,
    role: str,
    checked: bool | str | None,
    pressed: bool | str | None,
    expanded: bool | None,
    selected: bool | None,
    disabled: bool,
    readonly: bool,
    required: bool,
    invalid: bool,
    sensitive: bool,
    in_viewport: bool,
) -> str:
    """The states of a line from ``new`` to ``offscreen``, as `` [state]`` each."""
    states = []
    if new:
        states.append("new")  # appeared since the previous snapshot (SPEC S9)
    if opaque:
        states.append(
            "cross-origin frame, not readable"
            if opaque == "cross_origin_frame"
            else "closed shadow root, not readable"
        )
    if type_ and type_ != "text" and type_ != role:
        states.append(f"type={type_}")
    if checked is not None:
        states.append(
            "checked" if checked is True else "mixed" if checked == "mixed" else "unchecked"
        )
    if pressed is not None:
        states.append(
            "pressed" if pressed is True else "mixed" if pressed == "mixed" else "not pressed"
        )
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
    return "".join(f" [{state}]" for state in states)


def element_lines(columns: ElementColumns) -> list[str]:
    """``- role "name" [states] [ref=...]`` for each element."""
    lines = []
    for (
        element_id,
        role,
        type_,
        label,
        text,
        value,
        options,
        in_viewport,
        disabled,
        readonly,
        required,
        checked,
        selected,
        expanded,
        sensitive,
        frame,
        invalid,
        pressed,
        opaque,
        new,
    ) in zip(*columns, strict=True):
        line = f"- {role} {_quote(label)}"
        if text and text != label:
            line += f" text={_quote(text, 60 if in_viewport else 30)}"
        line += _state_run(
            new,
            opaque,
            type_,
            role,
            checked,
            pressed,
            expanded,
            selected,
            disabled,
            readonly,
            required,
            invalid,
            sensitive,
            in_viewport,
        )
        if frame != "main":
            line += f" [frame={_quote(frame, 40)}]"
        if value:
            if isinstance(value, str):
                line += f" [value={_quote(value)}]"
            elif isinstance(value, list):
                line += " [value=[" + ", ".join(_quote(v) for v in value) + "]]"
        if options:
            line += (
                " [options=["
                + ", ".join(_quote(label or value, 40) for value, label, _s, _d in options[:12])
                + ("…" if len(options) > 12 else "")
                + "]]"
            )
        lines.append(f"{line} [ref={element_id}]")
    return lines


def _node_lines(outline: list[OutlineNode], element_text: list[str]) -> list[str]:
    """The line of each outline node, indented by its depth."""
    lines = []
    add = lines.append
    for kind, depth, role, name, element, _in_viewport, level in outline:
        if kind == "element":
            line = element_text[element]
        elif kind == "text":
            line = f"- text: {_quote(name, 100)}"
        elif kind == "heading":
            line = f"- heading {_quote(name, 100)} [level={level}]"
        else:
            line = f"- {role}" + (f" {_quote(name, 60)}" if name else "") + ":"
        add("  " * depth + line if depth else line)
    return lines


def _line_costs(lines: list[str]) -> list[int]:
    """``estimate_tokens(line) + 1`` (its newline) for each line, with the ASCII case (most
    lines) computed in place: one call per line was a tenth of rendering a whole page."""
    return [
        (len(line) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN + 1
        if line.isascii()
        else estimate_tokens(line) + 1
        for line in lines
    ]


def _drop_class(node: OutlineNode) -> int:
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
    elements: Sequence[ElementLike] | ElementColumns,
    max_tokens: int,
    outline: list[OutlineNode] | None = None,
    page_version: str = "",
) -> tuple[str, int]:
    """(text, number of nodes left out). ``elements``: the listed elements, or their columns."""
    columns = elements if isinstance(elements, ElementColumns) else element_columns(elements)
    if outline is None:
        outline = [
            OutlineNode("element", 0, element=i, in_viewport=v)
            for i, v in enumerate(columns.in_viewport)
        ]
    nonce = secrets.token_hex(6)
    header = [
        f"snapshot {snapshot_id}" + (f" (page version {page_version})" if page_version else "")
    ]
    opening = f"<<<page-content {nonce} (untrusted text from the page)>>>"
    closing = f"<<<end page-content {nonce}>>>"
    # The URL and title are page-controlled too (S8), so they sit inside the block.
    page_lines = [f"url: {url}", f"title: {_quote(title)}"]
    fixed = sum(estimate_tokens(line) + 1 for line in (*header, opening, *page_lines, closing)) + 12
    lines = _node_lines(outline, element_lines(columns))
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
