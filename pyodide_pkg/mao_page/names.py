"""Accessible names over fact rows, following the W3C accname 1.2 steps in order.

This is the first cut used by the foundation scanner; the snapshot-engine issue extends it
(embedded controls, hidden referenced subtrees, CSS generated content).
"""

from __future__ import annotations

from typing import Any

from . import facts as F
from .roles import NAME_FROM_CONTENT_ROLES

_MAX_NAME = 200


class DocumentIndex:
    """Lookups over one document's rows, built once per scan."""

    __slots__ = ("rows", "children", "by_id", "labels_for", "hidden")

    def __init__(self, rows: list[list[Any]]) -> None:
        self.rows = rows
        self.children: list[list[int]] = [[] for _ in rows]
        self.by_id: dict[str, int] = {}
        self.labels_for: dict[str, list[int]] = {}
        # Rendered-hidden: display:none on the element or an ancestor, or visibility hidden.
        # Only display:none hides a whole subtree: visibility is inherited through the
        # computed style, which a descendant may set back to visible (CSS 2 §11.2).
        self.hidden = [False] * len(rows)
        display_none = [False] * len(rows)
        for index, row in enumerate(rows):
            parent = row[F.PARENT]
            if parent >= 0:
                self.children[parent].append(index)
            display_none[index] = (parent >= 0 and display_none[parent]) or row[F.DISPLAY] == "none"
            self.hidden[index] = display_none[index] or row[F.VISIBILITY] != "visible"
            if row[F.ID] and row[F.ID] not in self.by_id:
                self.by_id[row[F.ID]] = index
            if row[F.TAG] == "label" and row[F.LABEL_FOR]:
                self.labels_for.setdefault(row[F.LABEL_FOR], []).append(index)

    def ancestors(self, index: int):
        parent = self.rows[index][F.PARENT]
        while parent >= 0:
            yield parent
            parent = self.rows[parent][F.PARENT]

    def text_content(self, index: int, *, skip_hidden: bool = True, limit: int = 400) -> str:
        """Rendered text of a subtree (name from content, accname step 2F/2G)."""
        parts: list[str] = []
        size = 0
        stack = [index]
        while stack and size < limit:
            current = stack.pop()
            row = self.rows[current]
            if skip_hidden and current != index and (self.hidden[current] or row[F.ARIA_HIDDEN] == "true"):
                continue
            if row[F.TAG] in ("script", "style", "noscript", "template"):
                continue
            own = _embedded_value(row) if current != index else ""
            own = own or row[F.OWN_TEXT] or (row[F.ALT] if row[F.TAG] == "img" else "")
            if own:
                parts.append(own)
                size += len(own)
            stack.extend(reversed(self.children[current]))
        return _squash(" ".join(parts))[:limit]


def _squash(text: str) -> str:
    return " ".join(text.split())


def _embedded_value(row: list[Any]) -> str:
    """accname step 2E: an embedded control contributes its value, not its text."""
    tag = row[F.TAG]
    if tag == "input" and row[F.TYPE] in ("text", "", "number", "email", "search", "tel", "url"):
        return row[F.VALUE]
    if tag == "select":
        chosen = [o[1] for o in row[F.OPTIONS] or () if o[2]]
        return " ".join(chosen)
    return ""


def accessible_name(index: int, role: str, doc: DocumentIndex) -> tuple[str, str]:
    """(name, source) for the element at ``index``. Source names the accname step used."""
    row = doc.rows[index]
    # Step 2B: aria-labelledby, referenced nodes used even when hidden.
    if row[F.ARIA_LABELLEDBY]:
        texts = []
        for ref in row[F.ARIA_LABELLEDBY].split():
            target = doc.by_id.get(ref)
            if target is not None:
                target_row = doc.rows[target]
                texts.append(target_row[F.ARIA_LABEL] or doc.text_content(target, skip_hidden=False))
        name = _squash(" ".join(t for t in texts if t))
        if name:
            return name[:_MAX_NAME], "aria-labelledby"
    # Step 2C: aria-label.
    if _squash(row[F.ARIA_LABEL]):
        return _squash(row[F.ARIA_LABEL])[:_MAX_NAME], "aria-label"
    tag = row[F.TAG]
    # Step 2D: native label sources (HTML-AAM).
    if tag == "input" and row[F.TYPE] in ("submit", "reset", "button"):
        value = row[F.VALUE_ATTR] or {"submit": "Submit", "reset": "Reset"}.get(row[F.TYPE], "")
        if value:
            return _squash(value)[:_MAX_NAME], "value"
    if tag == "input" and row[F.TYPE] == "image" and row[F.ALT]:
        return _squash(row[F.ALT])[:_MAX_NAME], "alt"
    if tag in ("input", "select", "textarea", "button", "meter", "progress", "output"):
        labels = []
        if row[F.ID]:
            labels.extend(doc.labels_for.get(row[F.ID], ()))
        for ancestor in doc.ancestors(index):
            if doc.rows[ancestor][F.TAG] == "label":
                # <label for=x> wrapping #x is one label, not two (its text once).
                if ancestor not in labels:
                    labels.append(ancestor)
                break
        texts = [_label_text(label, index, doc) for label in labels]
        name = _squash(" ".join(t for t in texts if t))
        if name:
            return name[:_MAX_NAME], "label"
    if tag == "img" and row[F.ALT]:
        return _squash(row[F.ALT])[:_MAX_NAME], "alt"
    # Step 2F: name from content for roles that allow it.
    if role in NAME_FROM_CONTENT_ROLES or tag in ("button", "summary"):
        text = doc.text_content(index)
        if text:
            return text[:_MAX_NAME], "content"
    # Step 2I: tooltip attribute; HTML-AAM then falls back to placeholder for text fields.
    if _squash(row[F.TITLE]):
        return _squash(row[F.TITLE])[:_MAX_NAME], "title"
    if _squash(row[F.PLACEHOLDER]):
        return _squash(row[F.PLACEHOLDER])[:_MAX_NAME], "placeholder"
    return "", ""


def _label_text(label: int, control: int, doc: DocumentIndex) -> str:
    """Text of a <label>, with the labelled control itself left out (it would echo its value)."""
    parts: list[str] = []
    stack = [label]
    while stack:
        current = stack.pop()
        if current == control:
            continue
        row = doc.rows[current]
        if current != label and doc.hidden[current]:
            continue
        own = (_embedded_value(row) if current != label else "") or row[F.OWN_TEXT]
        if own:
            parts.append(own)
        stack.extend(reversed(doc.children[current]))
    return _squash(" ".join(parts))


def nearby_text(index: int, doc: DocumentIndex) -> str:
    """SPEC S3 fallback: text right before the element among its siblings and parent."""
    row = doc.rows[index]
    parent = row[F.PARENT]
    if parent < 0:
        return ""
    siblings = doc.children[parent]
    position = siblings.index(index)
    for sibling in reversed(siblings[:position]):
        text = doc.text_content(sibling, limit=80)
        if text:
            return text
    return doc.rows[parent][F.OWN_TEXT][:80]
