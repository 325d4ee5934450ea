"""The page scanner: which elements an agent may see and act on (SPEC S1-S4, S6).

Input is the fact rows of one ``collectDocument`` walk (``mao_page.dom.facts``): the top
document with its open shadow roots and same-origin iframes. Every decision is made here in
Python: interactivity, collapse, visibility and clipping, the viewport, placeholders for what
cannot be read (cross-origin frames, closed shadow roots), and the outline that gives the
text form its structure (headings, text lines, containers).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import chain, compress, repeat
from operator import eq, itemgetter, or_, sub
from typing import Any, NamedTuple

from ..dom import facts as F
from ..dom.index import ControlRows, DocumentIndex, ascending_once
from ..dom.names import (
    accessible_description,
    accessible_name,
    accessible_names,
    container_label,
    inner_field_label,
    nearby_text,
    position_label,
    replaced_control_label,
    stepper_label,
)
from ..dom.roles import (
    DRAG_CURSORS,
    ITEM_CONTAINER_ROLES,
    ITEM_CONTAINER_ROWS,
    WIDGET_ROLES,
    explicit_role,
    heading_level,
    kind_of,
)
from ..dom.textrules import INLINE_DISPLAYS as _INLINE_DISPLAYS
from ..dom.textrules import NO_TEXT_TAGS as _NO_TEXT_TAGS
from ..dom.textrules import squash
from ..protocol import Viewport
from ..supervision.sensitive import FIELD_TAGS, is_sensitive_field
from .element import Element, keys_of

_NATIVE_INTERACTIVE = frozenset({"button", "select", "textarea", "summary"})
_NATIVE_CONTROLS = frozenset({"input", "select", "textarea", "button", "a", "summary"})
# Tags is_interactive may accept by tag alone (with a type or href test).
_MAYBE_INTERACTIVE_TAGS = _NATIVE_INTERACTIVE | {"input", "a", "area"}
_SKIPPED_TAGS = frozenset(
    {
        "html",
        "head",
        "body",
        "script",
        "style",
        "template",
        "noscript",
        "option",
        "optgroup",
        "label",
    }
)
# range and color take a value through the native setter like text does (SPEC A1 fill).
_NON_FILLABLE_INPUTS = frozenset(
    {"checkbox", "radio", "button", "submit", "reset", "image", "file"}
)
_CLIPPING = frozenset({"hidden", "clip"})
_SCROLLING = frozenset({"auto", "scroll"})
# Containers the text form indents (forms, dialogs, lists, tables, landmarks), as a reader sees them
# grouped.
CONTAINER_ROLES = frozenset(
    {
        "form", "dialog", "alertdialog", "list", "table", "grid", "treegrid", "navigation", "main",
        "banner", "contentinfo", "complementary", "search", "region", "radiogroup", "tablist",
        "menu", "menubar", "toolbar", "tree", "group", "listbox",
    }
)
_NAMED_ONLY_CONTAINERS = frozenset({"group", "region"})
_NO_OUTLINE_TAGS = frozenset({"head", "script", "style", "template", "noscript"})
TEXT_LIMIT = 120
TEXT_LINE_LIMIT = 100
OFFSCREEN_TEXT_LIMIT = 40

Box = tuple[float, float, float, float]  # x0, y0, x1, y1 in the top viewport


class OutlineNode(NamedTuple):
    """One line of the text form: a container, heading, text line or element. A NamedTuple
    like Element: a whole-page outline makes thousands, and a frozen dataclass's
    ``__init__`` cost ~2 us each in CPython."""

    kind: str  # "container", "heading", "text", "element"
    depth: int
    role: str = ""
    name: str = ""
    element: int = -1  # position in Scan.elements for kind "element"
    in_viewport: bool = True
    level: int = 0


@dataclass(slots=True)
class Scan:
    elements: list[Element]
    outline: list[OutlineNode] = field(default_factory=list)
    frames: list[str] = field(default_factory=list)


def _tabindex(value: str) -> int | None:
    try:
        return int(value) if value != "" else None
    except ValueError:
        return None


def is_interactive(index: int, role: str, doc: DocumentIndex) -> bool:
    """SPEC S1, recall first. ``role``: the row's explicit role (``explicit_role``)."""
    columns = doc.columns
    tag = doc.tags[index]
    if tag in _SKIPPED_TAGS:
        return False
    if tag in _NATIVE_INTERACTIVE:
        return True
    if tag == "input":
        return columns[F.TYPE][index] != "hidden"
    if tag in ("a", "area") and columns[F.HREF][index]:
        return True
    editable = columns[F.CONTENTEDITABLE]
    if editable[index] and not role:
        # isContentEditable holds for every descendant of the editing host, and each one
        # gets the implicit textbox role; only the host is the field.
        parent = doc.parents[index]
        if parent < 0 or not editable[parent]:
            return True
    elif role in WIDGET_ROLES:
        return True
    tabindex = _tabindex(columns[F.TABINDEX][index])
    if tabindex is not None and tabindex >= 0:
        return True
    cursors = columns[F.CURSOR]
    if cursors[index] == "pointer":
        # cursor inherits: only the element that introduces it counts, not its descendants.
        parent = doc.parents[index]
        return parent < 0 or cursors[parent] != "pointer"
    return False


# A slider's rail is at least this many times longer than it is thick, and than its thumb
# (the shape the slider action looks for, loader_js/primitives/widgets.js thumbOnRail).
_RAIL_RATIO = 4
# How far up a thumb's rail may be: its nearest positioned ancestor, a few levels up.
_RAIL_LEVELS = 3


def is_slider_thumb(index: int, doc: DocumentIndex) -> bool:
    """SPEC S1: a role-less element shaped like the thumb of a slider built from divs:
    absolutely positioned on its containing block (the nearest positioned ancestor, the
    rail), which is long and thin along one axis and much longer than the thumb, with the
    thumb's centre on it. The same shape ``actions.widgets.slider`` reads the value from."""
    columns = doc.columns
    positions = columns[F.POSITION]
    if positions[index] != "absolute":
        return False
    rail = doc.parents[index]
    for _ in range(_RAIL_LEVELS):
        if rail < 0 or doc.tags[rail] in ("body", "html"):
            return False
        if positions[rail] not in ("", "static"):
            break
        rail = doc.parents[rail]
    else:
        return False
    xs, ys, widths, heights = columns[F.X], columns[F.Y], columns[F.WIDTH], columns[F.HEIGHT]
    tw, th, rw, rh = widths[index], heights[index], widths[rail], heights[rail]
    if min(tw, th, rw, rh) <= 0:
        return False
    cx, cy = xs[index] + tw / 2, ys[index] + th / 2
    if rw >= _RAIL_RATIO * rh and rw >= _RAIL_RATIO * tw:
        across = abs(cy - (ys[rail] + rh / 2)) <= max(th, rh) / 2
        return across and xs[rail] - 1 <= cx <= xs[rail] + rw + 1
    if rh >= _RAIL_RATIO * rw and rh >= _RAIL_RATIO * th:
        across = abs(cx - (xs[rail] + rw / 2)) <= max(tw, rw) / 2
        return across and ys[rail] - 1 <= cy <= ys[rail] + rh + 1
    return False


