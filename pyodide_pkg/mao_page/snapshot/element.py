"""One element of a snapshot, defined once (SPEC S2, S7, R2).

``Element`` is what the scan finds for each element an agent may see: the fields of
``protocol.PageElement`` (the answer's element, same names, without its id) and what only
the page side keeps (the row, the tag, where the label came from, privacy, the ref's key, the
real input behind a custom checkbox). Everything else is derived from it:

- the answer's JSON form: ``WIRE_FIELDS`` (which fields go on the wire, in order, and when each
  is left out) and ``wire_elements``; tests/page/test_inspector.py holds it equal to what
  ``PageElement.to_wire`` writes;
- the answer's elements as Python reads them (``SnapshotElement``: PageElement's values);
- the text form's columns (``SnapshotElements.column``, by field name: ``render.ElementColumns``);
- a ref's key, whose change makes the ref stale (``key_of``, ``keys_of``; the rule is ``refs``);
- what a ref stands for (``store.ElementEntry``: this element itself, with the ref's id and
  handles) and a live element named without a snapshot (``inspector.ElementDescription``: the
  fields of this model that name it).
"""

from __future__ import annotations

from collections import deque, namedtuple
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import compress, repeat
from operator import is_not, setitem
from typing import Any, NamedTuple, overload

from pydantic.alias_generators import to_camel

from ..dom import facts as F


class Element(NamedTuple):
    """An element the agent may see. A NamedTuple rather than a frozen dataclass: one is made
    per listed element, and a frozen dataclass's ``__init__`` (a ``__setattr__`` per field)
    cost a third more in Pyodide."""

    index: int  # row of the element acted on (a custom checkbox: its label)
    tag: str
    kind: str
    role: str
    type: str
    label: str
    label_source: str
    text: str
    value: str | bool | list[str] | None
    options: tuple[tuple[str, str, bool, bool], ...]  # (value, label, selected, disabled)
    visible: bool
    in_viewport: bool
    disabled: bool
    readonly: bool
    required: bool
    rect: tuple[float, float, float, float]  # x, y, width, height
    checked: bool | str | None
    selected: bool | None
    expanded: bool | None
    placeholder: str
    href: str
    sensitive: bool
    private: bool
    form: tuple[str, str, str, str] | None  # formId, formName, action, method
    key: tuple[str, ...]  # key_of its row (of the real input for a custom checkbox)
    frame: str = "main"
    invalid: bool = False
    pressed: bool | str | None = None
    description: str = ""
    opaque: str = ""  # "cross_origin_frame" / "closed_shadow_root": a placeholder
    control: int | None = None  # the real (hidden) input behind a label, for its state
    # Where the label came from when it is not the accessible name (scanner.NAME_FROM), else "".
    name_from: str = ""
    new: bool = False  # not painted at the previous snapshot (SPEC S9)


# -- the ref's key ---------------------------------------------------------------------------

# The key attributes after the tag and the role: a change in any of them makes a ref stale
# (the role, the type and every source of a name the element carries itself).
KEY_COLUMNS = (F.TYPE, F.ID, F.NAME, F.ARIA_LABEL, F.ARIA_LABELLEDBY, F.PLACEHOLDER, F.TITLE)


def key_of(row: Sequence[Any], role: str) -> tuple[str, ...]:
    """The key of one fact row (``role``: its role, "" for none)."""
    return (row[F.TAG], role or "generic", *(row[column] for column in KEY_COLUMNS))


def keys_of(
    tags: Iterable[str],
    roles: Iterable[str],
    pick: Callable[[Sequence[Any]], Iterable[Any]],
    columns: Sequence[Sequence[Any]],
) -> Iterator[tuple[str, ...]]:
    """``key_of`` of many rows at once, read a column at a time: ``pick(column)`` gives the
    cells of those rows, ``roles`` their roles with "generic" for none (a scan has both)."""
    return zip(tags, roles, *(pick(columns[column]) for column in KEY_COLUMNS), strict=True)


# -- the wire form ---------------------------------------------------------------------------

ALWAYS = "always"
NONE = "none"  # left out when None
EMPTY = "empty"  # left out when empty or false ("", False); PageElement holds None then

# protocol.PageElement's fields after elementId, in its order (the JSON keys' order).
WIRE_FIELDS: tuple[tuple[str, str], ...] = (
    ("kind", ALWAYS),
    ("role", ALWAYS),
    ("type", ALWAYS),
    ("label", ALWAYS),
    ("text", ALWAYS),
    ("value", NONE),
    ("options", ALWAYS),
    ("visible", ALWAYS),
    ("in_viewport", ALWAYS),
    ("disabled", ALWAYS),
    ("readonly", ALWAYS),
    ("required", ALWAYS),
    ("rect", ALWAYS),
    ("checked", NONE),
    ("selected", NONE),
    ("expanded", NONE),
    ("placeholder", EMPTY),
    ("href", EMPTY),
    ("sensitive", ALWAYS),
    ("form", NONE),
    ("frame", ALWAYS),
    ("invalid", ALWAYS),
    ("pressed", NONE),
    ("description", ALWAYS),
    ("opaque", EMPTY),
    ("name_from", EMPTY),
    ("new", EMPTY),
)
WIRE_NAMES = tuple(name for name, _ in WIRE_FIELDS)


