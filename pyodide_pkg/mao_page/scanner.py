"""The page scanner: which elements an agent may see and act on (SPEC S1-S4).

Input is the fact rows of one document (``mao_page.facts``); every decision is made here in
Python. This is the foundation scanner for the main document and its open shadow roots; the
snapshot-engine issue adds same-origin iframes, placeholders and the full accname rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import facts as F
from .names import DocumentIndex, accessible_name, nearby_text
from .roles import WIDGET_ROLES, explicit_role, kind_of, role_of
from .sensitive import is_sensitive

_NATIVE_INTERACTIVE = frozenset({"button", "select", "textarea", "summary"})
_SKIPPED_TAGS = frozenset({"html", "head", "body", "script", "style", "template", "noscript", "option", "optgroup"})
_NON_FILLABLE_INPUTS = frozenset({"checkbox", "radio", "button", "submit", "reset", "image", "file", "color", "range"})
TEXT_LIMIT = 120


@dataclass(frozen=True, slots=True)
class Viewport:
    width: float
    height: float
    scroll_x: float
    scroll_y: float
    device_pixel_ratio: float = 1.0


@dataclass(frozen=True, slots=True)
class ScannedElement:
    index: int
    tag: str
    kind: str
    role: str
    type: str
    label: str
    label_source: str
    text: str
    value: str | bool | list[str] | None
    options: tuple[tuple[str, str, bool, bool], ...]
    visible: bool
    in_viewport: bool
    disabled: bool
    readonly: bool
    required: bool
    rect: tuple[float, float, float, float]
    checked: bool | str | None
    selected: bool | None
    expanded: bool | None
    placeholder: str
    href: str
    sensitive: bool
    private: bool
    form: tuple[str, str, str, str] | None
    key: tuple[str, ...]


def _tabindex(row: list[Any]) -> int | None:
    try:
        return int(row[F.TABINDEX]) if row[F.TABINDEX] != "" else None
    except ValueError:
        return None


def is_interactive(index: int, row: list[Any], role: str, doc: DocumentIndex) -> bool:
    """SPEC S1, recall first."""
    tag = row[F.TAG]
    if tag in _SKIPPED_TAGS:
        return False
    if tag in _NATIVE_INTERACTIVE:
        return True
    if tag == "input":
        return row[F.TYPE] != "hidden"
    if tag in ("a", "area") and row[F.HREF]:
        return True
    if row[F.CONTENTEDITABLE] and not explicit_role(row):
        # isContentEditable holds for every descendant of the editing host, and each one
        # gets the implicit textbox role; only the host is the field.
        parent = row[F.PARENT]
        if parent < 0 or not doc.rows[parent][F.CONTENTEDITABLE]:
            return True
    elif role in WIDGET_ROLES:
        return True
    tabindex = _tabindex(row)
    if tabindex is not None and tabindex >= 0:
        return True
    if row[F.CURSOR] == "pointer":
        # cursor inherits: only the element that introduces it counts, not its descendants.
        parent = row[F.PARENT]
        return parent < 0 or doc.rows[parent][F.CURSOR] != "pointer"
    return False


def _bool_attr(value: str) -> bool | None:
    if value == "true":
        return True
    if value == "false":
        return False
    return None


def _visible(index: int, row: list[Any], doc: DocumentIndex, opacity: list[float]) -> bool:
    return (
        not doc.hidden[index]
        and opacity[index] > 0
        and row[F.WIDTH] > 0
        and row[F.HEIGHT] > 0
    )


def _in_viewport(row: list[Any], viewport: Viewport) -> bool:
    x, y, w, h = row[F.X], row[F.Y], row[F.WIDTH], row[F.HEIGHT]
    return x < viewport.width and y < viewport.height and x + w > 0 and y + h > 0


def _form_owner(row: list[Any], doc: DocumentIndex) -> tuple[str, str, str, str] | None:
    form = row[F.FORM]
    if form < 0:
        return None
    form_row = doc.rows[form]
    return (form_row[F.ID], form_row[F.NAME], form_row[F.FORM_ACTION], form_row[F.FORM_METHOD])


def scan(rows: list[list[Any]], viewport: Viewport, *, include_offscreen: bool = False) -> list[ScannedElement]:
    doc = DocumentIndex(rows)
    opacity = [1.0] * len(rows)
    ignored = [False] * len(rows)
    candidates: list[tuple[int, str]] = []
    for index, row in enumerate(rows):
        parent = row[F.PARENT]
        opacity[index] = (opacity[parent] if parent >= 0 else 1.0) * float(row[F.OPACITY])
        ignored[index] = (parent >= 0 and ignored[parent]) or row[F.PRIVACY] == "ignore"
        if ignored[index]:
            continue
        role = role_of(row)
        if is_interactive(index, row, role, doc):
            candidates.append((index, role))

    # SPEC S1: a clickable wrapper around exactly one real control collapses into it.
    native = {i for i, _ in candidates if rows[i][F.TAG] in ("input", "select", "textarea", "button", "a")}
    wrapped_count: dict[int, int] = {}
    for index in native:
        for ancestor in doc.ancestors(index):
            wrapped_count[ancestor] = wrapped_count.get(ancestor, 0) + 1
    result = []
    for index, role in candidates:
        row = rows[index]
        if index not in native and not row[F.ROLE] and wrapped_count.get(index, 0) == 1 and row[F.TAG] != "label":
            continue
        visible = _visible(index, row, doc, opacity)
        in_viewport = visible and _in_viewport(row, viewport)
        if not visible or (not in_viewport and not include_offscreen):
            continue
        result.append(_describe(index, row, role, doc, visible, in_viewport))
    return result


def _describe(index: int, row: list[Any], role: str, doc: DocumentIndex, visible: bool, in_viewport: bool) -> ScannedElement:
    role = role or "generic"
    label, source = accessible_name(index, role, doc)
    if not label:
        label, source = nearby_text(index, doc), "nearby"
    sensitive = is_sensitive(row, label)
    private = row[F.PRIVACY] == "private"
    tag = row[F.TAG]
    value: str | bool | list[str] | None
    options: tuple[tuple[str, str, bool, bool], ...] = ()
    if tag == "select":
        options = tuple((str(o[0]), str(o[1]), bool(o[2]), bool(o[3])) for o in row[F.OPTIONS] or ())
        chosen = [o[0] for o in options if o[2]]
        value = chosen if row[F.MULTIPLE] else (chosen[0] if chosen else "")
    elif tag in ("input", "textarea") and row[F.TYPE] not in ("checkbox", "radio", "submit", "button", "reset", "image"):
        value = row[F.VALUE]
    elif row[F.CONTENTEDITABLE]:
        value = doc.text_content(index, limit=TEXT_LIMIT)
    else:
        value = None
    if (sensitive or private) and value not in (None, ""):
        value = None  # SPEC P5: withheld until the authorization center releases it.
    checked: bool | str | None = None
    if row[F.CHECKED] >= 0:
        checked = "mixed" if row[F.CHECKED] == 2 else bool(row[F.CHECKED])
    elif row[F.ARIA_CHECKED] in ("true", "false", "mixed"):
        checked = "mixed" if row[F.ARIA_CHECKED] == "mixed" else row[F.ARIA_CHECKED] == "true"
    text = ""
    if tag not in ("input", "select", "textarea") and not (sensitive or private):
        text = doc.text_content(index, limit=TEXT_LIMIT)
    input_type = row[F.TYPE] if tag in ("input", "button") else ""
    return ScannedElement(
        index=index,
        tag=tag,
        kind=kind_of(role, row),
        role=role,
        type=input_type or ("text" if tag == "input" else ""),
        label=label,
        label_source=source,
        text=text if text != label else "",
        value=value,
        options=options,
        visible=visible,
        in_viewport=in_viewport,
        disabled=bool(row[F.DISABLED]) or row[F.ARIA_DISABLED] == "true",
        readonly=bool(row[F.READONLY]) or row[F.ARIA_READONLY] == "true",
        required=bool(row[F.REQUIRED]) or row[F.ARIA_REQUIRED] == "true",
        rect=(round(row[F.X], 1), round(row[F.Y], 1), round(row[F.WIDTH], 1), round(row[F.HEIGHT], 1)),
        checked=checked,
        selected=_bool_attr(row[F.ARIA_SELECTED]),
        expanded=_bool_attr(row[F.ARIA_EXPANDED]),
        placeholder=row[F.PLACEHOLDER],
        href=row[F.HREF],
        sensitive=sensitive,
        private=private,
        form=_form_owner(row, doc),
        key=key_of(row, role),
    )


def key_of(row: list[Any], role: str) -> tuple[str, ...]:
    """Key attributes whose change makes a ref stale (SPEC R2): role, type and the label
    sources. Computed from one row, so an action can re-check it without a full scan."""
    return (
        row[F.TAG], role or "generic", row[F.TYPE], row[F.ID], row[F.NAME], row[F.ARIA_LABEL],
        row[F.ARIA_LABELLEDBY], row[F.PLACEHOLDER], row[F.TITLE],
    )


def is_fillable(row: list[Any]) -> bool:
    tag = row[F.TAG]
    if tag == "textarea" or row[F.CONTENTEDITABLE]:
        return True
    if tag == "input":
        return row[F.TYPE] not in _NON_FILLABLE_INPUTS and row[F.TYPE] != "hidden"
    return tag == "select"