def _part_of_a_slider(index: int, doc: DocumentIndex) -> bool:
    """Whether a thumb belongs to a slider the page marks up (role slider, a range input)
    around it, a few levels up, or inside it: that slider is listed already."""
    roles, end = doc.roles, doc.end
    if "slider" in roles[index:end[index] + 1]:
        return True
    node = doc.parents[index]
    for _ in range(_RAIL_LEVELS + 3):
        if node < 0:
            return False
        if roles[node] == "slider":
            return True
        node = doc.parents[node]
    return False


def _drag_thumb(index: int, doc: DocumentIndex) -> bool:
    """A role-less thumb a user drags: it introduces a drag cursor (``DRAG_CURSORS``; cursor
    inherits, its descendants do not count) and is shaped like a slider's thumb."""
    cursors = doc.columns[F.CURSOR]
    parent = doc.parents[index]
    return (
        cursors[index] in DRAG_CURSORS
        and (parent < 0 or cursors[parent] != cursors[index])
        and is_slider_thumb(index, doc)
        and not _part_of_a_slider(index, doc)
    )


# true/false ARIA states; any other value (absent, "mixed", ...) reads as None. A dict
# lookup: three per listed element.
_BOOL_ATTR = {"true": True, "false": False}


def _intersect(a: Box | None, b: Box) -> Box:
    if a is None:
        return b
    return (max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3]))


def _overlaps(box: Box, clip: Box | None) -> bool:
    if clip is None:
        return True
    return box[0] < clip[2] and box[2] > clip[0] and box[1] < clip[3] and box[3] > clip[1]


class Geometry:
    """Rects in the top viewport, clipping by ancestors, and visibility.

    Frame offsets translate a nested frame's rects into the top viewport. Clipping follows
    CSS: an ancestor with overflow hidden/clip cuts its descendants off (not visible at
    all); one with overflow auto/scroll, or a frame's viewport, only scrolls them out of
    view (visible, not in the viewport). Absolutely positioned descendants escape the clip
    of non-positioned ancestors; fixed ones escape every ancestor clip.

    One pass hands the clips down (a tuple is shared, not copied, until an ancestor clips);
    rects and visibility are computed only for the rows that are asked about.
    """

    __slots__ = (
        "_x",
        "_y",
        "_width",
        "_height",
        "_tags",
        "_parents",
        "_hidden",
        "_transparent",
        "_clip_in",
        "frame_of",
        "frame_offsets",
        "_top",
        "_visible",
        "_in_view",
    )

    def __init__(
        self,
        doc: DocumentIndex,
        scopes: list[list[Any]],
        frames: list[list[Any]],
        viewport: Viewport,
    ) -> None:
        columns = doc.columns
        self._x, self._y, self._width, self._height = (
            columns[F.X],
            columns[F.Y],
            columns[F.WIDTH],
            columns[F.HEIGHT],
        )
        tags, parents = self._tags, self._parents = doc.tags, doc.parents
        self._hidden = doc.hidden
        count = len(tags)
        scope_frame = [scope[F.SCOPE_FRAME] for scope in scopes] or [0]
        offsets: list[tuple[float, float]] = []
        for frame in frames:
            owner = frame[F.FRAME_OWNER]
            if owner < 0:
                offsets.append((0.0, 0.0))
                continue
            px, py = offsets[scope_frame[columns[F.SCOPE][owner]]]
            offsets.append((px + frame[F.FRAME_X], py + frame[F.FRAME_Y]))
        if not offsets:
            offsets.append((0.0, 0.0))
        self.frame_offsets = offsets
        self._top: Box = (0.0, 0.0, viewport.width, viewport.height)
        self._visible: list[bool | None] = [None] * count
        self._in_view: list[bool | None] = [None] * count
        no_clip: tuple[Box | None, Box | None] = (None, None)
        # Per row: (hard clip, scroll clip) it gets from its ancestors, and what it hands to
        # in-flow and to absolutely positioned children.
        clip_in: list[tuple[Box | None, Box | None]] = [no_clip] * count
        flow: list[tuple[Box | None, Box | None]] = [no_clip] * count
        absolute: list[tuple[Box | None, Box | None]] = [no_clip] * count
        indexes = range(count)
        frame_of = [0] * count
        for scope, frame in enumerate(scope_frame):
            if frame:
                for index in F.rows_with(columns[F.SCOPE], scope):
                    frame_of[index] = frame
        opacity = columns[F.OPACITY]
        transparent = doc.subtree_flags(
            list(compress(indexes, map((0.0).__ge__, opacity)))
            if count and min(opacity) <= 0
            else []
        )
        # Clips change only below an element with overflow other than visible and inside a
        # frame: elsewhere every row gets and hands on no clip at all, so only those subtrees
        # are visited (on most pages a small part of the rows).
        clipping = [
            i
            for i in F.rows_without(columns[F.OVERFLOW], "visible")
            if tags[i] not in ("html", "body")
        ]
        spans = ascending_once(
            [(seed, doc.end[seed]) for seed in clipping + F.rows_with(columns[F.FRAME], "same")]
        )
        positions, frame_kinds, overflows = (
            columns[F.POSITION],
            columns[F.FRAME],
            columns[F.OVERFLOW],
        )
        for span in spans:
            for index in span:
                frame = frame_of[index]
                parent = parents[index]
                position = positions[index]
                if parent < 0:
                    inherited = no_clip
                else:
                    if position == "absolute":
                        inherited = absolute[parent]
                    elif position == "fixed":
                        inherited = no_clip if frame == 0 else flow[parent]
                    else:
                        inherited = flow[parent]
                    if frame and frame_kinds[parent] == "same":
                        fx, fy = offsets[frame]
                        box = (
                            fx,
                            fy,
                            fx + frames[frame][F.FRAME_WIDTH],
                            fy + frames[frame][F.FRAME_HEIGHT],
                        )
                        inherited = (inherited[0], _intersect(inherited[1], box))
                clip_in[index] = inherited
                own = inherited
                overflow = overflows[index]
                if overflow != "visible" and tags[index] not in ("html", "body"):
                    box = self.box(index, frame)
                    parts = overflow.split()
                    if any(p in _CLIPPING for p in parts):
                        own = (_intersect(inherited[0], box), inherited[1])
                    elif any(p in _SCROLLING for p in parts):
                        own = (inherited[0], _intersect(inherited[1], box))
                flow[index] = own
                if position != "static":
                    absolute[index] = own
                elif parent >= 0:
                    absolute[index] = absolute[parent]
        self._transparent = transparent
        self._clip_in = clip_in
        self.frame_of = frame_of

    def box(self, index: int, frame: int | None = None) -> Box:
        ox, oy = self.frame_offsets[self.frame_of[index] if frame is None else frame]
        x0 = self._x[index] + ox
        y0 = self._y[index] + oy
        return (x0, y0, x0 + self._width[index], y0 + self._height[index])

    def visible(self, index: int) -> bool:
        """Rendered, not transparent, has a size, and not clipped away by an ancestor."""
        known = self._visible[index]
        if known is None:
            clip = self._clip_in[index][0]
            known = (
                not self._hidden[index]
                and (not self._transparent[index] or self._drawn_by_wrapper(index))
                and self._width[index] > 0
                and self._height[index] > 0
                and (clip is None or _overlaps(self.box(index), clip))
            )
            self._visible[index] = known
        return known

    def _drawn_by_wrapper(self, index: int) -> bool:
        """Component libraries (antd, Element Plus, ...) keep the real input transparent and
        draw it with a close wrapper: the field is what users see there."""
        if self._tags[index] not in ("input", "select", "textarea"):
            return False
        ancestor = self._parents[index]
        for _ in range(3):
            if ancestor < 0 or self._hidden[ancestor]:
                return False
            if (
                not self._transparent[ancestor]
                and self._width[ancestor] > 0
                and self._height[ancestor] > 0
            ):
                return True
            ancestor = self._parents[ancestor]
        return False

    def in_view(self, index: int, box: Box | None = None) -> bool:
        """Visible and inside the top viewport and every scrolling ancestor's box (``box``:
        the row's, when the caller has it already)."""
        known = self._in_view[index]
        if known is None:
            visible = self._visible[index]  # most callers asked visible() first
            if visible is None:
                visible = self.visible(index)
            if visible:
                if box is None:
                    box = self.box(index)
                # _overlaps(box, top) and _overlaps(box, scroll clip), spelled out: thousands
                # of rows are asked on a whole page, most with no scroll clip.
                top = self._top
                known = box[0] < top[2] and box[2] > top[0] and box[1] < top[3] and box[3] > top[1]
                if known:
                    clip = self._clip_in[index][1]
                    known = clip is None or _overlaps(box, clip)
            else:
                known = False
            self._in_view[index] = known
        return known


