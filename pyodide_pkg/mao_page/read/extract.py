"""``page_extract``: the rendered page (or one element's subtree) as clean Markdown (SPEC T1).

Headings keep their level, lists their nesting, tables become pipe tables (a cell spanning
columns or rows leaves the cells it covers empty), links ``[text](absolute url)``, images
their alt text, ``<pre>`` a fenced block. Page chrome is left out: landmarks first (roles
navigation, banner, contentinfo, complementary, search), then the elements that make them
without a role (``nav``, ``aside``, and ``header`` / ``footer`` that belong to the page rather
than to an article or section, as HTML-AAM maps them). A page that is all chrome keeps it.

The whole Markdown is at most ``MAX_EXTRACT_CHARS``; an answer is one part of it, at most
``maxChars`` long, ending at a block boundary (else a line, else a space), so the parts of a
page put together are exactly its Markdown: nothing lost, nothing repeated.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..dom.textrules import ASCII_SPACE_RUN
from ..protocol import MAX_EXTRACT_CHARS
from .pagetext import (
    BLOCKY,
    CELL,
    CHILDREN,
    DISPLAY,
    EXTRA,
    FLAGS,
    FRAME,
    HEADER_CELL,
    ITEM,
    LINK,
    LINK_END,
    LINK_TEXT,
    ROLE,
    ROW,
    TAG,
    TextNode,
    plain,
    plain_cells,
)

_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_CHROME_ROLES = frozenset({"navigation", "banner", "contentinfo", "complementary", "search"})
_CHROME_TAGS = frozenset({"nav", "aside", "header", "footer"})
# HTML-AAM: header and footer are banner / contentinfo only outside these.
_SECTIONING_TAGS = frozenset({"article", "aside", "main", "nav", "section"})
_SECTIONING_ROLES = frozenset({"article", "complementary", "main", "navigation", "region"})
_LIST_TAGS = frozenset({"ul", "ol", "menu"})
_CELL_ROLES = frozenset({"cell", "gridcell", "columnheader", "rowheader"})
_TABLE_ROLES = frozenset({"table", "grid", "treegrid"})
_CODE_TAGS = frozenset({"code", "kbd", "samp", "tt"})
# Read as their tag only (read.js): nothing of theirs goes into the text.
_SILENT_TAGS = frozenset(
    {
        "input",
        "textarea",
        "select",
        "option",
        "optgroup",
        "datalist",
        "svg",
        "math",
        "canvas",
        "video",
        "audio",
        "object",
        "embed",
        "meter",
        "progress",
        "wbr",
        "script",
        "style",
        "noscript",
        "template",
        "head",
    }
)
# Inline elements the Markdown needs to see (read.js gives other inline elements no item: their
# text joins their parent's): links, images, breaks, code, and any structure a style made inline.
INLINE_TAGS = frozenset(
    {
        "a",
        "img",
        "br",
        "hr",
        "pre",
        "blockquote",
        "table",
        "caption",
        "tr",
        "td",
        "th",
        "thead",
        "tbody",
        "tfoot",
        "li",
        "header",
        "footer",
        "nav",
        "aside",
        "main",
        "article",
        "section",
        "details",
        "summary",
        *_HEADINGS,
        *_LIST_TAGS,
        *_CODE_TAGS,
    }
)
# Tags some rule below applies to; an element with neither one of them nor a role is plain
# inline text or a plain block (most of a page's elements), and skips those rules.
_STRUCTURE_TAGS = frozenset({
    *_SILENT_TAGS, *_CHROME_TAGS, *_HEADINGS, *_LIST_TAGS, "table", "pre", "blockquote", "hr",
})
_BREAK = "\x00"  # a <br> inside inline text, until the text is collapsed
_BREAK_SPACES = re.compile(" ?\x00 ?")


@dataclass(frozen=True, slots=True)
class ExtractPart:
    markdown: str
    from_char: int
    total_chars: int
    next_from_char: int | None
    truncated: bool


def render_markdown(root: TextNode | None) -> str:
    """The Markdown of a read.js tree (``mao_page.read.pagetext``, already ``prune``d), chrome
    dropped (kept when that leaves nothing), not yet capped."""
    if root is None:
        return ""
    top: TextNode = ["#root", "block", "", BLOCKY, "", -1, -1, [root]]
    text = "\n\n".join(_Renderer(drop_chrome=True).blocks(top))
    if not text:
        text = "\n\n".join(_Renderer(drop_chrome=False).blocks(top))
    return text


def cap(markdown: str) -> tuple[str, bool]:
    """The Markdown cut to ``MAX_EXTRACT_CHARS`` at a block boundary; whether it was cut."""
    if len(markdown) <= MAX_EXTRACT_CHARS:
        return markdown, False
    return markdown[:_cut(markdown, 0, MAX_EXTRACT_CHARS)].rstrip("\n"), True


def page_part(
    markdown: str, from_char: int, max_chars: int, truncated: bool = False
) -> ExtractPart:
    """The part of ``markdown`` starting at ``from_char``, at most ``max_chars`` long."""
    total = len(markdown)
    if from_char >= total:
        return ExtractPart("", from_char, total, None, truncated)
    end = (
        total
        if total - from_char <= max_chars
        else _cut(markdown, from_char, from_char + max_chars)
    )
    return ExtractPart(
        markdown[from_char:end], from_char, total, end if end < total else None, truncated
    )


def _cut(text: str, start: int, limit: int) -> int:
    """The end of a part from ``start`` no later than ``limit``: after the last block break,
    else the last line break, else the last space; a hard cut only when there is none."""
    for separator in ("\n\n", "\n", " "):
        at = text.rfind(separator, start + 1, limit)
        if at > start:
            return at + len(separator)
    return limit


def _squash(text: str) -> str:
    """Runs of white space as one space. read.js squashes each text it sends, so this is
    mostly a check: a regular expression costs ten times the ``in`` tests."""
    if "  " in text or "\n" in text or "\t" in text or "\r" in text or "\f" in text:
        return ASCII_SPACE_RUN.sub(" ", text)
    return text


def _collapse(text: str) -> str:
    """Inline text as Markdown on collapsed white space: folded links rendered, breaks as line
    breaks."""
    if CELL in text or HEADER_CELL in text or ITEM in text:
        text = plain_cells(text)  # a folded row or list read as text (inside a heading, a link)
    if LINK in text:
        text = _folded_links(text)
    text = _squash(text).strip()
    if _BREAK in text:
        text = _BREAK_SPACES.sub("\n", text).strip("\n")
    return text


def _link(href: str, text: str) -> str:
    """``[text](href)`` for collapsed link text; a script link is its text, an empty link
    nothing."""
    text = text.replace("\n", " ")
    if not text:
        return ""
    if href[:11].lower() == "javascript:":
        return text
    text = text.replace("[", "\\[").replace("]", "\\]")
    target = href.replace(" ", "%20").replace("(", "%28").replace(")", "%29")
    return f"[{text}]({target})"


def _folded_links(text: str) -> str:
    """Text with the links read.js folded into it (``pagetext.LINK``) as Markdown links."""
    pieces = text.split(LINK)
    out = [pieces[0]]
    for piece in pieces[1:]:
        href, _, rest = piece.partition(LINK_TEXT)
        label, _, after = rest.partition(LINK_END)
        out.append(_link(href, _squash(label).strip()))  # a folded link holds text only
        out.append(after)
    return "".join(out)


def _folded_cells(line: str) -> tuple[list[str], bool]:
    """The cells of a row read.js folded into one string (``pagetext``), as their collapsed,
    escaped text; whether they are all header cells."""
    return _split_cells(_cell_text(line))


def _cell_text(text: str) -> str:
    """Folded rows' text with links rendered, white space collapsed and pipes escaped (what
    each cell needs, done once for a whole row group)."""
    if LINK in text:
        text = _folded_links(text)
    text = _squash(text)
    if "|" in text:
        text = text.replace("|", "\\|")
    return text


def _split_cells(line: str) -> tuple[list[str], bool]:
    if CELL not in line:
        return list(map(str.strip, line.split(HEADER_CELL)[1:])), True
    if HEADER_CELL in line:
        line = line.replace(HEADER_CELL, CELL)
    return list(map(str.strip, line.split(CELL)[1:])), False


def _folded_list(text: str, ordered: bool) -> str:
    """A list read.js folded into one string (``pagetext.ITEM``) as Markdown: each item's
    collapsed text, empty items left out."""
    if LINK in text:
        text = _folded_links(text)
    bodies = list(filter(None, map(str.strip, _squash(text).split(ITEM)[1:])))
    if ordered:
        return "\n".join(f"{number}. {body}" for number, body in enumerate(bodies, 1))
    return "\n".join("- " + body for body in bodies)


def _escape_cell(text: str) -> str:
    return text.replace("\n", " ").replace("|", "\\|")


def _indent(text: str, prefix: str, first: str) -> str:
    if "\n" not in text:
        return first + text  # most list items: one line
    lines = text.split("\n")
    return "\n".join([first + lines[0], *(prefix + line if line else line for line in lines[1:])])


class _Renderer:
    def __init__(self, *, drop_chrome: bool) -> None:
        self.drop_chrome = drop_chrome

    # -- classification ---------------------------------------------------------------

    def _is_chrome(self, node: TextNode, sectioned: bool) -> bool:
        role = node[ROLE]
        if role:
            return role in _CHROME_ROLES
        tag = node[TAG]
        return tag in ("nav", "aside") or (tag in _CHROME_TAGS and not sectioned)

    # -- blocks -------------------------------------------------------------------------

    def blocks(self, node: TextNode, sectioned: bool = False) -> list[str]:
        """The Markdown blocks of a container's content."""
        out: list[str] = []
        inline: list[str] = []
        self._content(node, sectioned, out, inline)
        self._flush(out, inline)
        return out

    def _flush(self, out: list[str], inline: list[str]) -> None:
        if inline:
            text = _collapse("".join(inline))
            inline.clear()
            if text:
                out.append(text)

    def _content(self, node: TextNode, sectioned: bool, out: list[str], inline: list[str]) -> None:
        for child in node[CHILDREN]:
            if child.__class__ is str:
                inline.append(child)
                continue
            self._child(child, sectioned, out, inline)

    def _child(self, child: TextNode, sectioned: bool, out: list[str], inline: list[str]) -> None:
        tag, role = child[TAG], child[ROLE]
        if (role or tag in _STRUCTURE_TAGS) and self._structure(
            child, tag, role, sectioned, out, inline
        ):
            return
        if not child[FLAGS] & BLOCKY or tag == "a" and child[EXTRA]:
            inline.append(self._inline(child))
            return
        # A block container (or an inline box holding blocks): its content in its own blocks.
        self._flush(out, inline)
        inner = (
            sectioned
            or tag in _SECTIONING_TAGS
            or role in _SECTIONING_ROLES
            or bool(child[FLAGS] & FRAME)
        )
        if child[DISPLAY] == "contents":
            # No box of its own (a slot, display: contents): its content flows as if here.
            self._content(child, inner, out, inline)
            return
        content = child[CHILDREN]
        if len(content) == 1 and content[0].__class__ is str:
            text = _collapse(content[0])  # most blocks: one text, no blocks inside to build
            if text:
                out.append(text)
            return
        out.extend(self.blocks(child, inner))

    def _structure(self, child: TextNode, tag: str, role: str, sectioned: bool, out: list[str],
                   inline: list[str]) -> bool:
        """Renders a silent element, chrome, a heading, list, table, pre, blockquote or rule;
        False when ``child`` is none of them."""
        if tag in _SILENT_TAGS:
            return True
        if self.drop_chrome and (role or tag in _CHROME_TAGS) and self._is_chrome(child, sectioned):
            return True
        if tag in _HEADINGS or role == "heading":
            self._flush(out, inline)
            level = _HEADINGS.get(tag) or _heading_level(child[EXTRA])
            text = _collapse(self._inline_text(child)).replace("\n", " ")
            if text:
                out.append("#" * level + " " + text)
            return True
        if tag in _LIST_TAGS or role == "list":
            self._flush(out, inline)
            block = self._list(child, sectioned, ordered=tag == "ol")
            if block:
                out.append(block)
            return True
        if tag == "table" or role in _TABLE_ROLES:
            self._flush(out, inline)
            out.extend(self._table(child))
            return True
        if tag == "pre":
            self._flush(out, inline)
            text = _raw_text(child).strip("\n")
            if text.strip():
                fence = "```"
                while fence in text:
                    fence += "`"
                out.append(f"{fence}\n{text}\n{fence}")
            return True
        if tag == "blockquote":
            self._flush(out, inline)
            quoted = "\n\n".join(self.blocks(child, sectioned))
            if quoted:
                out.append("\n".join("> " + line if line else ">" for line in quoted.split("\n")))
            return True
        if tag == "hr":
            self._flush(out, inline)
            out.append("---")
            return True
        return False

    # -- inline -------------------------------------------------------------------------

    def _inline(self, node: TextNode) -> str:
        tag = node[TAG]
        if tag in _SILENT_TAGS:
            return ""
        if tag == "br":
            return _BREAK
        if tag == "img":
            return node[EXTRA]
        if tag == "a" and node[EXTRA]:
            return _link(node[EXTRA], _collapse(self._inline_text(node)))
        if tag in _CODE_TAGS and not node[FLAGS] & BLOCKY:
            text = _collapse(self._inline_text(node))
            if text and "`" not in text and "\n" not in text:
                return f"`{text}`"
            return text
        return self._inline_text(node)

    def _inline_text(self, node: TextNode) -> str:
        """The node's content on one line of text: blocks inside it are joined by spaces."""
        content = node[CHILDREN]
        if len(content) == 1 and content[0].__class__ is str:
            return content[0]  # most links and cells
        parts: list[str] = []
        for child in content:
            if child.__class__ is str:
                parts.append(child)
            elif child[FLAGS] & BLOCKY and child[TAG] != "a":
                parts.append(" " + self._inline_text(child) + " ")
            else:
                parts.append(self._inline(child))
        return "".join(parts)

    # -- lists --------------------------------------------------------------------------

    def _list(self, node: TextNode, sectioned: bool, *, ordered: bool) -> str:
        kids = node[CHILDREN]
        if len(kids) == 1 and kids[0].__class__ is str and kids[0][:1] == ITEM:
            return _folded_list(kids[0], ordered)  # most lists: text-only items
        items: list[str] = []
        number = 0
        for child in _flattened(node):
            if child.__class__ is str:
                if child.strip():
                    items.append("- " + _collapse(child))
                continue
            tag = child[TAG]
            if tag in _SILENT_TAGS or (self.drop_chrome and (child[ROLE] or tag in _CHROME_TAGS)
                                       and self._is_chrome(child, sectioned)):
                continue
            content = child[CHILDREN]
            if len(content) == 1 and content[0].__class__ is str:
                body = _collapse(content[0])  # most items: one text, no blocks to build
            else:
                body = "\n".join(self.blocks(child, sectioned))
            if not body:
                continue
            number += 1
            marker = f"{number}. " if ordered else "- "
            items.append(_indent(body, " " * len(marker), marker))
        return "\n".join(items)

    # -- tables -------------------------------------------------------------------------

    def _table(self, node: TextNode) -> list[str]:
        out: list[str] = []
        rows: list[_Row] = []
        spanned = False  # any cell spanning more than one column or row
        for child, in_head in _table_rows(node, False):
            if child.__class__ is str:  # a row of a folded row group, its text ready
                texts, header_only = _split_cells(child)
                rows.append((texts, None, in_head or header_only))
                continue
            if child[TAG] == "caption":
                caption = _collapse(self._inline_text(child))
                if caption:
                    out.append(caption)
                continue
            kids = child[CHILDREN]
            if len(kids) == 1 and kids[0].__class__ is str and kids[0][:1] in (CELL, HEADER_CELL):
                texts, header_only = _folded_cells(kids[0])  # most rows: text-only td and th
                rows.append((texts, None, in_head or header_only))
                continue
            texts = []
            spans: list[tuple[int, int]] = []
            header_only = True
            for cell in _row_cells(child):
                if cell.__class__ is str:
                    continue  # white space between cells, text outside any
                tag, role = cell[TAG], cell[ROLE]
                if tag != "td" and tag != "th" and role not in _CELL_ROLES:
                    continue
                text = _collapse(self._inline_text(cell))
                if "|" in text or "\n" in text:
                    text = _escape_cell(text)
                texts.append(text)
                if cell[EXTRA]:
                    span = _spans(cell)
                    spanned = spanned or span != _NO_SPAN
                else:
                    span = _NO_SPAN
                spans.append(span)
                if tag != "th" and role != "columnheader" and role != "rowheader":
                    header_only = False
            if texts:
                rows.append((texts, spans, in_head or header_only))
        if not rows:
            return out
        grid = _fill_grid(rows) if spanned else [texts for texts, _, _ in rows]
        width = max(len(line) for line in grid)
        for line in grid:
            if len(line) < width:
                line.extend([""] * (width - len(line)))
        if rows[0][2]:
            head, body = grid[0], grid[1:]
        else:
            head, body = [""] * width, grid
        lines = "| " + " | ".join(head) + " |\n|" + "---|" * width
        if body:
            lines += "\n| " + " |\n| ".join(map(" | ".join, body)) + " |"
        out.append(lines)
        return out