def _wire_value(value: Any) -> Any:
    return list(value) if isinstance(value, list) else value


def _wire_options(options: Sequence[tuple[str, str, bool, bool]]) -> list[dict[str, Any]]:
    return (
        [{"value": v, "label": t, "selected": s, "disabled": d} for v, t, s, d in options]
        if options
        else []
    )


def _wire_rect(rect: tuple[float, float, float, float]) -> dict[str, float]:
    x, y, width, height = rect
    return {"x": float(x), "y": float(y), "width": float(width), "height": float(height)}


def _wire_form(form: tuple[str, str, str, str]) -> dict[str, str]:
    form_id, form_name, action, method = form
    return {"formId": form_id, "formName": form_name, "action": action, "method": method}


# The fields whose wire form is not the value itself (the nested models of PageElement).
_WIRE_FORMS: dict[str, Callable[[Any], Any]] = {
    "value": _wire_value,
    "options": _wire_options,
    "rect": _wire_rect,
    "form": _wire_form,
}
_WIRE = tuple((name, to_camel(name), rule, _WIRE_FORMS.get(name)) for name, rule in WIRE_FIELDS)


def wire_elements(
    element_ids: Sequence[str], column: Callable[[str], Sequence[Any]]
) -> list[dict[str, Any]]:
    """What ``PageElement.to_wire`` writes for each element: ``column(name)`` gives a field's
    values in element order. Written a field at a time, in wire order (so every element's
    keys come out in PageElement's order): a field always present is set in C, an optional
    one only for the elements that have it (most have few)."""
    out: list[dict[str, Any]] = [{"elementId": element_id} for element_id in element_ids]
    positions = range(len(out))
    for name, key, rule, form in _WIRE:
        values = column(name)
        if rule == ALWAYS:
            deque(map(setitem, out, repeat(key), map(form, values) if form else values), 0)
            continue
        present = (
            compress(positions, values)
            if rule == EMPTY
            else compress(positions, map(is_not, values, repeat(None)))
        )
        for position in present:
            out[position][key] = form(values[position]) if form else values[position]
    return out


# -- the answer's elements in Python ---------------------------------------------------------


class SnapshotOption(NamedTuple):
    value: str
    label: str
    selected: bool
    disabled: bool


class SnapshotElement(namedtuple("SnapshotElement", ("element_id", *WIRE_NAMES))):
    """One element of an answer with ``protocol.PageElement``'s fields and values (an empty
    optional field is None, options are ``SnapshotOption``s), made without a pydantic model:
    validating one per element in Pyodide cost more than scanning it."""

    __slots__ = ()

    def wire(self) -> dict[str, Any]:
        return wire_elements([self.element_id], lambda name: (getattr(self, name),))[0]


_POSITION = {name: position for position, name in enumerate(Element._fields)}
_EMPTY_AS_NONE = frozenset(name for name, rule in WIRE_FIELDS if rule == EMPTY)


def _answer_value(name: str, value: Any) -> Any:
    if name == "options":
        return tuple(SnapshotOption(*option) for option in value)
    return (value or None) if name in _EMPTY_AS_NONE else value


class SnapshotElements(Sequence[SnapshotElement]):
    """The elements of one answer, kept as the scan's ``Element``s and their ids: the wire and
    text forms are written from their columns, and ``SnapshotElement``s are made only when
    read (page_observe's baseline, tests): a whole page lists thousands of elements
    (docs/performance.md)."""

    __slots__ = ("element_ids", "_items", "_columns", "_made")

    def __init__(self, element_ids: list[str], items: list[Element]) -> None:
        self.element_ids = element_ids
        self._items = items
        self._columns: list[tuple[Any, ...]] | None = None  # the items' fields, a tuple each
        self._made: list[SnapshotElement] | None = None

    def __len__(self) -> int:
        return len(self.element_ids)

    @overload
    def __getitem__(self, index: int) -> SnapshotElement: ...
    @overload
    def __getitem__(self, index: slice) -> list[SnapshotElement]: ...
    def __getitem__(self, index: int | slice) -> SnapshotElement | list[SnapshotElement]:
        return self._elements()[index]

    def __iter__(self) -> Iterator[SnapshotElement]:
        return iter(self._elements())

    def column(self, name: str) -> tuple[Any, ...]:
        """One field of every element (``Element``'s names), in element order."""
        if self._columns is None:
            # One transposition (C) for the text and the wire form.
            self._columns = (
                list(zip(*self._items, strict=True)) if self._items else [()] * len(Element._fields)
            )
        return self._columns[_POSITION[name]]

    def wire(self) -> list[dict[str, Any]]:
        return wire_elements(self.element_ids, self.column)

    def _elements(self) -> list[SnapshotElement]:
        if self._made is None:
            columns = [
                tuple(map(_answer_value, repeat(name), self.column(name))) for name in WIRE_NAMES
            ]
            self._made = [
                SnapshotElement(*fields) for fields in zip(self.element_ids, *columns, strict=True)
            ]
        return self._made