def _inside_control(doc: DocumentIndex, index: int, known: dict[int, bool]) -> bool:
    """Whether an ancestor of the row is a native control (an <a> only with href).
    ``known`` remembers the answer for every ancestor on the way (for them: it or one above)."""
    tags, parents, hrefs = doc.tags, doc.parents, doc.columns[F.HREF]
    path: list[int] = []
    node = parents[index]
    found = False
    while node >= 0:
        if node in known:
            found = known[node]
            break
        path.append(node)
        tag = tags[node]
        if tag in _NATIVE_CONTROLS and (tag != "a" or bool(hrefs[node])):
            found = True
            break
        node = parents[node]
    for ancestor in path:
        known[ancestor] = found
    return found


def scan(
    rows: list[list[Any]],
    viewport: Viewport,
    *,
    include_offscreen: bool = False,
    scopes: list[list[Any]] | None = None,
    frames: list[list[Any]] | None = None,
) -> list[Element]:
    """The elements an agent may act on, in document order (pass the walk's ``scopes`` and
    ``frames`` tables so elements in frames get top-viewport rects and frame labels)."""
    return scan_page(
        rows, viewport, include_offscreen=include_offscreen, scopes=scopes, frames=frames
    ).elements


def scan_page(
    rows: list[list[Any]],
    viewport: Viewport,
    *,
    include_offscreen: bool = False,
    scopes: list[list[Any]] | None = None,
    frames: list[list[Any]] | None = None,
    outline: bool = False,
    release_sensitive: bool = False,
    mark_new: bool = False,
) -> Scan:
    """``scan`` plus, with ``outline``, the containers, headings and text lines of the text form.

    ``mark_new``: the rows' ``facts.FRESH`` compares with the previous snapshot of the same
    document state, so elements not painted then are marked ``new`` and the items of what
    appeared are reached (``delegated_items``).

    ``release_sensitive`` keeps the values of sensitive fields (the authorization center
    decided the level allows it, SPEC P5); private fields' values are withheld regardless."""
    doc = DocumentIndex(rows)
    scopes = scopes or [["document", 0, -1]]
    frames = frames or [[-1, "", 0, 0, viewport.width, viewport.height]]
    geometry = Geometry(doc, scopes, frames, viewport)
    count = len(rows)
    indexes = range(count)
    # Whole columns are read at C speed (map, compress); Python then visits only the rows
    # they point at, not every row of the page.
    columns = doc.columns
    ignored = doc.subtree_flags(F.rows_with(columns[F.PRIVACY], "ignore"))
    private = doc.subtree_flags(F.rows_with(columns[F.PRIVACY], "private"))
    inert = doc.subtree_flags(F.rows_with(columns[F.INERT], True))
    # The rows is_interactive can accept, and the placeholders: an interactive tag, or a
    # role, tabindex, contenteditable, pointer cursor, cross-origin frame or closed shadow
    # root. For every other row is_interactive returns False by its first tests.
    # (The rows of each interactive tag are found in C, most of them already for the roles.)
    possible = set(chain.from_iterable(map(doc.rows_of_tag, _MAYBE_INTERACTIVE_TAGS)))
    for column in (F.ROLE, F.TABINDEX, F.CONTENTEDITABLE):
        possible.update(compress(indexes, columns[column]))
    for column, value in ((F.CURSOR, "pointer"), (F.FRAME, "cross"), (F.SHADOW, "closed")):
        possible.update(F.rows_with(columns[column], value))
    for cursor in DRAG_CURSORS:
        possible.update(F.rows_with(columns[F.CURSOR], cursor))
    candidates: list[int] = []
    in_control: dict[int, bool] = {}
    tags, frame_kinds, shadows, role_attributes, editable = (
        columns[F.TAG],
        columns[F.FRAME],
        columns[F.SHADOW],
        columns[F.ROLE],
        columns[F.CONTENTEDITABLE],
    )
    explicit: dict[int, str] = {}  # explicit roles of the candidates that have a role attribute
    # Role-less candidates shaped like a slider's thumb: listed as sliders (SPEC S1).
    slider_thumbs: set[int] = set()
    for index in sorted(possible):
        if ignored[index] or inert[index]:
            continue
        if frame_kinds[index] == "cross" or shadows[index] == "closed":
            candidates.append(index)
            continue
        # Only an explicit role can make a non-native element a widget; implicit roles of
        # the native controls are handled by tag in is_interactive.
        role = explicit[index] = explicit_role(rows[index]) if role_attributes[index] else ""
        if is_interactive(index, role, doc) or (
            not role and tags[index] not in _NATIVE_CONTROLS and _drag_thumb(index, doc)
        ):
            # A focusable or pointer-only element inside a native control is part of it.
            if (
                tags[index] not in _NATIVE_CONTROLS and not role and not editable[index]
                and _inside_control(doc, index, in_control)
            ):
                continue
            candidates.append(index)
            if (
                not role
                and tags[index] not in _NATIVE_CONTROLS
                and is_slider_thumb(index, doc)
                and not _part_of_a_slider(index, doc)
            ):
                slider_thumbs.add(index)

    control_rows = ControlRows(candidates)
    fresh = columns[F.FRESH] if mark_new and True in columns[F.FRESH] else None
    items = delegated_items(doc, geometry, control_rows, fresh, ignored, inert)
    if items:
        candidates = sorted({*candidates, *items})

    # SPEC S1: a clickable wrapper around exactly one real control collapses into it.
    native = [i for i in candidates if tags[i] in ("input", "select", "textarea", "button", "a")]
    # The wrappers that may collapse: no native tag, no role of their own, no placeholder.
    native_set = set(native)
    wrappers = {
        i
        for i in candidates
        if i not in native_set
        and not explicit.get(i)
        and not frame_kinds[i]
        and shadows[i] != "closed"
    }
    # A wrapper's subtree is the rows after it up to its end (preorder): the native
    # candidates inside it are counted by two bisections of the (ascending) native rows.
    end = doc.end
    collapsed = {i for i in wrappers if bisect_right(native, end[i]) - bisect_right(native, i) == 1}
    frame_labels = _frame_labels(doc, frames, scopes)
    # Per listed element: its row, the row acted on, the real input behind a label, the box.
    chosen: list[int] = []
    targets: list[int] = []
    controls: list[int | None] = []
    boxes: list[Box] = []
    in_views: list[bool] = []
    listed: dict[int, int] = {}
    types = columns[F.TYPE]
    for index in candidates:
        if index in collapsed:
            continue
        target = index
        control: int | None = None
        if not geometry.visible(index):
            if tags[index] != "input" or types[index] not in ("checkbox", "radio"):
                continue
            # A custom checkbox: the real input is hidden and its label is what users click.
            shown = [label for label in doc.labels_of(index) if geometry.visible(label)]
            if not shown:
                continue
            target, control = shown[0], index
        box = geometry.box(target)
        in_viewport = geometry.in_view(target, box)
        if not in_viewport and not include_offscreen:
            continue
        listed[target] = len(chosen)
        chosen.append(index)
        targets.append(target)
        controls.append(control)
        boxes.append(box)
        in_views.append(in_viewport)
    elements = _describe(
        doc,
        geometry,
        chosen,
        targets,
        controls,
        boxes,
        in_views,
        frame_labels,
        private,
        release_sensitive,
        control_rows,
        fresh,
        slider_thumbs,
    )
    result = Scan(elements=elements, frames=frame_labels)
    if outline:
        result.outline = _outline(
            doc, geometry, listed, in_views, ignored, inert, include_offscreen
        )
    return result