_NO_SPAN = (1, 1)


# A table row: its cells' text, their (columns, rows) spans (None: none spans more than one),
# and whether it is a header row (in a thead, or header cells only). A tuple: a table of
# folded rows makes one per row, and a dataclass costs a call each.
_Row = tuple[list[str], list[tuple[int, int]] | None, bool]


def _row_cells(row: TextNode) -> list[TextNode | str]:
    """A row's children, through boxless wrappers (display: contents) when there are any."""
    for kid in row[CHILDREN]:
        if kid.__class__ is not str and kid[DISPLAY] == "contents":
            return _flattened(row)
    return row[CHILDREN]


def _fill_grid(rows: list[_Row]) -> list[list[str]]:
    """The table's cells on a grid: a cell spanning columns or rows leaves the cells it
    covers empty (pipe tables have no spans)."""
    grid: list[list[str]] = []
    covered: dict[int, int] = {}  # column -> rows below still covered by a rowspan

    def pass_covered(line: list[str], below: int) -> None:
        # Columns covered from above, from where the line is up to ``below``.
        while len(line) < below or covered.get(len(line), 0) > 0:
            column = len(line)
            if covered.get(column, 0) > 0:
                covered[column] -= 1
            line.append("")

    for texts, spans, _header in rows:
        line: list[str] = []
        for text, (columns, spanned_rows) in zip(
            texts, spans or [_NO_SPAN] * len(texts), strict=True
        ):
            pass_covered(line, 0)
            start = len(line)
            line.append(text)
            line.extend([""] * (columns - 1))
            if spanned_rows > 1:
                for column in range(start, start + columns):
                    covered[column] = spanned_rows - 1
        # Columns past this row's cells still covered from above.
        later = [column for column, left in covered.items() if left > 0 and column >= len(line)]
        for column in sorted(later):
            pass_covered(line, column)
            if covered.get(column, 0) > 0 and len(line) == column:
                covered[column] -= 1
                line.append("")
        grid.append(line)
    return grid


