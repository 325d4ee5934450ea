"""Column layout of the fact rows produced by ``collectDocument`` / ``rowOf``.

``factsOf`` in ``loader_js/primitives/collect.js`` writes each column by these names
(``FACT.TAG``, ...): the asset build generates them from this module (``jstables``). Rows are
flat sequences (not objects) because one flat structure per page crosses the Pyodide boundary
in one conversion, where reading a JS object per element costs a proxy call per field; a
whole walk crosses as columns (``rows_from_columns``), which the scanner reads as they are.
Computed-style columns hold computed values (inherited ones appear on descendants too).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import chain
from operator import itemgetter
from typing import Any

TAG = 0
PARENT = 1  # row index of the parent in the composed tree (an iframe row for a frame's <html>)
ID = 2
ROLE = 3
TYPE = 4
ARIA_LABEL = 5
ARIA_LABELLEDBY = 6
TITLE = 7
PLACEHOLDER = 8
NAME = 9
HREF = 10
TABINDEX = 11
CONTENTEDITABLE = 12
CURSOR = 13
DISPLAY = 14
VISIBILITY = 15
OPACITY = 16
X = 17  # rect in the viewport of the element's own frame
Y = 18
WIDTH = 19
HEIGHT = 20
DISABLED = 21
READONLY = 22
REQUIRED = 23
CHECKED = 24  # -1 not a checkbox/radio, 0 unchecked, 1 checked, 2 indeterminate
VALUE = 25
OWN_TEXT = 26  # direct text children, whitespace squashed (see TEXT_PARTS for their order)
ARIA_CHECKED = 27
ARIA_EXPANDED = 28
ARIA_SELECTED = 29
ARIA_DISABLED = 30
ARIA_HIDDEN = 31
AUTOCOMPLETE = 32
LABEL_FOR = 33
ALT = 34  # None when the attribute is absent
FORM = 35  # row index of the owning form, -1 when none
OPTIONS = 36  # [[value, label, selected, disabled], ...] for <select>, else 0
PRIVACY = 37  # "", "private" (value withheld) or "ignore" (subtree excluded)
POINTER_EVENTS = 38
FORM_ACTION = 39
FORM_METHOD = 40
MULTIPLE = 41
ARIA_REQUIRED = 42
ARIA_READONLY = 43
IS_PASSWORD = 44
VALUE_ATTR = 45
SCOPE = 46  # tree scope (document or shadow root): IDREFs and label[for] resolve within it
SHADOW = 47  # "open", "closed" (a detected closed shadow host) or ""
FRAME = 48  # for <iframe>/<frame>: "same" (walked) or "cross" (placeholder), else ""
CONTENT_VISIBILITY = 49
OVERFLOW = 50  # computed `overflow` shorthand: "visible", "hidden", "auto scroll", ...
POSITION = 51
ARIA_INVALID = 52
USER_INVALID = 53  # 1 when a form control matches :user-invalid
ARIA_PRESSED = 54
ARIA_DESCRIBEDBY = 55
OPEN = 56  # <details open> / <dialog open>
INERT = 57
PSEUDO = 58  # 0 or [::before content, its display, ::after content, its display]
ARIA_LEVEL = 59
ARIA_VALUE = 60  # aria-valuetext, else aria-valuenow
TEXT_PARTS = 61  # [position, text, ...]: own text nodes, each after `position` element children
LIST = 62  # 1: <input list=...>, 2: <select size > 1>, else 0
ARIA_OWNS = 63
TEXT_TRANSFORM = 64
FRESH = (
    65  # not painted at the previous snapshot: new to the agent (SPEC S9); False before the first
)
CLASS_STATE = 66  # "switch", "checked", "checked switch" from the class names of a roleless or
# aria-checked-less checkable control (classState in collect.js), else ""

COLUMNS = 67

# Tables returned next to the rows by collectDocument.
SCOPE_KIND, SCOPE_FRAME, SCOPE_HOST = 0, 1, 2
FRAME_OWNER, FRAME_URL, FRAME_X, FRAME_Y, FRAME_WIDTH, FRAME_HEIGHT = 0, 1, 2, 3, 4, 5

# Column groups of the column transport (``collectDocumentColumns``; generated into the page).
INT_COLUMNS = (PARENT, CHECKED, FORM, IS_PASSWORD, SCOPE, USER_INVALID, LIST)
BOOL_COLUMNS = (
    CONTENTEDITABLE,
    DISABLED,
    READONLY,
    REQUIRED,
    MULTIPLE,
    OPEN,
    INERT,
    FRESH,
)  # cross as ints
FLOAT_COLUMNS = (OPACITY, X, Y, WIDTH, HEIGHT)
STRING_COLUMNS = (
    TAG,
    ID,
    ROLE,
    TYPE,
    ARIA_LABEL,
    ARIA_LABELLEDBY,
    TITLE,
    PLACEHOLDER,
    NAME,
    HREF,
    TABINDEX,
    CURSOR,
    DISPLAY,
    VISIBILITY,
    VALUE,
    OWN_TEXT,
    ARIA_CHECKED,
    ARIA_EXPANDED,
    ARIA_SELECTED,
    ARIA_DISABLED,
    ARIA_HIDDEN,
    AUTOCOMPLETE,
    LABEL_FOR,
    PRIVACY,
    POINTER_EVENTS,
    FORM_ACTION,
    FORM_METHOD,
    ARIA_REQUIRED,
    ARIA_READONLY,
    VALUE_ATTR,
    SHADOW,
    FRAME,
    CONTENT_VISIBILITY,
    OVERFLOW,
    POSITION,
    ARIA_INVALID,
    ARIA_PRESSED,
    ARIA_DESCRIBEDBY,
    ARIA_LEVEL,
    ARIA_VALUE,
    ARIA_OWNS,
    TEXT_TRANSFORM,
    CLASS_STATE,
)
STRING_SEPARATOR = "\0"


class FactRows(dict):
    """The rows of a walk, kept as the columns they were decoded from (``columns[TAG]``: every
    row's tag), with ``rows[i]`` (a tuple) built on first access. A pass reading one fact of
    every row takes its column at C speed (``map``, ``compress``, ``index``); a whole-page scan
    wants whole rows for a few of them only (its listed elements, their name sources), so
    transposing every column into rows up front would be wasted work on most rows.

    A dict rather than a list: once built, ``rows[i]`` is a lookup in C (``__missing__`` runs
    only for a row not built yet), where an overridden ``__getitem__`` would cost a Python call
    on every access. It reads as a sequence: ``len`` is the row count and iterating yields
    every row in order. Read-only, like the rows."""

    __slots__ = ("columns", "count", "end", "full_rows")

    def __init__(
        self, columns: Sequence[Sequence[Any]], count: int, end: list[int] | None = None,
        full_rows: dict[int, int] | None = None,
    ) -> None:
        super().__init__()
        self.columns = columns
        self.count = count
        # end[i]: the last row of i's subtree (rows are in preorder), when the walk sent them.
        self.end = end
        # The rows whose subtree a viewport-limited walk kept only in part: row -> the row
        # count of the whole subtree (for every other row: its rows in this walk).
        self.full_rows = full_rows or {}

    def __missing__(self, index: int) -> tuple[Any, ...]:
        if not -self.count <= index < self.count:
            raise IndexError(f"row {index} of {self.count}")
        row = self[index] = tuple([column[index] for column in self.columns])
        return row

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[tuple[Any, ...]]:  # type: ignore[override]
        return zip(*self.columns, strict=True) if self.count else iter(())

    def __bool__(self) -> bool:
        return self.count > 0


def rows_with(cells: Sequence[Any], value: Any) -> list[int]:
    """Indexes of the cells equal to ``value``, ascending. ``index`` finds each in C, by
    identity first (a column repeats one object per distinct string), where a ``map`` over a
    comparison method would make a Python-level call per cell."""
    found: list[int] = []
    try:
        at = cells.index(value)
        while True:
            found.append(at)
            at = cells.index(value, at + 1)
    except ValueError:  # no further cell holds the value
        return found


class TagRows:
    """``rows_with(tags, tag)`` for the tags asked, remembered: a scan asks for a few tags
    (implicit roles, interactive candidates), some of them twice, and a tag absent from the
    page costs a set lookup, not a pass over the column. Callers must not change the lists."""

    __slots__ = ("_tags", "_present", "_rows")

    def __init__(self, tags: Sequence[str]) -> None:
        self._tags = tags
        self._present = set(tags)
        self._rows: dict[str, list[int]] = {}

    def __call__(self, tag: str) -> list[int]:
        rows = self._rows.get(tag)
        if rows is None:
            rows = self._rows[tag] = rows_with(self._tags, tag) if tag in self._present else []
        return rows


def rows_without(cells: Sequence[Any], value: Any) -> list[int]:
    """Indexes of the cells other than ``value``, ascending (a column of a few distinct values)."""
    return sorted(
        chain.from_iterable(rows_with(cells, other) for other in set(cells) if other != value)
    )


def columns_of(rows: list[Any]) -> Sequence[Sequence[Any]]:
    """The columns of ``rows``: kept from the decode, else transposed (rows built by hand,
    the JSON transport)."""
    columns = rows.columns if isinstance(rows, FactRows) else None
    if columns is None:
        columns = list(zip(*rows, strict=True)) if rows else [()] * COLUMNS
    return columns


def _filled(count: int, default: Any, rows: Sequence[int], values: Iterable[Any]) -> list[Any]:
    """A column of ``count`` cells, ``default`` but in ``rows``, which hold ``values`` (the
    flat [row, value, ...] pairs the walk sends for sparse columns, split in two)."""
    column = [default] * count
    for row, value in zip(rows, values, strict=True):
        column[row] = value
    return column


def rows_from_columns(
    count: int,
    ints: bytes,
    floats: bytes,
    strings: str,
    string_count: int,
    string_index: bytes,
    extra: list[Any],
) -> tuple[FactRows, list[list[Any]], list[list[Any]]] | None:
    """Rows (tuples, read-only) from the column transport; None when a string held the
    separator (the caller falls back to JSON rows). ``strings`` holds the distinct string
    values, ``string_index`` (int32) the string columns as indexes into them. ``ints`` (int32)
    holds the int and bool columns, then each row's subtree end (``FactRows.end``), then per
    string column the length of its pairs (-1: none) and the flat [row, string id, ...] pairs
    of its non-empty cells, sent when those are few, then the text parts (``_text_parts``).
    ``extra`` is [scopes, frames, alt pairs, options pairs, pseudo pairs, partial pairs]; the
    pairs are flat [row, value, ...] lists of the rows whose value differs from the default
    (alt None, options 0, pseudo 0; partial: ``FactRows.full_rows``)."""
    scopes, frames, alt_pairs, option_pairs, pseudo_pairs, partial_pairs = extra
    table = strings.split(STRING_SEPARATOR) if string_count else []
    if len(table) != string_count:
        return None
    columns: list[Any] = [None] * COLUMNS
    # Most columns of a page are one value throughout (no aria-* at all, nothing disabled):
    # such a column is found by one memcmp against zeros and becomes a repeated tuple, which
    # skips converting and looking up its cells one by one.
    int_zeros = bytes(4 * count)
    int_values = memoryview(ints).cast("i")
    for k, column in enumerate(INT_COLUMNS + BOOL_COLUMNS):
        is_bool = k >= len(INT_COLUMNS)
        if ints[4 * k * count:4 * (k + 1) * count] == int_zeros:
            columns[column] = (False if is_bool else 0,) * count
        else:
            values = int_values[k * count:(k + 1) * count]
            columns[column] = list(map(bool, values)) if is_bool else values.tolist()
    at = len(INT_COLUMNS + BOOL_COLUMNS) * count
    end = int_values[at:at + count].tolist()
    at += count
    # Rects and opacity stay in their buffer: a memoryview slice reads like a list of floats
    # (by index, min, map) and costs no copy; most rows' rects are never read.
    float_values = memoryview(floats).cast("d")
    for k, column in enumerate(FLOAT_COLUMNS):
        columns[column] = float_values[k * count:(k + 1) * count]
    indexes = memoryview(string_index).cast("i")
    for k, column in enumerate(STRING_COLUMNS):
        size = int_values[at]
        at += 1
        if size >= 0:
            # A few non-empty cells: those are filled, not every row looked up.
            pairs = int_values[at:at + size]
            at += size
            columns[column] = _filled(count, "", pairs[::2], map(table.__getitem__, pairs[1::2]))
            continue
        cell_bytes = string_index[4 * k * count:4 * (k + 1) * count]
        # One value throughout, not only the empty string (computed styles: every row's
        # visibility "visible", position "static"): one memcmp against the first cell repeated.
        if count and cell_bytes == cell_bytes[:4] * count:
            columns[column] = (table[indexes[k * count]],) * count
            continue
        cells = indexes[k * count:(k + 1) * count]
        # itemgetter looks all of them up in C; with one argument it returns the item itself.
        columns[column] = itemgetter(*cells)(table) if count > 1 else [table[i] for i in cells]
    for column, pairs, default in (
        (ALT, alt_pairs, None),
        (OPTIONS, option_pairs, 0),
        (PSEUDO, pseudo_pairs, 0),
    ):
        columns[column] = _filled(count, default, pairs[::2], pairs[1::2])
    columns[TEXT_PARTS] = _text_parts(count, int_values[at:], table)
    full_rows = dict(zip(partial_pairs[::2], partial_pairs[1::2], strict=True))
    return FactRows(columns, count, end, full_rows), scopes, frames


def rows_from_json(rows: list[list[Any]], partial_pairs: list[int]) -> FactRows:
    """The rows of the JSON transport (a page whose strings hold the separator), with the
    partial subtrees' row counts as ``rows_from_columns`` gives them."""
    full_rows = dict(zip(partial_pairs[::2], partial_pairs[1::2], strict=True))
    return FactRows(
        list(zip(*rows, strict=True)) if rows else [()] * COLUMNS, len(rows), None, full_rows
    )


def _text_parts(count: int, ints: Sequence[int], table: list[str]) -> Sequence[Sequence[Any]]:
    """The text parts column (per row (position, text, ...), a tuple; () when none) from the
    tail of the int transport: the length of the parts' numbers, their flat [position,
    string id, ...] pairs, per row its first pair + 1 (0: no text), the length of the
    multi-part numbers and their [first pair, pair count, ...]. Most rows with text have one
    part: its (position, text) pair is the row's tuple, made with the others in C."""
    size = ints[0]
    pairs = ints[1:1 + size]
    entries: list[Sequence[Any]] = [()]
    entries += zip(pairs[::2], map(table.__getitem__, pairs[1::2]), strict=True)
    first = ints[1 + size:1 + size + count]
    at = 1 + size + count
    spans = ints[at + 1:at + 1 + ints[at]]
    for start, length in zip(spans[::2], spans[1::2], strict=True):
        entries[start + 1] = tuple(chain.from_iterable(entries[start + 1:start + 1 + length]))
    if count > 1:
        return itemgetter(*first)(entries)
    return [entries[i] for i in first]