# -- SPEC S1, S9: items handled by a delegated listener -----------------------------------
#
# A list, menu or popup whose page listens on the container (one click handler for all
# items) gives its items no role, tabindex or pointer cursor: nothing marks them as
# clickable, yet a user clicks their text. Structure does: the children of an ARIA item
# container, and items that appeared since the previous snapshot, in a list or repeated in
# a positioned (absolute / fixed) subtree. Items are short texts with no control inside;
# paragraphs stay text.

_NOT_ITEM_TAGS = frozenset(
    {
        "p",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "br",
        "hr",
        "img",
        "svg",
        "label",
        "option",
        "optgroup",
        "script",
        "style",
        "template",
        "noscript",
        "input",
        "select",
        "textarea",
        "button",
        "a",
        "iframe",
        "frame",
    }
)
ITEM_TEXT_LIMIT = 80
MAX_ITEMS_PER_CONTAINER = 50
MAX_ITEMS = 200


def delegated_items(
    doc: DocumentIndex,
    geometry: Geometry,
    controls: ControlRows,
    fresh: Sequence[bool] | None,
    ignored: list[bool],
    inert: list[bool],
) -> list[int]:
    """Rows to list as items (SPEC S9), ascending: the children of listbox / menu / tree
    containers; with ``fresh`` (the rows not painted at the previous snapshot) the appeared
    children of lists, and appeared groups of two or more same-tag siblings inside a
    positioned subtree (a popup, a portal), the deepest group first. At most
    ``MAX_ITEMS_PER_CONTAINER`` per container, in-viewport ones first, ``MAX_ITEMS`` in all."""
    roles, children, end, tags = doc.roles, doc.children, doc.end, doc.tags
    present = set(roles)
    text_content = doc.text_content

    def qualifies(row: int) -> bool:
        if (
            ignored[row]
            or inert[row]
            or tags[row] in _NOT_ITEM_TAGS
            or controls.count(row, end[row])
        ):
            return False
        if not geometry.visible(row):
            return False
        text = text_content(row, limit=ITEM_TEXT_LIMIT + 1)
        return 0 < len(text) <= ITEM_TEXT_LIMIT

    groups: list[list[int]] = []
    for role in ITEM_CONTAINER_ROLES & present:
        for container in F.rows_with(roles, role):
            groups.append([row for row in children[container] if qualifies(row)])
    if fresh is not None:
        if "list" in present:
            for container in F.rows_with(roles, "list"):
                if doc.subtree_rows(container) <= ITEM_CONTAINER_ROWS:
                    groups.append(
                        [row for row in children[container] if fresh[row] and qualifies(row)]
                    )
        groups.extend(_appeared_groups(doc, fresh, qualifies))
    chosen: set[int] = set()
    for group in groups:
        if not group:
            continue
        if len(group) > MAX_ITEMS_PER_CONTAINER:
            # The ones an agent can see first: a viewport-limited walk holds only those.
            group = sorted(group, key=lambda row: not geometry.in_view(row))[
                :MAX_ITEMS_PER_CONTAINER
            ]
        chosen.update(group)
    items = sorted(chosen)
    if len(items) > MAX_ITEMS:
        items = sorted(sorted(items, key=lambda row: not geometry.in_view(row))[:MAX_ITEMS])
    return items