def _heading_level(aria_level: str) -> int:
    try:
        level = int(aria_level)
    except ValueError:
        return 2  # ARIA: a heading's default level
    return min(max(level, 1), 6)


def _spans(cell: TextNode) -> tuple[int, int]:
    if cell[TAG] not in ("td", "th") or "," not in cell[EXTRA]:
        return 1, 1
    columns, rows = cell[EXTRA].split(",", 1)
    # HTML caps colspan at 1000 and rowspan at 65534; a pipe table needs far less.
    return min(max(int(columns or 1), 1), 100), min(max(int(rows or 1), 1), 1000)


def _flattened(node: TextNode) -> list[TextNode | str]:
    """Children, with boxless wrappers (display: contents, slots) replaced by theirs."""
    out: list[TextNode | str] = []
    for child in node[CHILDREN]:
        if child.__class__ is not str and child[DISPLAY] == "contents":
            out.extend(_flattened(child))
        else:
            out.append(child)
    return out


def _table_rows(node: TextNode, in_head: bool) -> list[tuple[TextNode | str, bool]]:
    """The rows (and caption) of a table, through its row groups, not into nested tables; a
    folded row group's rows as their text, ready to split into cells."""
    out: list[tuple[TextNode | str, bool]] = []
    for child in node[CHILDREN]:
        if child.__class__ is str:
            if child[:1] == ROW:
                out.extend((line, in_head) for line in _cell_text(child).split(ROW)[1:])
            continue
        tag, role = child[TAG], child[ROLE]
        if tag == "tr" or role == "row" or tag == "caption":
            out.append((child, in_head))
        elif tag == "table" or role in _TABLE_ROLES:
            continue
        else:
            out.extend(_table_rows(child, in_head or tag == "thead"))
    return out


def _raw_text(node: TextNode) -> str:
    parts: list[str] = []
    for child in node[CHILDREN]:
        if child.__class__ is str:
            parts.append(plain(child))
        elif child[TAG] == "br":
            parts.append("\n")
        elif child[TAG] not in _SILENT_TAGS:
            parts.append(_raw_text(child))
    return "".join(parts)
