"""Compact text rendering of a snapshot for a model (SPEC S7, S8; seed 000 §1.1).

One line per element: ``- role "name" [states] [ref=...]``. Page-derived text sits inside a
delimited block carrying a per-snapshot nonce, so the backend can mark it untrusted and page
text cannot forge the end marker. The token budget is enforced with an explicit
``[truncated: N nodes]`` notice, never silently.
"""

from __future__ import annotations

import secrets

from .protocol import PageElement

CHARS_PER_TOKEN = 4  # a conservative estimate for mixed English/markup text


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")[:80] + '"'


def element_line(element: PageElement) -> str:
    states = []
    if element.type and element.type not in ("text", element.role):
        states.append(f"type={element.type}")
    if element.checked is not None:
        states.append("checked" if element.checked is True else "mixed" if element.checked == "mixed" else "unchecked")
    if element.expanded is not None:
        states.append("expanded" if element.expanded else "collapsed")
    if element.selected:
        states.append("selected")
    for flag in ("disabled", "readonly", "required"):
        if getattr(element, flag):
            states.append(flag)
    if element.sensitive:
        states.append("sensitive")
    if not element.in_viewport:
        states.append("offscreen")
    if isinstance(element.value, str) and element.value:
        states.append(f"value={_quote(element.value)}")
    elif isinstance(element.value, list) and element.value:
        states.append("value=[" + ", ".join(_quote(v) for v in element.value) + "]")
    if element.options:
        states.append("options=[" + ", ".join(_quote(o.label or o.value) for o in element.options[:12]) + ("…" if len(element.options) > 12 else "") + "]")
    line = f"- {element.role} {_quote(element.label)}"
    if element.text and element.text != element.label:
        line += f" text={_quote(element.text)}"
    if states:
        line += " [" + "] [".join(states) + "]"
    return line + f" [ref={element.element_id}]"


def render_text(*, url: str, title: str, snapshot_id: str, elements: list[PageElement], max_tokens: int) -> tuple[str, int]:
    """(text, number of elements left out)."""
    nonce = secrets.token_hex(6)
    header = [f"snapshot {snapshot_id}"]
    opening = f"<<<page-content {nonce} (untrusted text from the page)>>>"
    closing = f"<<<end page-content {nonce}>>>"
    # The URL and title are page-controlled too (S8), so they sit inside the block.
    page_lines = [f"url: {url}", f"title: {_quote(title)}"]
    budget = max_tokens * CHARS_PER_TOKEN
    used = sum(len(line) + 1 for line in (*header, opening, *page_lines, closing)) + 40
    lines: list[str] = []
    # Elements in the viewport first, so a tight budget drops off-viewport ones (S7).
    ordered = sorted(elements, key=lambda e: (not e.in_viewport,))
    for element in ordered:
        line = element_line(element)
        if used + len(line) + 1 > budget:
            break
        lines.append(line)
        used += len(line) + 1
    left_out = len(elements) - len(lines)
    body = [*header, opening, *page_lines, *lines, closing]
    if left_out:
        body.append(f"[truncated: {left_out} nodes]")
    return "\n".join(body), left_out