def _appeared_groups(doc: DocumentIndex, fresh: Sequence[bool], qualifies: Any) -> list[list[int]]:
    """Groups of two or more appeared same-tag siblings, block-level, inside a positioned
    subtree whose container is small, deepest first: a group's member holding a deeper
    group is a container, not an item."""
    parents, positions, tags, displays = (
        doc.parents,
        doc.columns[F.POSITION],
        doc.tags,
        doc.displays,
    )
    by_parent: dict[int, list[int]] = {}
    for row in F.rows_with(fresh, True):
        parent = parents[row]
        if parent >= 0 and displays[row] not in _INLINE_DISPLAYS:
            by_parent.setdefault(parent, []).append(row)
    positioned: dict[int, bool] = {}

    def in_positioned(row: int) -> bool:
        path = []
        found = False
        while row >= 0:
            known = positioned.get(row)
            if known is not None:
                found = known
                break
            path.append(row)
            if positions[row] in ("absolute", "fixed"):
                found = True
                break
            row = parents[row]
        for step in path:
            positioned[step] = found
        return found

    holds_item: set[int] = set()
    groups = []
    for parent in sorted(by_parent, reverse=True):
        if doc.subtree_rows(parent) > ITEM_CONTAINER_ROWS or not in_positioned(parent):
            continue
        members = [row for row in by_parent[parent] if row not in holds_item and qualifies(row)]
        by_tag: dict[str, list[int]] = {}
        for row in members:
            by_tag.setdefault(tags[row], []).append(row)
        group = [row for same in by_tag.values() if len(same) >= 2 for row in same]
        if not group:
            continue
        groups.append(group)
        node = parent
        while node >= 0 and node not in holds_item:
            holds_item.add(node)
            node = parents[node]
    return groups


def _frame_labels(
    doc: DocumentIndex, frames: list[list[Any]], scopes: list[list[Any]]
) -> list[str]:
    labels = ["main"]
    for number, frame in enumerate(frames[1:], start=1):
        owner = frame[F.FRAME_OWNER]
        name = accessible_name(doc, owner)[0] if owner >= 0 else ""
        labels.append(f"frame {number}" + (f": {name[:60]}" if name else ""))
    return labels


# true/false/mixed of aria-pressed; any other value reads as None.
_PRESSED = {"true": True, "false": False, "mixed": "mixed"}
# aria-invalid values that do not make a field invalid.
_VALID = {"": False, "false": False}
_CHECKABLE = frozenset({"checkbox", "switch", "radio", "menuitemcheckbox", "menuitemradio"})
# The role of an element without one.
_GENERIC = {"": "generic"}
# Listed elements _describe decides by a shortcut when they have no states: the roles are
# their kinds (roles.kind_of), and neither tag holds a value (not a field).
_PLAIN_ROLES = frozenset({"link", "button"})
_PLAIN_TAGS = frozenset({"a", "button"})


def _picker(indexes: list[int]) -> Any:
    """``pick(column)``: the cells of ``indexes`` (at least one), a tuple, read in C
    (``itemgetter`` of one index returns the cell itself, not a tuple)."""
    if len(indexes) == 1:
        only = indexes[0]
        return lambda column: (column[only],)
    return itemgetter(*indexes)


