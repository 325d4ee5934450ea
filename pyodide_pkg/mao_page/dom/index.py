"""The rows of one walk as a document: parents and composed children (aria-owns applied),
what is hidden or aria-hidden, ids, <label>s, roles and text content, built once per scan.

Everything reads the rows of one ``collectDocument`` walk (``mao_page.dom.facts``) through a
``DocumentIndex``; the accessible names (``names``) and the scanner ask it their questions.
Accessible names computed during a scan are cached in it (``name_cache``), and the cache
dies with it (like Playwright's ``beginAriaCaches``/``endAriaCaches``).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from itertools import compress
from typing import Any

from . import facts as F
from .roles import roles_of_rows
from .textrules import INLINE_DISPLAYS as _INLINE_DISPLAYS
from .textrules import NO_TEXT_TAGS as _NEVER_TEXT
from .textrules import squash

# Text-like roles whose embedded value is their text (accname 2C).
_TEXTBOX_ROLES = frozenset({"textbox", "searchbox"})
_RANGE_ROLES = frozenset({"slider", "spinbutton", "progressbar", "scrollbar", "meter"})
# Roles embedded_value gives a value (or "") for; it is None for every other role.
_EMBEDDED_ROLES = _TEXTBOX_ROLES | _RANGE_ROLES | {"combobox", "listbox", "menu", "menubar"}
# Elements whose <label> names them (HTML "labelable elements").
LABELABLE = frozenset({"input", "select", "textarea", "button", "meter", "progress", "output"})


def ascending_once(spans: list[tuple[int, int]]) -> list[range]:
    """The rows of the (first, last) spans, inclusive, as ranges in ascending order with each
    row in one of them only: subtrees (a row to its ``end``) that may nest or repeat, visited
    parents first."""
    out: list[range] = []
    position = 0
    for first, last in sorted(spans):
        if last >= max(first, position):
            out.append(range(max(first, position), last + 1))
        position = max(position, last + 1)
    return out


class DocumentIndex:
    """Lookups over the rows of one walk (all frames and shadow roots), built once per scan."""

    __slots__ = (
        "rows",
        "columns",
        "parents",
        "tags",
        "displays",
        "text_parts",
        "end",
        "children",
        "by_id",
        "labels_for",
        "hidden",
        "skipped",
        "aria_hidden",
        "roles",
        "rows_of_tag",
        "name_cache",
        "_labels",
        "_in_label",
        "same_as",
        "owns",
        "owner_of",
        "_label_above",
        "_full_rows",
    )

    def __init__(
        self,
        rows: list[list[Any]],
        *,
        roots: list[tuple[int, bool]] | None = None,
        aliases: list[int] | None = None,
    ) -> None:
        """``roots``: for the partial rows of ``collectNameSources`` (an element, then its
        labels and aria-labelledby targets, each a subtree), the root rows and whether each
        is hidden by something outside the rows; the element's labels are those roots."""
        self.rows = rows
        count = len(rows)
        indexes = range(count)
        columns = self.columns = F.columns_of(rows)
        parents = self.parents = columns[F.PARENT]
        # The columns read for most rows named or outlined; the other facts of the few rows
        # that need more (names computed in full, listed elements) come from ``rows[i]``.
        self.tags, self.displays, self.text_parts = (
            columns[F.TAG],
            columns[F.DISPLAY],
            columns[F.TEXT_PARTS],
        )
        # A leaf's children are the shared empty tuple: most rows are leaves, and a list each
        # cost more than the pass below.
        children: list[Sequence[int]] = [()] * count
        for index, parent in enumerate(parents):
            if parent >= 0:
                kids = children[parent]
                if kids:
                    kids.append(index)
                else:
                    children[parent] = [index]
        # end[i]: the last row of i's subtree (its descendants all lie in i+1..end[i]); a
        # whole walk brings them from the page (collect.js: columnsOf).
        end = rows.end if isinstance(rows, F.FactRows) else None
        if end is None:
            end = list(indexes)
            for index in range(count - 1, -1, -1):
                parent = parents[index]
                if parent >= 0 and end[index] > end[parent]:
                    end[parent] = end[index]
        self.children, self.end = children, end
        # Rows whose subtree this walk holds only in part (viewport-limited): their full size.
        self._full_rows = rows.full_rows if isinstance(rows, F.FactRows) else {}
        # Rendered-hidden (accname "hidden"): display:none on the element or an ancestor,
        # content-visibility:hidden on an ancestor, or a computed visibility other than
        # visible. Only the first two hide a whole subtree: visibility is inherited through
        # the computed style, and a descendant may set it back to visible (CSS 2 §11.2).
        # skipped: display:none here, or content-visibility:hidden above.
        self.skipped = self.subtree_flags(
            F.rows_with(columns[F.DISPLAY], "none"),
            below=F.rows_with(columns[F.CONTENT_VISIBILITY], "hidden"),
        )
        self.hidden = self.skipped.copy()
        for index in F.rows_without(columns[F.VISIBILITY], "visible"):
            self.hidden[index] = True
        self.aria_hidden = self.subtree_flags(F.rows_with(columns[F.ARIA_HIDDEN], "true"))
        self.by_id: dict[tuple[int, str], int] = {}
        self.labels_for: dict[tuple[int, str], list[int]] = {}
        ids, scopes = columns[F.ID], columns[F.SCOPE]
        for index in compress(indexes, ids):
            self.by_id.setdefault((scopes[index], ids[index]), index)
        labels_for, tags = columns[F.LABEL_FOR], columns[F.TAG]
        for index in compress(indexes, labels_for):
            if tags[index] == "label":
                self.labels_for.setdefault((scopes[index], labels_for[index]), []).append(index)
        owners = list(compress(indexes, columns[F.ARIA_OWNS]))
        # aria-owns (ARIA 1.2 §6.6.4): owned elements become the owner's last children in
        # the accessibility tree and leave their DOM parent there.
        self.owns: dict[int, list[int]] = {}
        self.owner_of: dict[int, int] = {}
        if owners:
            self._resolve_owns(owners)
        self.rows_of_tag = F.TagRows(self.tags)
        self.roles = roles_of_rows(rows, columns, self.rows_of_tag)
        # Accessible names computed during the scan (names.accessible_name), keyed by row.
        self.name_cache: dict[int, tuple[str, str]] = {}
        self._labels: dict[int, list[int]] = {}
        self._label_above: dict[int, int] = {}
        # Per row: it or an ancestor is a <label> (any tree scope); made on first use.
        self._in_label: list[bool] | None = None
        # Rows that are another row's element again (partial rows: the element in its label).
        self.same_as: dict[int, int] = dict.fromkeys(aliases or (), 0)
        if roots:
            starts = [start for start, _ in roots] + [count]
            for (start, root_hidden), stop in zip(roots, starts[1:], strict=False):
                if root_hidden:
                    for index in range(start, stop):
                        self.hidden[index] = self.skipped[index] = True
            self._labels[0] = [start for start, _ in roots[1:] if rows[start][F.TAG] == "label"]

    def subtree_flags(self, seeds: Sequence[int], *, below: Sequence[int] = ()) -> list[bool]:
        """Per row: it or an ancestor is in ``seeds``, or a proper ancestor is in ``below``
        (row indexes, ascending). Only the seeds' subtrees are visited: a page with no
        display:none, aria-hidden, ... costs nothing per row."""
        flags = [False] * len(self.rows)
        if not seeds and not below:
            return flags
        parents, end = self.parents, self.end
        marked, marked_below = set(seeds), set(below)
        # A parent is decided before its children, and a row outside every span has no seed above
        # it.
        for span in ascending_once(
            [(seed, end[seed]) for seed in seeds] + [(seed + 1, end[seed]) for seed in below]
        ):
            for index in span:
                parent = parents[index]
                flags[index] = index in marked or (
                    parent >= 0 and (flags[parent] or parent in marked_below)
                )
        return flags

    def subtree_rows(self, index: int) -> int:
        """Rows in the element's whole subtree, itself included, whether this walk holds all
        of them or not (a viewport-limited walk: ``FactRows.full_rows``)."""
        return self._full_rows.get(index) or self.end[index] - index + 1

    def _resolve_owns(self, owners: list[int]) -> None:
        """Who owns what. Ignored, as in ARIA (w3c/aria#1839) and WPT accname/aria-owns: an
        owner excluded from the tree (hidden or aria-hidden), a target hidden from all users
        (itself or through an ancestor), a target already owned, and an owner's ancestor
        (no cycles). An owned subtree takes its aria-hidden state from its new parent."""
        rows = self.rows
        for owner in owners:
            if self.hidden[owner] or self.aria_hidden[owner]:
                continue
            row = rows[owner]
            above = set(self.ancestors(owner))
            for ref in row[F.ARIA_OWNS].split():
                target = self.by_id.get((row[F.SCOPE], ref))
                if (
                    target is None
                    or target == owner
                    or target in above
                    or target in self.owner_of
                    or self.hidden[target]
                ):
                    continue
                self.owner_of[target] = owner
                self.owns.setdefault(owner, []).append(target)
        for target, owner in self.owner_of.items():
            stack = [(target, self.aria_hidden[owner])]
            while stack:
                index, inherited = stack.pop()
                self.aria_hidden[index] = inherited or rows[index][F.ARIA_HIDDEN] == "true"
                stack.extend((child, self.aria_hidden[index]) for child in self.children[index])

    def role(self, index: int) -> str:
        return self.roles[index]

    def ancestors(self, index: int):
        parents = self.parents
        parent = parents[index]
        while parent >= 0:
            yield parent
            parent = parents[parent]

    def labels_of(self, index: int) -> list[int]:
        """<label> elements of a labelable element: label[for=id] in its tree scope, then the
        nearest wrapping label (unless it is for another element). Each label once."""
        if index in self._labels:
            return self._labels[index]
        tag = self.tags[index]
        columns = self.columns
        if tag not in LABELABLE or (tag == "input" and columns[F.TYPE][index] == "hidden"):
            return []
        scopes, element_id = columns[F.SCOPE], columns[F.ID][index]
        labels = list(self.labels_for.get((scopes[index], element_id), ())) if element_id else []
        parent = self.parents[index]
        wrapping = -1
        in_label = self._in_label
        if in_label is None:
            in_label = self._in_label = self.subtree_flags(self.rows_of_tag("label"))
        if parent >= 0 and in_label[parent] and scopes[parent] == scopes[index]:
            # Only inside a label (most buttons are not: no walk up for them). The walk up is
            # remembered: siblings find their parent's answer at once.
            wrapping = self._label_above.get(parent)
            if wrapping is None:
                wrapping = self._label_or_above(parent)
        if wrapping >= 0:
            label_for = columns[F.LABEL_FOR][wrapping]
            if wrapping not in labels and (not label_for or label_for == element_id):
                labels.append(wrapping)
                return sorted(labels)  # document order, like el.labels
        return labels

    def _label_or_above(self, index: int) -> int:
        """The nearest <label> among a row and its ancestors in the row's tree scope, -1 when
        none. Remembered for every row on the way up: the fields and buttons of a page share
        most of their ancestors, and each would otherwise walk up to the root again."""
        known = self._label_above
        tags, parents, scopes = self.tags, self.parents, self.columns[F.SCOPE]
        path: list[int] = []
        found = -1
        while index not in known:
            if tags[index] == "label":
                found = index
                break
            path.append(index)
            parent = parents[index]
            if parent < 0 or scopes[parent] != scopes[index]:
                break
            index = parent
        else:
            found = known[index]
        for row_index in path:
            known[row_index] = found
        return found

    def content(self, index: int) -> list[Any]:
        """The composed children of an element, text and elements interleaved in order:
        ``str`` for a text node and ``int`` (a row index) for an element. A list, not a
        generator (called for most rows of a scan); callers must not change it."""
        parts = self.text_parts[index]
        kids = self.children[index]
        if self.owner_of:
            return list(self._owned_content(index, parts, kids))
        if not parts:
            return kids
        out: list[Any] = []
        position = 0
        count = len(kids)
        for at in range(0, len(parts), 2):
            stop = min(parts[at], count)
            if position < stop:
                out.extend(kids[position:stop])
                position = stop
            out.append(parts[at + 1])
        if position < count:
            out.extend(kids[position:])
        return out

    def _owned_content(self, index: int, parts: list[Any], kids: list[int]):
        """``content`` on a page with aria-owns: a child owned by another element is read
        there; the elements this one owns come last."""
        owner_of, owned = self.owner_of, self.owns.get(index, ())
        if not parts:
            yield from (
                kid for kid in kids if owner_of.get(kid, index) == index and kid not in owned
            )
            yield from owned
            return
        kids = [
            kid if owner_of.get(kid, index) == index and kid not in owned else -1 for kid in kids
        ]
        position = 0
        for at in range(0, len(parts), 2):
            while position < parts[at] and position < len(kids):
                if kids[position] >= 0:
                    yield kids[position]
                position += 1
            yield parts[at + 1]
        yield from (kid for kid in kids[position:] if kid >= 0)
        yield from owned

    def text_content(self, index: int, *, skip_hidden: bool = True, limit: int = 400) -> str:
        """Rendered text of a subtree, text nodes in order, blocks separated by spaces."""
        out: list[str]
        size = 0
        if not self.children[index] and not self.owner_of:
            # An element without element children (most table cells, links, buttons): its
            # text parts in order, as the walk below would take them, without the stack.
            parts = self.text_parts[index]
            if not parts or self.tags[index] in _NEVER_TEXT:
                return ""
            # One text node (most such elements): no slice and join.
            joined = parts[1] if len(parts) == 2 else "".join(parts[1::2])
            if len(joined) + 2 < limit:
                # Shorter than the limit: nothing is cut, and the spaces around a block's text
                # are squashed away.
                return squash(joined)
            texts = parts[1::2]
            out = []
            for text in (
                [" ", *texts, " "] if self.displays[index] not in _INLINE_DISPLAYS else texts
            ):
                if size >= limit:
                    break
                out.append(text)
                size += len(text)
            return squash("".join(out))[:limit]
        out = []
        stack: list[Any] = [index]
        tags, displays, alts = self.tags, self.displays, self.columns[F.ALT]
        while stack and size < limit:
            item = stack.pop()
            if isinstance(item, str):
                out.append(item)
                size += len(item)
                continue
            tag = tags[item]
            if tag in _NEVER_TEXT:
                continue
            if skip_hidden and item != index and (self.hidden[item] or self.aria_hidden[item]):
                continue
            if item != index:
                embedded = embedded_value(self, item)
                if embedded is not None:
                    out.append(" " + embedded + " ")
                    continue
                if tag == "img" and alts[item]:
                    out.append(alts[item])
            block = displays[item] not in _INLINE_DISPLAYS
            if block:
                stack.append(" ")
            stack.extend(reversed(self.content(item)))
            if block:
                stack.append(" ")
        return squash("".join(out))[:limit]


