"""The read tools' pure logic on CPython (SPEC T1, T2): the tree of a read.js walk, its
Markdown, paging, and what a find hit points at. The trees here are written by hand in
read.js's format (``pagetext.node``); tests/browser/test_read_tools.py checks the same on
real pages."""

from __future__ import annotations

from typing import Any

import pytest
from mao_page.read import extract, find, pagetext
from mao_page.read.pagetext import ARIA_HIDDEN, EDITABLE_ROOT, ORDER, PRIVATE, TextNode


def el(tag: str, *children: Any, display: str = "block", **kwargs: Any) -> TextNode:
    return pagetext.node(tag, *children, display=display, **kwargs)


def inline(tag: str, *children: Any, **kwargs: Any) -> TextNode:
    return el(tag, *children, display="inline", **kwargs)


def markdown(tree: TextNode, sensitive: frozenset[int] = frozenset(), *, fold: bool = True) -> str:
    # Lists and row groups folded as read.js folds them for an extract.
    if fold:
        tree = pagetext.fold_blocks(tree)
    return extract.render_markdown(pagetext.prune(pagetext.number(tree), sensitive))


def searched(tree: TextNode) -> find.SearchText:
    return find.search_text(pagetext.number(tree), 1000)


def cell(text: str, span: str = "", tag: str = "td") -> TextNode:
    return el(tag, text, display="table-cell", extra=span)


def row(*cells: TextNode) -> TextNode:
    return el("tr", *cells, display="table-row")


def test_headings_take_their_level_from_the_tag_or_aria_level():
    page = el(
        "body",
        el("h2", "Two"),
        el("div", "Four", role="heading", extra="4"),
        el("div", "Default", role="heading"),
    )
    assert markdown(page) == "## Two\n\n#### Four\n\n## Default"


def test_inline_content_joins_into_one_paragraph_with_collapsed_white_space():
    page = el(
        "body",
        el(
            "p", "  Total:\n ", inline("b", "$5"), " ", inline("br"), " due ", inline("code", "now")
        ),
    )
    assert markdown(page) == "Total: $5\ndue `now`"


def test_a_break_between_words_with_no_space_is_a_line_break():
    assert markdown(el("body", el("p", "one", inline("br"), "two"))) == "one\ntwo"


def test_link_text_brackets_are_escaped_and_script_links_become_text():
    page = el(
        "body",
        el(
            "p",
            inline("a", "[1]", extra="https://e.x/a b"),
            " ",
            inline("a", "Run", extra="javascript:go()"),
        ),
    )
    assert markdown(page) == "[\\[1\\]](https://e.x/a%20b) Run"


def test_a_link_wrapping_blocks_stays_one_link():
    page = el("body", inline("a", el("div", "Card title"), el("div", "Card text"), extra="https://e.x/c"))
    assert markdown(page) == "[Card title Card text](https://e.x/c)"


@pytest.mark.parametrize("role", ["", "link"])
def test_a_link_reads_the_same_folded_into_text_or_kept_as_a_node(role):
    # read.js folds a text-only link into its parent's text; one with a role keeps its node.
    item = el(
        "li",
        inline("a", " Item\n 3 ", extra="https://e.x/i(3)", role=role),
        " note",
        display="list-item",
    )
    assert isinstance(item[pagetext.CHILDREN][0], str) == (not role)
    page = el(
        "body",
        el("ul", item),
        el("p", "Go ", inline("a", " ", extra="https://e.x/empty", role=role), "on."),
    )
    assert markdown(page) == "- [Item 3](https://e.x/i%283%29) note\n\nGo on."


def test_ordered_lists_number_their_items_and_indent_nested_content():
    page = el(
        "body",
        el(
            "ol",
            el("li", "One", el("ul", el("li", "a", display="list-item")), display="list-item"),
            el("li", "Two", display="list-item"),
        ),
    )
    assert markdown(page) == "1. One\n   - a\n2. Two"


def test_rowspan_past_a_short_row_leaves_its_columns_empty():
    table = el("table", row(cell("A", tag="th"), cell("B", tag="th"), cell("C", tag="th")),
               row(cell("1"), cell("2"), cell("tall", "1,3")),
               row(cell("3")),
               row(cell("4"), cell("5")),
               row(cell("6"), cell("7"), cell("8")), display="table")
    assert markdown(el("body", table)) == (
        "| A | B | C |\n|---|---|---|\n| 1 | 2 | tall |\n| 3 |  |  |\n| 4 | 5 |  |\n| 6 | 7 | 8 |"
    )


def test_folded_rows_keep_header_cells_escaped_pipes_and_links():
    # Rows of text-only cells arrive as one string each (pagetext.CELL); a row with a span keeps
    # its nodes, white space between its cells included.
    table = el(
        "table",
        row(cell("Name", tag="th"), cell("Total", tag="th")),
        row(
            cell(" Acme | Co "),
            el("td", inline("a", "Open", extra="https://e.x/o"), display="table-cell"),
        ),
        row(" ", cell("Both", "2,1"), " "),
        display="table",
    )
    folded = table[pagetext.CHILDREN][0][pagetext.CHILDREN]
    assert len(folded) == 1 and folded[0].startswith(pagetext.HEADER_CELL)
    assert markdown(el("body", table)) == (
        "| Name | Total |\n|---|---|\n| Acme \\| Co | [Open](https://e.x/o) |\n| Both |  |"
    )


def li(*children: Any, **kwargs: Any) -> TextNode:
    return el("li", *children, display="list-item", **kwargs)


def group(tag: str, *rows: Any) -> TextNode:
    return el(tag, *rows, display="table-row-group")