def _describe(
    doc: DocumentIndex,
    geometry: Geometry,
    chosen: list[int],
    targets: list[int],
    controls: list[int | None],
    boxes: list[Box],
    in_views: list[bool],
    frame_labels: list[str],
    private: list[bool],
    release_sensitive: bool,
    control_rows: ControlRows,
    fresh: Sequence[bool] | None,
    slider_thumbs: set[int] | frozenset[int] = frozenset(),
) -> list[Element]:
    """The listed elements: ``chosen[k]`` is the row of element k, ``targets[k]`` the row
    acted on (a custom checkbox: its label, ``controls[k]`` the real input), ``boxes[k]`` the
    target's box, ``in_views[k]`` whether the target is in the viewport.

    Field by field, in bulk: the facts of all elements are read a column at a time (C:
    itemgetter, map, zip), the fields that are a plain function of them are made the same
    way, and only the rest (names, values, states, text) is decided element by element. A
    call, an unpacking and a tuple per element cost more than the work of most fields."""
    if not chosen:
        return []
    c = doc.columns
    pick = _picker(chosen)
    tags = pick(doc.tags)
    roles = pick(doc.roles)
    roles = tuple(map(_GENERIC.get, roles, roles))
    # The roles listed: a role-less slider thumb is a slider. Its ref's key keeps the role
    # its row states (refs.live_problem compares it with a fresh row's).
    listed_roles = (
        tuple("slider" if i in slider_thumbs else r for i, r in zip(chosen, roles, strict=True))
        if slider_thumbs
        else roles
    )
    input_types, element_ids, names, placeholders = (
        pick(c[F.TYPE]),
        pick(c[F.ID]),
        pick(c[F.NAME]),
        pick(c[F.PLACEHOLDER]),
    )
    # The fields decided one by one, per element in field order: kind, type, label,
    # label_source, text, value, options, checked, expanded, sensitive, form, description,
    # opaque.
    decided = []
    parents, all_tags, opened = doc.parents, doc.tags, c[F.OPEN]
    forms = pick(c[F.FORM])
    # Each form's owner fields (formId, formName, action, method), once per form: a page has
    # a few forms and many fields in them.
    form_owners = {
        form: (c[F.ID][form], c[F.NAME][form], c[F.FORM_ACTION][form], c[F.FORM_METHOD][form])
        for form in set(forms) if form >= 0
    }
    for (
        index,
        control,
        (label, source),
        tag,
        role,
        input_type,
        element_id,
        name,
        placeholder,
        frame_kind,
        shadow,
        editable,
        is_password,
        autocomplete,
        options_fact,
        multiple,
        current_value,
        aria_value,
        checked_state,
        aria_checked,
        aria_expanded,
        form,
        describedby,
        is_private,
        class_state,
    ) in zip(
        chosen,
        controls,
        accessible_names(doc, chosen),
        tags,
        listed_roles,
        input_types,
        element_ids,
        names,
        placeholders,
        pick(c[F.FRAME]),
        pick(c[F.SHADOW]),
        pick(c[F.CONTENTEDITABLE]),
        pick(c[F.IS_PASSWORD]),
        pick(c[F.AUTOCOMPLETE]),
        pick(c[F.OPTIONS]),
        pick(c[F.MULTIPLE]),
        pick(c[F.VALUE]),
        pick(c[F.ARIA_VALUE]),
        pick(c[F.CHECKED]),
        pick(c[F.ARIA_CHECKED]),
        pick(c[F.ARIA_EXPANDED]),
        forms,
        pick(c[F.ARIA_DESCRIBEDBY]),
        pick(private),
        pick(c[F.CLASS_STATE]),
        strict=True,
    ):
        if (
            source == "content"
            and role in _PLAIN_ROLES
            and tag in _PLAIN_TAGS
            and control is None
            and checked_state < 0
            and not (
                editable
                or aria_value
                or aria_checked
                or aria_expanded
                or describedby
                or frame_kind
                or shadow
            )
        ):
            # A link or button named from its content with no states (most listed elements):
            # the fields as the steps below decide them (kind: its role; no value, text,
            # checked, expanded, sensitivity or description), without their tests.
            decided.append(
                (
                    role,
                    input_type if tag == "button" else "",
                    label,
                    source,
                    "",
                    None,
                    (),
                    None,
                    None,
                    False,
                    form_owners.get(form),
                    "",
                    "",
                )
            )
            continue
        opaque = (
            "cross_origin_frame"
            if frame_kind == "cross"
            else "closed_shadow_root"
            if shadow == "closed"
            else ""
        )
        if control is not None:
            label, source = element_label(index, doc, hidden_ok=True, controls=control_rows)
        elif not label and not opaque:
            label, source = _unnamed_label(index, doc, control_rows)
        elif source == "placeholder":
            label, source = _placeholder_or_row_label(index, doc, control_rows, label)
        sensitive = (
            bool(is_password)
            or (
                (tag in FIELD_TAGS or editable)
                and is_sensitive_field(
                    label,
                    is_password,
                    tag,
                    editable,
                    autocomplete,
                    name,
                    element_id,
                    placeholder,
                    input_type,
                )
            )
        )  # only for fields: is_sensitive_field is False for the rest (most listed elements)
        value: str | bool | list[str] | None
        options: tuple[tuple[str, str, bool, bool], ...] = ()
        if tag == "select":
            options = tuple(
                (str(o[0]), str(o[1]), bool(o[2]), bool(o[3])) for o in options_fact or ()
            )
            selected_values = [o[0] for o in options if o[2]]
            value = selected_values if multiple else (selected_values[0] if selected_values else "")
        elif tag in ("input", "textarea") and input_type not in (
            "checkbox",
            "radio",
            "submit",
            "button",
            "reset",
            "image",
        ):
            value = current_value
        elif editable:
            value = doc.text_content(index, limit=TEXT_LIMIT)
        elif aria_value and role in ("slider", "spinbutton", "progressbar", "scrollbar", "meter"):
            value = aria_value
        else:
            value = None
        if (is_private or (sensitive and not release_sensitive)) and value not in (None, ""):
            # SPEC P5: a sensitive value is withheld unless the authorization center released it;
            # a page owner's data-mao-private field never is.
            value = None
        checked: bool | str | None = None
        if checked_state >= 0:
            checked = "mixed" if checked_state == 2 else bool(checked_state)
        elif aria_checked in ("true", "false", "mixed"):
            checked = "mixed" if aria_checked == "mixed" else aria_checked == "true"
        elif class_state and role in _CHECKABLE:
            checked = "checked" in class_state.split()  # the state its class names say
        elif role in ("checkbox", "switch", "radio", "menuitemcheckbox", "menuitemradio"):
            checked = False  # ARIA: an absent aria-checked on these roles means false
        text = ""
        if (
            tag not in ("input", "select", "textarea")
            and not (sensitive or is_private)
            and not opaque
            and source not in ("content", "text")
        ):
            # A name from content is the text already; other names get the text beside them.
            text = doc.text_content(index, limit=TEXT_LIMIT)
        if opaque:
            text = (
                "cross-origin frame: its content cannot be read"
                if opaque == "cross_origin_frame"
                else "closed shadow root: its content cannot be read"
            )
        expanded = _BOOL_ATTR.get(aria_expanded)
        parent = parents[index]
        if expanded is None and tag == "summary" and parent >= 0 and all_tags[parent] == "details":
            expanded = bool(opened[parent])
        decided.append(
            (
                "opaque" if opaque else kind_of(role, tag),  # kind
                (input_type if tag in ("input", "button") else "")
                or ("text" if tag == "input" else ""),  # type
                label,  # label
                source,  # label_source
                text if text != label else "",  # text
                value,  # value
                options,  # options
                checked,  # checked
                expanded,  # expanded
                sensitive,  # sensitive
                form_owners.get(form),  # form
                accessible_description(doc, index) if describedby else "",  # description
                opaque,  # opaque
            )
        )
    (
        kinds,
        types,
        labels,
        sources,
        texts,
        values,
        option_lists,
        checked_states,
        expanded_states,
        sensitive_flags,
        owners,
        descriptions,
        opaques,
    ) = zip(*decided, strict=True)
    count = len(chosen)
    # Rects (x, y, width, height) rounded to 0.1 px. round(v, 1) is correctly rounded through
    # a decimal conversion, four per element; rects repeat the same few values (columns,
    # widths, heights), so each distinct one is rounded once and the rest is looked up in C
    # (docs/performance.md). A zero is not in the table (-0.0 and 0.0 are one key, and round
    # keeps the sign): it stands for itself, as round would return it.
    lefts, tops, rights, bottoms = zip(*boxes, strict=True)
    widths, heights = list(map(sub, rights, lefts)), list(map(sub, bottoms, tops))
    rounding = {value: round(value, 1) for value in {*lefts, *tops, *widths, *heights} if value}
    get = rounding.get
    rects = zip(
        map(get, lefts, lefts),
        map(get, tops, tops),
        map(get, widths, widths),
        map(get, heights, heights),
        strict=True,
    )
    frame_label = dict(enumerate(frame_labels))
    aria_invalid, user_invalid = pick(c[F.ARIA_INVALID]), pick(c[F.USER_INVALID])
    # Every field of the elements, a column each (by name, so the model may add or move fields).
    fields: dict[str, Iterable[Any]] = {
        "index": targets,
        "tag": tags,
        "kind": kinds,
        "role": listed_roles,
        "type": types,
        "label": labels,
        "label_source": sources,
        "text": texts,
        "value": values,
        "options": option_lists,
        "visible": repeat(True, count),
        "in_viewport": in_views,
        "disabled": _state(pick(c[F.DISABLED]), pick(c[F.ARIA_DISABLED]), count),
        "readonly": _state(pick(c[F.READONLY]), pick(c[F.ARIA_READONLY]), count),
        "required": _state(pick(c[F.REQUIRED]), pick(c[F.ARIA_REQUIRED]), count),
        "rect": rects,
        "checked": checked_states,
        "selected": _looked_up(_BOOL_ATTR, pick(c[F.ARIA_SELECTED]), count),
        "expanded": expanded_states,
        "placeholder": placeholders,
        "href": pick(c[F.HREF]),
        "sensitive": sensitive_flags,
        "private": pick(private),
        "form": owners,
        "key": keys_of(tags, roles, pick, c),
        "frame": map(frame_label.get, pick(geometry.frame_of), repeat("main")),
        "invalid": (
            map(or_, map(_VALID.get, aria_invalid, repeat(True)), map(bool, user_invalid))
            if any(aria_invalid) or any(user_invalid) else repeat(False, count)
        ),
        "pressed": _looked_up(_PRESSED, pick(c[F.ARIA_PRESSED]), count),
        "description": descriptions,
        "opaque": opaques,
        "control": controls,
        "name_from": map(NAME_FROM.get, sources, repeat("")),
        "new": map(fresh.__getitem__, targets) if fresh is not None else repeat(False, count),
    }
    columns = [fields.pop(name) for name in Element._fields]
    if fields:
        raise ValueError(f"not fields of Element: {sorted(fields)}")
    return list(map(Element._make, zip(*columns, strict=True)))