def embedded_value(doc: DocumentIndex, index: int) -> str | None:
    """accname 2C: the value an embedded control contributes, or None if not a control."""
    role = doc.roles[index]
    if role not in _EMBEDDED_ROLES:
        return None  # most rows: nothing else to read
    row = doc.rows[index]
    tag = row[F.TAG]
    if role in _TEXTBOX_ROLES:
        if tag in ("input", "textarea"):
            return row[F.VALUE]
        return doc.text_content(index)
    if role in ("combobox", "listbox"):
        if tag == "select":
            return " ".join(o[1] for o in row[F.OPTIONS] or () if o[2])
        if tag == "input":
            return row[F.VALUE]
        # An ARIA listbox or combobox: its selected option(s); a combobox without options
        # shows its value as text.
        descendants = _descendants(doc, index)
        chosen = [
            i
            for i in descendants
            if doc.role(i) == "option" and doc.rows[i][F.ARIA_SELECTED] == "true"
        ]
        if chosen or role == "listbox" or any(doc.role(i) == "option" for i in descendants):
            return " ".join(doc.text_content(i) for i in chosen)
        return doc.text_content(index)
    if role in ("menu", "menubar"):
        return ""  # an embedded menu has no value to contribute
    if role in _RANGE_ROLES:
        if row[F.ARIA_VALUE]:
            return row[F.ARIA_VALUE]
        return row[F.VALUE] if tag == "input" else ""
    return None


def _descendants(doc: DocumentIndex, index: int) -> list[int]:
    out: list[int] = []
    stack = [item for item in doc.content(index) if not isinstance(item, str)]
    while stack and len(out) < 2000:
        current = stack.pop()
        out.append(current)
        stack.extend(item for item in doc.content(current) if not isinstance(item, str))
    return out


class ControlRows:
    """The rows of one walk that are controls (the scanner's interactive candidates),
    ascending: which containers hold which controls, by two bisections a question."""

    __slots__ = ("rows",)

    def __init__(self, rows: Sequence[int]) -> None:
        self.rows = rows

    def count(self, first: int, last: int) -> int:
        """Controls among rows first..last."""
        return bisect_right(self.rows, last) - bisect_left(self.rows, first)

    def within(self, first: int, last: int) -> list[int]:
        return list(self.rows[bisect_left(self.rows, first):bisect_right(self.rows, last)])
