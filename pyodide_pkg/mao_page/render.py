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
    states = []
    if element.opaque:
        states.append("cross-origin frame, not readable" if element.opaque == "cross_origin_frame" else "closed shadow root, not readable")
    if element.type and element.type not in ("text", element.role):
        states.append(f"type={element.type}")
    if element.checked is not None:
        states.append("checked" if element.checked is True else "mixed" if element.checked == "mixed" else "unchecked")
    if element.pressed is not None:
        states.append("pressed" if element.pressed is True else "mixed" if element.pressed == "mixed" else "not pressed")
    if element.expanded is not None:
        states.append("expanded" if element.expanded else "collapsed")
    if element.selected:
        states.append("selected")
    for flag in ("disabled", "readonly", "required", "invalid"):
        if getattr(element, flag):
            states.append(flag)
    if element.sensitive:
        states.append("sensitive")
    if not element.in_viewport:
        states.append("offscreen")
    if element.frame != "main":
        states.append(f"frame={_quote(element.frame, 40)}")
    if isinstance(element.value, str) and element.value:
        states.append(f"value={_quote(element.value)}")
    elif isinstance(element.value, list) and element.value:
        states.append("value=[" + ", ".join(_quote(v) for v in element.value) + "]")
    if element.options:
        states.append("options=[" + ", ".join(_quote(o.label or o.value, 40) for o in element.options[:12]) + ("…" if len(element.options) > 12 else "") + "]")
    line = f"- {element.role} {_quote(element.label)}"
    if element.text and element.text != element.label:
        line += f" text={_quote(element.text, 60 if element.in_viewport else 30)}"
    if states:
        line += " [" + "] [".join(states) + "]"
    return line + f" [ref={element.element_id}]"


def _node_line(node: OutlineLike, elements: Sequence[ElementLike]) -> str:
    pad = "  " * node.depth
    if node.kind == "element":
        return pad + element_line(elements[node.element])
    if node.kind == "heading":
        return pad + f"- heading {_quote(node.name, 100)} [level={node.level}]"
    if node.kind == "text":
        return pad + f"- text: {_quote(node.name, 100)}"
    return pad + f"- {node.role}" + (f" {_quote(node.name, 60)}" if node.name else "") + ":"


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
    cost = [estimate_tokens(line) + 1 for line in lines]
    keep = [True] * len(outline)
    total = fixed + sum(cost)
    if total > max_tokens:
        order = sorted(
            (i for i, node in enumerate(outline) if node.kind != "container"),
            key=lambda i: (_drop_class(outline[i]), -i),
        )
        for i in order:
            if total <= max_tokens:
                break
            keep[i] = False
            total -= cost[i]
    # A container stays only when something directly after it, deeper, stays.
    for i in range(len(outline) - 1, -1, -1):
        if outline[i].kind == "container":
            j = i + 1
            while j < len(outline) and outline[j].depth > outline[i].depth and not keep[j]:
                j += 1
            keep[i] = j < len(outline) and outline[j].depth > outline[i].depth
    body_lines = [line for line, kept in zip(lines, keep, strict=True) if kept]
    left_out = sum(1 for node, kept in zip(outline, keep, strict=True) if not kept and node.kind != "container")
    body = [*header, opening, *page_lines, *body_lines, closing]
    if left_out:
        body.append(f"[truncated: {left_out} nodes]")
    return "\n".join(body), left_out