def _state(facts: Sequence[Any], attributes: Sequence[str], count: int) -> Iterable[bool]:
    """Per element, a boolean state (disabled, readonly, required): its DOM fact or its
    aria-* attribute "true". Most pages set neither on any listed element: then one False
    repeated, not three C calls per element."""
    if True not in facts and "true" not in attributes:
        return repeat(False, count)
    return map(or_, map(bool, facts), map(eq, attributes, repeat("true")))


def _looked_up(values: dict[str, Any], attributes: Sequence[str], count: int) -> Iterable[Any]:
    """``values.get`` of each element's ARIA attribute; one None repeated when no element
    has the attribute (the tables hold no value for "")."""
    return map(values.get, attributes) if any(attributes) else repeat(None, count)


# The label sources that are not the accessible name, as the snapshot reports them
# (``nameFrom``): the element's own text, text beside it, the one field inside it, its place
# as a spin button's stepper (dom/names.py). An agent cannot find such an element by role and name.
NAME_FROM = {"text": "text", "nearby": "nearby", "inner": "inner", "stepper": "stepper"}


def element_label(
    index: int, doc: DocumentIndex, *, hidden_ok: bool = False, controls: ControlRows | None = None,
) -> tuple[str, str]:
    """SPEC S3: the accessible name; for an unnamed clickable element its text; then the
    text structurally tied to it (``_unnamed_label``). ``controls``: the walk's interactive
    rows when the caller has them (a scan), else found here."""
    named = accessible_name(doc, index, hidden_ok=hidden_ok)
    if named[1] == "placeholder":
        return _placeholder_or_row_label(index, doc, controls, named[0])
    return named if named[0] else _unnamed_label(index, doc, controls)


def _placeholder_or_row_label(
    index: int, doc: DocumentIndex, controls: ControlRows | None, placeholder: str
) -> tuple[str, str]:
    """A field named only by its placeholder (the last accname step) keeps that name
    (HTML-AAM: the placeholder comes before any text around the field, such as a heading
    above it), unless its form row has a ``<label>`` element meant for it that is not tied
    to it: "City" of a library's label column, not its "Please select" hint, which stays the
    element's ``placeholder``."""
    label = container_label(
        index,
        doc,
        controls if controls is not None else control_rows(doc),
        label_elements_only=True,
    )
    return (label, "nearby") if label else (placeholder, "placeholder")


def _unnamed_label(index: int, doc: DocumentIndex, controls: ControlRows | None) -> tuple[str, str]:
    """``element_label`` of an element without an accessible name: its text (not for fields),
    a spin button's stepper name, the name of the native control it is drawn in place of,
    the name of the one field inside it (what the widget itself says), the text right before
    it, the label text of its field container (dom/names.py), in that order."""
    if doc.tags[index] not in ("input", "select", "textarea"):
        label = doc.text_content(index, limit=TEXT_LIMIT)
        if label:
            return label, "text"
    if doc.parents[index] < 0:
        return "", ""
    if controls is None:
        controls = control_rows(doc)
    label = stepper_label(
        index, doc, controls, lambda row: element_label(row, doc, controls=controls)[0]
    )
    if label:
        return label, "stepper"
    label = replaced_control_label(index, doc, controls)
    if label:
        return label, "nearby"
    label = inner_field_label(index, doc, controls)
    if label:
        return label, "inner"
    label = nearby_text(index, doc)
    if label:
        return label, "nearby"
    label = container_label(index, doc, controls) or position_label(index, doc, controls)
    return (label, "nearby") if label else ("", "")


def control_rows(doc: DocumentIndex) -> ControlRows:
    """The interactive rows of a walk (as the scan finds its candidates), for the label
    fallbacks of an element named outside a scan (a few rows: its subtree and labels)."""
    roles = doc.columns[F.ROLE]
    rows = doc.rows
    return ControlRows(
        [
            i
            for i in range(len(rows))
            if is_interactive(i, explicit_role(rows[i]) if roles[i] else "", doc)
        ]
    )


# -- outline for the text form ---------------------------------------------------------------