def folding_page() -> TextNode:
    link = inline("a", " Item\n 1 ", extra="https://e.x/i")
    inner = el("table", group("tbody", row(cell("in"))), display="table")
    return el(
        "body",
        el("ul", li(link, " note"), " ", li(" "), li("Two")),
        el("ol", li("First"), li("Second")),
        el(
            "table",
            group("thead", row(cell("Name", tag="th"), cell("Total", tag="th"))),
            group("tbody", row(cell("Acme | Co"), cell(" 5 ")), " ", row(cell("Globex"), cell(""))),
            display="table",
        ),
        el("h2", "Menu:", el("ul", li("a"), li("b"))),
        el("table", row(cell("x"), el("td", inner, display="table-cell")), display="table"),
        el("ul", li("kept", role="listitem"), li("apart")),
    )


def test_folded_lists_and_row_groups_read_as_their_items_and_rows():
    # SPEC T1: read.js folds text-only lists and row groups for an extract; the Markdown is the
    # same as from their nodes.
    folded = pagetext.fold_blocks(folding_page())
    ul, ol, table, *_, kept = (node[pagetext.CHILDREN] for node in folded[pagetext.CHILDREN])
    assert ul[0].startswith(pagetext.ITEM) and ol[0].count(pagetext.ITEM) == 2
    assert all(rows[pagetext.CHILDREN][0].startswith(pagetext.ROW) for rows in table)
    assert all(isinstance(item, list) for item in kept)  # a role keeps the items' nodes
    expected = (
        "- [Item 1](https://e.x/i) note\n- Two\n\n"
        "1. First\n2. Second\n\n"
        "| Name | Total |\n|---|---|\n| Acme \\| Co | 5 |\n| Globex |  |\n\n"
        "## Menu: a b\n\n"
        "|  |  |\n|---|---|\n| x | in |\n\n"
        "- kept\n- apart"
    )
    assert markdown(folding_page(), fold=False) == expected
    assert markdown(folded) == expected


def test_aria_hidden_private_and_sensitive_editable_subtrees_are_left_out():
    card = el("div", "4111", flags=EDITABLE_ROOT)
    page = pagetext.number(
        el(
            "body",
            el("p", "shown"),
            el("p", "aria", flags=ARIA_HIDDEN),
            el("div", el("p", "owner"), flags=PRIVATE),
            card,
            el("div", "note", flags=EDITABLE_ROOT),
        )
    )
    assert markdown(page, frozenset({card[ORDER]})) == "shown\n\nnote"


def test_chrome_is_dropped_unless_it_belongs_to_an_article_or_it_is_all_there_is():
    page = el("body", el("header", "Logo"), el("div", "Menu", role="navigation"),
              el("article", el("header", "Byline"), el("p", "Story")), el("footer", "Legal"))
    assert markdown(page) == "Byline\n\nStory"
    assert markdown(el("body", el("nav", "Only a menu"))) == "Only a menu"


def test_pre_keeps_its_text_in_a_fence_longer_than_any_inside():
    page = el("body", el("pre", "a ``` b\n  c"))
    assert markdown(page) == "````\na ``` b\n  c\n````"


def test_parts_end_at_block_boundaries_and_add_up_to_the_whole():
    text = "\n\n".join(f"Block {i} " + "x" * (i * 7 % 50) for i in range(200))
    parts, start = [], 0
    while True:
        part = extract.page_part(text, start, 500)
        assert len(part.markdown) <= 500
        parts.append(part.markdown)
        if part.next_from_char is None:
            break
        assert part.markdown.endswith("\n\n")
        start = part.next_from_char
    assert "".join(parts) == text


def test_a_block_longer_than_a_part_is_cut_at_a_space():
    text = "word " * 300
    part = extract.page_part(text, 0, 500)
    assert part.markdown.endswith(" ") and len(part.markdown) <= 500


def test_the_cap_cuts_the_whole_markdown_at_a_block_boundary():
    text = "\n\n".join("p" * 999 for _ in range(300))
    capped, truncated = extract.cap(text)
    assert truncated and len(capped) <= extract.MAX_EXTRACT_CHARS and capped.endswith("p")


def test_search_text_puts_blocks_on_lines_and_cells_side_by_side():
    page = el(
        "body",
        el("p", "Total:", inline("b", " $5")),
        el("table", row(cell("a"), cell("b")), display="table"),
    )
    assert searched(page).text == "Total: $5\na b\n"


def test_search_text_reads_folded_links_as_their_text():
    page = el("body", el("p", "See ", inline("a", "the terms", extra="https://e.x/t"), " first."),
              el("table", row(cell("x"), cell("y")), display="table"))
    assert searched(page).text == "See the terms first.\nx y\n"


def test_a_literal_query_matches_across_white_space_and_case():
    assert find.literal_pattern("total  DUE").search("the Total\ndue is") is not None


@pytest.mark.parametrize(
    ("query_in", "expected"), [("cell text", 0), ("Inside", 1), ("far away", None)]
)
def test_a_hit_points_at_the_nearest_listed_element(query_in, expected):
    page = el(
        "body",
        el(
            "table",
            row(
                cell("cell text"),
                el("td", inline("button", "View", listed=0), display="table-cell"),
            ),
            display="table",
        ),
        el("p", inline("button", "Inside button", listed=1)),
        el("p", "far away"),
    )
    text = searched(page)
    assert find.nearest_listed(text, text.owner_at(text.text.index(query_in))) == expected


def test_javascript_offsets_convert_past_characters_outside_the_bmp():
    text = "a😀b😀c"
    astral = find.utf16_to_index(text)
    # JavaScript sees "c" at 6 (each emoji is two code units).
    assert text[find.from_utf16(6, astral)] == "c"
    assert find.utf16_to_index("plain") is None
