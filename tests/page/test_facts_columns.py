"""The column transport of a walk (``collectDocumentColumns`` / ``facts.rows_from_columns``)
rebuilds exactly the rows the JSON transport gives. The encoder below mirrors ``columnsOf``
in loader_js/primitives/collect.js; the browser tests run the real one."""

from __future__ import annotations

import array
import json
from typing import Any

from mao_page.dom import facts as F
from mao_page.dom.index import DocumentIndex

from .page_rows import PageRows


def _encode(rows: list[list[Any]], scopes: list[Any], frames: list[Any]) -> tuple[Any, ...]:
    n = len(rows)
    ints = array.array(
        "i", [int(rows[i][c]) for c in F.INT_COLUMNS + F.BOOL_COLUMNS for i in range(n)]
    )
    floats = array.array("d", [float(rows[i][c]) for c in F.FLOAT_COLUMNS for i in range(n)])
    table: dict[str, int] = {"": 0}  # the empty string is entry 0, as in collect.js
    index = array.array(
        "i", [table.setdefault(rows[i][c], len(table)) for c in F.STRING_COLUMNS for i in range(n)]
    )
    pairs = {
        column: [x for i in range(n) if rows[i][column] != default for x in (i, rows[i][column])]
        for column, default in ((F.ALT, None), (F.OPTIONS, 0), (F.PSEUDO, 0))
    }
    # Like collect.js: after the int columns, each row's subtree end (the last row of its
    # subtree), then per string column the count of its pair numbers (-1: crosses dense only)
    # and the [row, id, ...] pairs of its non-empty cells when those are few.
    end = list(range(n))
    for i in range(n - 1, 0, -1):
        parent = rows[i][F.PARENT]
        if parent >= 0 and end[i] > end[parent]:
            end[parent] = end[i]
    ints.extend(end)
    for k in range(len(F.STRING_COLUMNS)):
        cells = index[k * n:(k + 1) * n]
        filled = [x for i in range(n) if cells[i] != table[""] for x in (i, cells[i])]
        if len(filled) < n / 2:
            ints.append(len(filled))
            ints.extend(filled)
        else:
            ints.append(-1)
    # The text parts: their strings join the table; the [position, id, ...] pairs of all rows,
    # each row's first pair + 1 (0: none), the [first pair, pair count, ...] of multi-part rows.
    text_pairs: list[int] = []
    first = [0] * n
    spans: list[int] = []
    for i, row in enumerate(rows):
        parts = row[F.TEXT_PARTS]
        if parts:
            first[i] = len(text_pairs) // 2 + 1
            if len(parts) > 2:
                spans += [len(text_pairs) // 2, len(parts) // 2]
            for at in range(0, len(parts), 2):
                text_pairs += [parts[at], table.setdefault(parts[at + 1], len(table))]
    ints.append(len(text_pairs))
    ints.extend(text_pairs)
    ints.extend(first)
    ints.append(len(spans))
    ints.extend(spans)
    extra = json.loads(
        json.dumps([scopes, frames, pairs[F.ALT], pairs[F.OPTIONS], pairs[F.PSEUDO], []])
    )
    return (
        n,
        ints.tobytes(),
        floats.tobytes(),
        F.STRING_SEPARATOR.join(table),
        len(table),
        index.tobytes(),
        extra,
    )


def _decoded(rows: list[list[Any]]) -> list[list[Any]]:
    """The rows as the column transport gives them: text parts as tuples (read-only, like the
    rows; most are made in C from (position, text) pairs)."""
    return [
        [tuple(value) if column == F.TEXT_PARTS else value for column, value in enumerate(row)]
        for row in rows
    ]


def _page() -> PageRows:
    page = PageRows()
    form = page.add("form", id="f", form_action="https://x/a", form_method="post")
    page.add("input", form, type="password", name="pw", required=True, alt=None, x=3.5, form=form)
    page.add(
        "select", form, options=[["a", "A", True, False], ["b", "B", False, True]], multiple=True
    )
    page.add(
        "span",
        form,
        own_text="名前 ",
        pseudo=["'*'", "inline", "", "inline"],
        checked=2,
        inert=True,
    )
    page.add(
        "div",
        opacity=0.25,
        contenteditable=True,
        aria_label="x\u00a0y",
        text_parts=[0, "a", 1, "b"],
    )
    return page


def test_rows_from_columns_matches_json_rows() -> None:
    page = _page()
    scopes, frames = [["document", 0, -1]], [[-1, "http://x/", 0, 0, 1280, 800]]
    rows, got_scopes, got_frames = F.rows_from_columns(*_encode(page.rows, scopes, frames))
    assert [list(row) for row in rows] == _decoded(page.rows)
    assert [[type(v) for v in row] for row in rows] == [
        [type(v) for v in row] for row in _decoded(page.rows)
    ]
    assert (got_scopes, got_frames) == (scopes, frames)


def test_decoded_rows_keep_the_columns_they_came_from() -> None:
    # Passes over every row read the columns (facts.columns_of); they must be the rows'.
    page = _page()
    rows, _, _ = F.rows_from_columns(*_encode(page.rows, [], []))
    assert [list(column) for column in F.columns_of(rows)] == [
        list(column) for column in zip(*_decoded(page.rows), strict=True)
    ]


def test_decoded_rows_bring_the_subtree_ends() -> None:
    # The page sends each row's subtree end; DocumentIndex takes it instead of computing it.
    page = _page()
    rows, _, _ = F.rows_from_columns(*_encode(page.rows, [], []))
    assert rows.end == DocumentIndex(page.rows).end
    assert rows.end != list(range(len(page.rows)))  # the page has subtrees
    assert DocumentIndex(rows).end is rows.end


def test_rows_from_columns_single_row_and_empty() -> None:
    one = _page().rows[:1]
    rows, _, _ = F.rows_from_columns(*_encode(one, [], []))
    assert [list(row) for row in rows] == _decoded(one)
    assert list(F.rows_from_columns(*_encode([], [], []))[0]) == []


def test_separator_inside_a_string_asks_for_the_json_rows() -> None:
    page = _page()
    page.add("div", title="a\0b")
    assert F.rows_from_columns(*_encode(page.rows, [], [])) is None