def _outline(
    doc: DocumentIndex,
    geometry: Geometry,
    listed: dict[int, int],
    in_views: list[bool],
    ignored: list[bool],
    inert: list[bool],
    include_offscreen: bool,
) -> list[OutlineNode]:
    """Containers, headings, short text lines and elements in document order, indented.
    ``listed`` maps the listed rows to their positions in the scan's elements, ``in_views``
    holds whether each of those is in the viewport.

    Containers are kept only when something inside them is; text inside a listed element or
    a heading is already in its name and is not repeated.
    """
    # Hot loops (every row of a whole-page scan): the columns and methods in locals.
    columns, parents, tags, displays, text_parts = (
        doc.columns,
        doc.parents,
        doc.tags,
        doc.displays,
        doc.text_parts,
    )
    widths, aria_labels, labelledby = (
        columns[F.WIDTH],
        columns[F.ARIA_LABEL],
        columns[F.ARIA_LABELLEDBY],
    )
    count = len(tags)
    end = doc.end
    holds_listed = [False] * count
    for start in listed:  # up from each listed row, until an ancestor already marked
        index = start
        while index >= 0 and not holds_listed[index]:
            holds_listed[index] = True
            index = parents[index]
    nodes: list[OutlineNode] = []
    # Open containers: (end row, position of its node in `nodes`, depth of its children).
    stack: list[tuple[int, int]] = []
    consumed_until = -1  # rows up to here had their text taken by a line above them
    index = 0
    hidden, aria_hidden, children = doc.hidden, doc.aria_hidden, doc.children
    roles, visible, in_view = doc.roles, geometry.visible, geometry.in_view
    # Rows not shown for any of four reasons, in one list: most pages have none of all but
    # the hidden rows, and then no list is built.
    flag_lists = [flags for flags in (hidden, aria_hidden, ignored, inert) if True in flags] or [
        hidden
    ]
    excluded = flag_lists[0]
    for flags in flag_lists[1:]:
        excluded = list(map(or_, excluded, flags))
    owned = bool(doc.owner_of)
    containers: list[int] = []  # positions of the container nodes
    while index < count:
        while stack and index > stack[-1][0]:
            stack.pop()
        if (
            excluded[index]
            or tags[index] in _NO_OUTLINE_TAGS
            or not holds_listed[index]
            and (index <= consumed_until or widths[index] <= 0 and displays[index] != "contents")
        ):
            # Not shown, or its text is already on a line above (or it has no box) and
            # nothing listed is inside.
            index = end[index] + 1
            continue
        position = listed.get(index)
        if position is not None:
            nodes.append(
                OutlineNode("element", len(stack), "", "", position, in_views[position], 0)
            )
            last = end[index]
            if last == index:  # a leaf (most listed elements): on to the next row
                consumed_until = max(consumed_until, index)
                index += 1
                continue
            stack.append((last, len(nodes) - 1))
            consumed_until = max(consumed_until, last)
            # Its subtree is in its name: on to the next row holding something listed in it.
            index = _next_holding(holds_listed, index, last)
            continue
        role = roles[index]
        if role == "heading" and index > consumed_until:
            if visible(index):
                view = in_view(index)
                if include_offscreen or view:
                    name = accessible_name(doc, index)[0]
                    if name:
                        level = heading_level(tags[index], columns[F.ARIA_LEVEL][index])
                        nodes.append(
                            OutlineNode(
                                "heading",
                                len(stack),
                                "heading",
                                _clip_text(name, view),
                                -1,
                                view,
                                level,
                            )
                        )
                        stack.append((end[index], len(nodes) - 1))
            consumed_until = max(consumed_until, end[index])
            index = _next_holding(holds_listed, index, end[index])
            continue
        if role in CONTAINER_ROLES and (
            role not in _NAMED_ONLY_CONTAINERS
            or aria_labels[index]
            or labelledby[index]
            or tags[index] == "fieldset"
        ):
            named = role not in ("list", "table", "grid") or aria_labels[index] or labelledby[index]
            name = accessible_name(doc, index)[0] if named else ""
            containers.append(len(nodes))
            nodes.append(
                OutlineNode(
                    "container", len(stack), role, _clip_text(name, True), -1, in_view(index), 0
                )
            )
            stack.append((end[index], len(nodes) - 1))
            index += 1
            continue
        if index <= consumed_until or displays[index] in _INLINE_DISPLAYS:
            index += 1
            continue
        parts, kids = text_parts[index], children[index]
        first = (
            kids[0] if kids and not owned and (not parts or parts[0] > 0) else -1
        )  # the first content, an element
        if (
            (parts or kids)
            and not (
                # The block's content starts with a listed element, a heading or a block (a list
                # item holding a link, a cell holding a button, a table body): _block_text would
                # stop there at once with no text, so the block gets no line and is not asked for
                # (hundreds of rows on a whole page). A row's cell is read, though.
                first >= 0
                and not hidden[first]
                and not aria_hidden[first]
                and tags[first] not in _NO_TEXT_TAGS
                and (
                    first in listed
                    or not (
                        displays[first] == "table-cell"
                        and (displays[index] == "table-row" or role == "row")
                    )
                    and (displays[first] not in _INLINE_DISPLAYS or roles[first] == "heading")
                )
            )
            and visible(index)
        ):
            view = in_view(index)
            if include_offscreen or view:
                text, last = _block_text(doc, index, listed, end, holds_listed)
                if text:
                    nodes.append(
                        OutlineNode("text", len(stack), "", _clip_text(text, view), -1, view, 0)
                    )
                    consumed_until = max(consumed_until, last)
                    # The rows it read (up to `last`, all inside it): on to the next one
                    # holding something listed (the rows before it would be passed over).
                    index = _next_holding(holds_listed, index, last)
                    continue
        index += 1
    # Drop containers that ended up empty (their children are the nodes deeper right after).
    last = len(nodes) - 1
    empty = {
        position
        for position in containers
        if position == last or nodes[position + 1].depth <= nodes[position].depth
    }
    return (
        [node for position, node in enumerate(nodes) if position not in empty] if empty else nodes
    )


def _next_holding(holds_listed: list[bool], index: int, last: int) -> int:
    """Where the outline goes on after a row whose rows up to ``last`` are consumed (its
    name or its line has their text): the first of them holding a listed element (found in
    C), else ``last + 1``; it would pass over the others one by one."""
    if index == last or not holds_listed[index]:
        return last + 1  # no rows below it, or nothing listed among them
    try:
        return holds_listed.index(True, index + 1, last + 1)
    except ValueError:  # nothing listed below the row itself
        return last + 1


def _clip_text(text: str, in_viewport: bool) -> str:
    limit = TEXT_LINE_LIMIT if in_viewport else OFFSCREEN_TEXT_LIMIT
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _block_text(
    doc: DocumentIndex, index: int, listed: dict[int, int], end: list[int], holds_listed: list[bool]
) -> tuple[str, int]:
    """Text of a block made of its text nodes and inline descendants (table rows: their
    cells, joined with ' | '). Returns the text and the last row consumed; stops before a
    nested block, heading or listed element, which get their own lines."""
    out: list[str] = []
    last = index
    tags, displays = doc.tags, doc.displays
    hidden, aria_hidden, text_content = doc.hidden, doc.aria_hidden, doc.text_content
    row_like = displays[index] == "table-row" or doc.roles[index] == "row"
    for item in doc.content(index):
        if isinstance(item, str):
            out.append(item)
            continue
        if hidden[item] or aria_hidden[item] or tags[item] in _NO_TEXT_TAGS:
            last = end[item]
            continue
        display = displays[item]
        if row_like and display == "table-cell" and item not in listed:
            # A cell holding a control is read through the control's own line.
            cell = "" if holds_listed[item] else text_content(item, limit=TEXT_LINE_LIMIT)
            if out and cell:
                out.append(" | ")
            out.append(cell)
            last = end[item]
            continue
        if display not in _INLINE_DISPLAYS or item in listed or doc.roles[item] == "heading":
            break
        out.append(text_content(item, limit=TEXT_LINE_LIMIT) if not holds_listed[item] else "")
        last = end[item]
    return squash("".join(out))[:TEXT_LINE_LIMIT * 2], last


def is_fillable(row: list[Any]) -> bool:
    tag = row[F.TAG]
    if tag == "textarea" or row[F.CONTENTEDITABLE]:
        return True
    if tag == "input":
        return row[F.TYPE] not in _NON_FILLABLE_INPUTS and row[F.TYPE] != "hidden"
    return tag == "select"
