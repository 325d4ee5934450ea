"""The page scanner: which elements an agent may see and act on (SPEC S1-S4, S6).

Input is the fact rows of one ``collectDocument`` walk (``mao_page.facts``): the top
document with its open shadow roots and same-origin iframes. Every decision is made here in
Python: interactivity, collapse, visibility and clipping, the viewport, placeholders for what
cannot be read (cross-origin frames, closed shadow roots), and the outline that gives the
text form its structure (headings, text lines, containers).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import compress
from typing import Any, NamedTuple

from . import facts as F
from .names import DocumentIndex, ascending_once, nearby_text, squash
from .roles import WIDGET_ROLES, explicit_role, heading_level, kind_of
from .sensitive import is_sensitive

_NATIVE_INTERACTIVE = frozenset({"button", "select", "textarea", "summary"})
_NATIVE_CONTROLS = frozenset({"input", "select", "textarea", "button", "a", "summary"})
# Tags is_interactive may accept by tag alone (with a type or href test).
_MAYBE_INTERACTIVE_TAGS = _NATIVE_INTERACTIVE | {"input", "a", "area"}
_SKIPPED_TAGS = frozenset({"html", "head", "body", "script", "style", "template", "noscript", "option", "optgroup", "label"})
# range and color take a value through the native setter like text does (SPEC A1 fill).
_NON_FILLABLE_INPUTS = frozenset({"checkbox", "radio", "button", "submit", "reset", "image", "file"})
_CLIPPING = frozenset({"hidden", "clip"})
_SCROLLING = frozenset({"auto", "scroll"})
# Containers the text form indents (forms, dialogs, lists, tables, landmarks; seed 000 §1.1).
CONTAINER_ROLES = frozenset(
    {
        "form", "dialog", "alertdialog", "list", "table", "grid", "treegrid", "navigation", "main",
        "banner", "contentinfo", "complementary", "search", "region", "radiogroup", "tablist",
        "menu", "menubar", "toolbar", "tree", "group", "listbox",
    }
)
_NAMED_ONLY_CONTAINERS = frozenset({"group", "region"})
_INLINE_DISPLAYS = frozenset({"inline", "contents"})
_NO_OUTLINE_TAGS = frozenset({"head", "script", "style", "template", "noscript"})
_NO_TEXT_TAGS = frozenset({"script", "style", "template", "noscript"})
TEXT_LIMIT = 120
TEXT_LINE_LIMIT = 100
OFFSCREEN_TEXT_LIMIT = 40

Box = tuple[float, float, float, float]  # x0, y0, x1, y1 in the top viewport


@dataclass(frozen=True, slots=True)
class Viewport:
    width: float
    height: float
    scroll_x: float
    scroll_y: float
    device_pixel_ratio: float = 1.0


class ScannedElement(NamedTuple):
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
    frame: str = "main"
    invalid: bool = False
    pressed: bool | str | None = None
    description: str = ""
    opaque: str = ""  # "cross_origin_frame" / "closed_shadow_root": a placeholder
    control: int | None = None  # the real (hidden) input behind a label, for its state


class OutlineNode(NamedTuple):
    """One line of the text form: a container, heading, text line or element. A NamedTuple
    like ScannedElement: a whole-page outline makes thousands, and a frozen dataclass's
    ``__init__`` cost ~2 us each in CPython, ``_make`` ~0.3."""

    kind: str  # "container", "heading", "text", "element"
    depth: int
    role: str = ""
    name: str = ""
    element: int = -1  # position in Scan.elements for kind "element"
    in_viewport: bool = True
    level: int = 0


@dataclass(slots=True)
class Scan:
    elements: list[ScannedElement]
    outline: list[OutlineNode] = field(default_factory=list)
    frames: list[str] = field(default_factory=list)


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

    __slots__ = ("_rows", "_hidden", "_transparent", "_clip_in", "frame_of", "frame_offsets", "_top", "_visible", "_in_view")

    def __init__(self, doc: DocumentIndex, scopes: list[list[Any]], frames: list[list[Any]], viewport: Viewport) -> None:
        rows = self._rows = doc.rows
        self._hidden = doc.hidden
        count = len(rows)
        scope_frame = [scope[F.SCOPE_FRAME] for scope in scopes] or [0]
        offsets: list[tuple[float, float]] = []
        for frame in frames:
            owner = frame[F.FRAME_OWNER]
            if owner < 0:
                offsets.append((0.0, 0.0))
                continue
            px, py = offsets[scope_frame[rows[owner][F.SCOPE]]]
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
        columns, indexes = doc.columns, range(count)
        frame_of = [0] * count
        for scope, frame in enumerate(scope_frame):
            if frame:
                for index in F.rows_with(columns[F.SCOPE], scope):
                    frame_of[index] = frame
        opacity = columns[F.OPACITY]
        transparent = doc.subtree_flags(
            list(compress(indexes, map((0.0).__ge__, opacity))) if count and min(opacity) <= 0 else []
        )
        # Clips change only below an element with overflow other than visible and inside a
        # frame: elsewhere every row gets and hands on no clip at all, so only those subtrees
        # are visited (on most pages a small part of the rows).
        tags = columns[F.TAG]
        clipping = [i for i in F.rows_without(columns[F.OVERFLOW], "visible") if tags[i] not in ("html", "body")]
        spans = ascending_once([(seed, doc.end[seed]) for seed in clipping + F.rows_with(columns[F.FRAME], "same")])
        PARENT, POSITION, FRAME, OVERFLOW = F.PARENT, F.POSITION, F.FRAME, F.OVERFLOW
        for span in spans:
            for index in span:
                row = rows[index]
                frame = frame_of[index]
                parent = row[PARENT]
                position = row[POSITION]
                if parent < 0:
                    inherited = no_clip
                else:
                    if position == "absolute":
                        inherited = absolute[parent]
                    elif position == "fixed":
                        inherited = no_clip if frame == 0 else flow[parent]
                    else:
                        inherited = flow[parent]
                    if frame and rows[parent][FRAME] == "same":
                        fx, fy = offsets[frame]
                        box = (fx, fy, fx + frames[frame][F.FRAME_WIDTH], fy + frames[frame][F.FRAME_HEIGHT])
                        inherited = (inherited[0], _intersect(inherited[1], box))
                clip_in[index] = inherited
                own = inherited
                overflow = row[OVERFLOW]
                if overflow != "visible" and row[F.TAG] not in ("html", "body"):
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
        row = self._rows[index]
        ox, oy = self.frame_offsets[self.frame_of[index] if frame is None else frame]
        x0 = row[F.X] + ox
        y0 = row[F.Y] + oy
        return (x0, y0, x0 + row[F.WIDTH], y0 + row[F.HEIGHT])

    def visible(self, index: int) -> bool:
        """Rendered, not transparent, has a size, and not clipped away by an ancestor."""
        known = self._visible[index]
        if known is None:
            row = self._rows[index]
            clip = self._clip_in[index][0]
            known = (
                not self._hidden[index] and (not self._transparent[index] or self._drawn_by_wrapper(index))
                and row[F.WIDTH] > 0 and row[F.HEIGHT] > 0 and (clip is None or _overlaps(self.box(index), clip))
            )
            self._visible[index] = known
        return known

    def _drawn_by_wrapper(self, index: int) -> bool:
        """Component libraries (antd, Element Plus, ...) keep the real input transparent and
        draw it with a close wrapper: the field is what users see there."""
        rows = self._rows
        if rows[index][F.TAG] not in ("input", "select", "textarea"):
            return False
        ancestor = rows[index][F.PARENT]
        for _ in range(3):
            if ancestor < 0 or self._hidden[ancestor]:
                return False
            row = rows[ancestor]
            if not self._transparent[ancestor] and row[F.WIDTH] > 0 and row[F.HEIGHT] > 0:
                return True
            ancestor = row[F.PARENT]
        return False

    def in_view(self, index: int) -> bool:
        """Visible and inside the top viewport and every scrolling ancestor's box."""
        known = self._in_view[index]
        if known is None:
            if self.visible(index):
                box = self.box(index)
                known = _overlaps(box, self._top) and _overlaps(box, self._clip_in[index][1])
            else:
                known = False
            self._in_view[index] = known
        return known


def _inside_control(rows: list[list[Any]], index: int, known: dict[int, bool]) -> bool:
    """Whether an ancestor of the row is a native control (an <a> only with href).
    ``known`` remembers the answer for every ancestor on the way (for them: it or one above)."""
    path: list[int] = []
    node = rows[index][F.PARENT]
    found = False
    while node >= 0:
        if node in known:
            found = known[node]
            break
        path.append(node)
        row = rows[node]
        if row[F.TAG] in _NATIVE_CONTROLS and (row[F.TAG] != "a" or bool(row[F.HREF])):
            found = True
            break
        node = row[F.PARENT]
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
) -> list[ScannedElement]:
    """The elements an agent may act on, in document order (pass the walk's ``scopes`` and
    ``frames`` tables so elements in frames get top-viewport rects and frame labels)."""
    return scan_page(rows, viewport, include_offscreen=include_offscreen, scopes=scopes, frames=frames).elements


def scan_page(
    rows: list[list[Any]],
    viewport: Viewport,
    *,
    include_offscreen: bool = False,
    scopes: list[list[Any]] | None = None,
    frames: list[list[Any]] | None = None,
    outline: bool = False,
    release_sensitive: bool = False,
) -> Scan:
    """``scan`` plus, with ``outline``, the containers, headings and text lines of the text form.

    ``release_sensitive`` keeps the values of sensitive fields (the authorization center
    decided the level allows it, SPEC P5); private fields' values are withheld regardless."""
    doc = DocumentIndex(rows)
    scopes = scopes or [["document", 0, -1]]
    frames = frames or [[-1, "", 0, 0, viewport.width, viewport.height]]
    geometry = Geometry(doc, scopes, frames, viewport)
    count = len(rows)
    indexes = range(count)
    # Whole columns are read at C speed (map, compress); Python then visits only the rows
    # they point at, not every row of the page (issue 3).
    columns = doc.columns
    ignored = doc.subtree_flags(F.rows_with(columns[F.PRIVACY], "ignore"))
    private = doc.subtree_flags(F.rows_with(columns[F.PRIVACY], "private"))
    inert = doc.subtree_flags(F.rows_with(columns[F.INERT], True))
    # The rows is_interactive can accept, and the placeholders: an interactive tag, or a
    # role, tabindex, contenteditable, pointer cursor, cross-origin frame or closed shadow
    # root. For every other row is_interactive returns False by its first tests.
    # (Interactive tags match many rows: one map over the column, all in C, beats an index()
    # call per match.)
    possible = set(compress(indexes, map(_MAYBE_INTERACTIVE_TAGS.__contains__, columns[F.TAG])))
    for column in (F.ROLE, F.TABINDEX, F.CONTENTEDITABLE):
        possible.update(compress(indexes, columns[column]))
    for column, value in ((F.CURSOR, "pointer"), (F.FRAME, "cross"), (F.SHADOW, "closed")):
        possible.update(F.rows_with(columns[column], value))
    candidates: list[int] = []
    in_control: dict[int, bool] = {}
    TAG, FRAME, SHADOW, ROLE, CONTENTEDITABLE = F.TAG, F.FRAME, F.SHADOW, F.ROLE, F.CONTENTEDITABLE
    for index in sorted(possible):
        if ignored[index] or inert[index]:
            continue
        row = rows[index]
        if row[FRAME] == "cross" or row[SHADOW] == "closed":
            candidates.append(index)
            continue
        # Only an explicit role can make a non-native element a widget; implicit roles of
        # the native controls are handled by tag in is_interactive.
        role = explicit_role(row) if row[ROLE] else ""
        if is_interactive(index, row, role, doc):
            # A focusable or pointer-only element inside a native control is part of it.
            if (
                row[TAG] not in _NATIVE_CONTROLS and not explicit_role(row) and not row[CONTENTEDITABLE]
                and _inside_control(rows, index, in_control)
            ):
                continue
            candidates.append(index)

    # SPEC S1: a clickable wrapper around exactly one real control collapses into it.
    native = {i for i in candidates if rows[i][F.TAG] in ("input", "select", "textarea", "button", "a")}
    # The wrappers that may collapse: no native tag, no role of their own, no placeholder.
    wrappers = {
        i for i in candidates
        if i not in native and not explicit_role(rows[i]) and not rows[i][F.FRAME] and rows[i][F.SHADOW] != "closed"
    }
    wrapped_count = [0] * count
    if wrappers:
        # wrapped_count[i]: native candidates strictly inside row i, summed up the tree in one
        # backward pass (rows are in preorder: every parent comes before its children).
        parents = doc.parents
        for index in range(count - 1, 0, -1):
            inside = wrapped_count[index] + (index in native)
            if inside:
                parent = parents[index]
                if parent >= 0:
                    wrapped_count[parent] += inside
    frame_labels = _frame_labels(doc, frames, scopes)
    elements: list[ScannedElement] = []
    listed: dict[int, int] = {}
    for index in candidates:
        row = rows[index]
        if index in wrappers and wrapped_count[index] == 1:
            continue
        target = index
        control: int | None = None
        if not geometry.visible(index) and row[F.TAG] == "input" and row[F.TYPE] in ("checkbox", "radio"):
            # A custom checkbox: the real input is hidden and its label is what users click.
            shown = [label for label in doc.labels_of(index) if geometry.visible(label)]
            if not shown:
                continue
            target, control = shown[0], index
        if not geometry.visible(target):
            continue
        in_viewport = geometry.in_view(target)
        if not in_viewport and not include_offscreen:
            continue
        element = _describe(index, doc, geometry, target, control, frame_labels, private[index], release_sensitive, in_viewport)
        listed[target] = len(elements)
        elements.append(element)
    result = Scan(elements=elements, frames=frame_labels)
    if outline:
        result.outline = _outline(doc, geometry, listed, ignored, inert, include_offscreen)
    return result


def _frame_labels(doc: DocumentIndex, frames: list[list[Any]], scopes: list[list[Any]]) -> list[str]:
    labels = ["main"]
    for number, frame in enumerate(frames[1:], start=1):
        owner = frame[F.FRAME_OWNER]
        name = doc.accessible_name(owner)[0] if owner >= 0 else ""
        labels.append(f"frame {number}" + (f": {name[:60]}" if name else ""))
    return labels


def _describe(
    index: int, doc: DocumentIndex, geometry: Geometry, target: int, control: int | None, frame_labels: list[str],
    private: bool, release_sensitive: bool, in_viewport: bool,
) -> ScannedElement:
    row = doc.rows[index]
    role = doc.roles[index] or "generic"
    tag = row[F.TAG]
    opaque = "cross_origin_frame" if row[F.FRAME] == "cross" else "closed_shadow_root" if row[F.SHADOW] == "closed" else ""
    label, source = element_label(index, doc, hidden_ok=control is not None) if not opaque else doc.accessible_name(index)
    sensitive = is_sensitive(row, label)
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
    elif row[F.ARIA_VALUE] and role in ("slider", "spinbutton", "progressbar", "scrollbar", "meter"):
        value = row[F.ARIA_VALUE]
    else:
        value = None
    if (private or (sensitive and not release_sensitive)) and value not in (None, ""):
        # SPEC P5: a sensitive value is withheld unless the authorization center released it;
        # a page owner's data-mao-private field never is.
        value = None
    checked: bool | str | None = None
    if row[F.CHECKED] >= 0:
        checked = "mixed" if row[F.CHECKED] == 2 else bool(row[F.CHECKED])
    elif row[F.ARIA_CHECKED] in ("true", "false", "mixed"):
        checked = "mixed" if row[F.ARIA_CHECKED] == "mixed" else row[F.ARIA_CHECKED] == "true"
    elif role in ("checkbox", "switch", "radio", "menuitemcheckbox", "menuitemradio"):
        checked = False  # ARIA: an absent aria-checked on these roles means false
    text = ""
    if tag not in ("input", "select", "textarea") and not (sensitive or private) and not opaque and source not in ("content", "text"):
        # A name from content is the text already; other names get the text beside them.
        text = doc.text_content(index, limit=TEXT_LIMIT)
    if opaque:
        text = "cross-origin frame: its content cannot be read" if opaque == "cross_origin_frame" else "closed shadow root: its content cannot be read"
    expanded = _BOOL_ATTR.get(row[F.ARIA_EXPANDED])
    if expanded is None and tag == "summary" and row[F.PARENT] >= 0 and doc.rows[row[F.PARENT]][F.TAG] == "details":
        expanded = bool(doc.rows[row[F.PARENT]][F.OPEN])
    selected = _BOOL_ATTR.get(row[F.ARIA_SELECTED])
    pressed: bool | str | None = "mixed" if row[F.ARIA_PRESSED] == "mixed" else _BOOL_ATTR.get(row[F.ARIA_PRESSED])
    input_type = row[F.TYPE] if tag in ("input", "button") else ""
    x0, y0, x1, y1 = geometry.box(target)
    # Positional, in field order: a keyword call of the NamedTuple cost ~3 us per element
    # (thousands on a whole page), _make a tenth of that (issue 3).
    return ScannedElement._make((
        target,  # index
        tag,  # tag
        "opaque" if opaque else kind_of(role, row),  # kind
        role,  # role
        input_type or ("text" if tag == "input" else ""),  # type
        label,  # label
        source,  # label_source
        text if text != label else "",  # text
        value,  # value
        options,  # options
        True,  # visible
        in_viewport,  # in_viewport
        bool(row[F.DISABLED]) or row[F.ARIA_DISABLED] == "true",  # disabled
        bool(row[F.READONLY]) or row[F.ARIA_READONLY] == "true",  # readonly
        bool(row[F.REQUIRED]) or row[F.ARIA_REQUIRED] == "true",  # required
        (round(x0, 1), round(y0, 1), round(x1 - x0, 1), round(y1 - y0, 1)),  # rect
        checked,  # checked
        selected,  # selected
        expanded,  # expanded
        row[F.PLACEHOLDER],  # placeholder
        row[F.HREF],  # href
        sensitive,  # sensitive
        private,  # private
        _form_owner(row, doc),  # form
        key_of(row, role),  # key
        frame_labels[geometry.frame_of[index]] if geometry.frame_of[index] < len(frame_labels) else "main",  # frame
        row[F.ARIA_INVALID] not in ("", "false") or bool(row[F.USER_INVALID]),  # invalid
        pressed,  # pressed
        doc.description(index) if row[F.ARIA_DESCRIBEDBY] else "",  # description
        opaque,  # opaque
        control,  # control
    ))


def element_label(index: int, doc: DocumentIndex, *, hidden_ok: bool = False) -> tuple[str, str]:
    """SPEC S3: the accessible name; for an unnamed clickable element its text; then the
    nearby text (source "nearby")."""
    label, source = doc.accessible_name(index, hidden_ok=hidden_ok)
    if label:
        return label, source
    if doc.rows[index][F.TAG] not in ("input", "select", "textarea"):
        label = doc.text_content(index, limit=TEXT_LIMIT)
        if label:
            return label, "text"
    if doc.rows[index][F.PARENT] < 0:
        return "", ""
    return nearby_text(index, doc), "nearby"


def _form_owner(row: list[Any], doc: DocumentIndex) -> tuple[str, str, str, str] | None:
    form = row[F.FORM]
    if form < 0:
        return None
    form_row = doc.rows[form]
    return (form_row[F.ID], form_row[F.NAME], form_row[F.FORM_ACTION], form_row[F.FORM_METHOD])


# -- outline for the text form ---------------------------------------------------------------


def _outline(
    doc: DocumentIndex, geometry: Geometry, listed: dict[int, int], ignored: list[bool], inert: list[bool], include_offscreen: bool
) -> list[OutlineNode]:
    """Containers, headings, short text lines and elements in document order, indented.

    Containers are kept only when something inside them is; text inside a listed element or
    a heading is already in its name and is not repeated.
    """
    rows = doc.rows
    count = len(rows)
    # Hot loops (every row of a whole-page scan): columns and methods in locals.
    PARENT, TAG, WIDTH, DISPLAY, ARIA_LABEL, ARIA_LABELLEDBY, TEXT_PARTS = (
        F.PARENT, F.TAG, F.WIDTH, F.DISPLAY, F.ARIA_LABEL, F.ARIA_LABELLEDBY, F.TEXT_PARTS
    )
    end = doc.end
    holds_listed = [False] * count
    for start in listed:  # up from each listed row, until an ancestor already marked
        index = start
        while index >= 0 and not holds_listed[index]:
            holds_listed[index] = True
            index = rows[index][PARENT]
    nodes: list[OutlineNode] = []
    # Open containers: (end row, position of its node in `nodes`, depth of its children).
    stack: list[tuple[int, int]] = []
    consumed_until = -1  # rows up to here had their text taken by a line above them
    index = 0
    hidden, aria_hidden, children = doc.hidden, doc.aria_hidden, doc.children
    roles, visible, in_view = doc.roles, geometry.visible, geometry.in_view
    make_node = OutlineNode._make  # fields in order: kind, depth, role, name, element, in_viewport, level
    while index < count:
        while stack and index > stack[-1][0]:
            stack.pop()
        row = rows[index]
        if (
            ignored[index] or inert[index] or hidden[index] or aria_hidden[index] or row[TAG] in _NO_OUTLINE_TAGS
            or not holds_listed[index] and (index <= consumed_until or row[WIDTH] <= 0 and row[DISPLAY] != "contents")
        ):
            # Not shown, or its text is already on a line above (or it has no box) and
            # nothing listed is inside.
            index = end[index] + 1
            continue
        position = listed.get(index)
        if position is not None:
            nodes.append(make_node(("element", len(stack), "", "", position, in_view(index), 0)))
            if end[index] > index:
                stack.append((end[index], len(nodes) - 1))
            consumed_until = max(consumed_until, end[index])
            # Its subtree is in its name: on to the next row holding something listed in it.
            index = _next_holding(holds_listed, index, end[index])
            continue
        role = roles[index]
        if role == "heading" and index > consumed_until:
            if visible(index):
                view = in_view(index)
                if include_offscreen or view:
                    name = doc.accessible_name(index)[0]
                    if name:
                        nodes.append(make_node(("heading", len(stack), "heading", _clip_text(name, view), -1, view, heading_level(row))))
                        stack.append((end[index], len(nodes) - 1))
            consumed_until = max(consumed_until, end[index])
            index = _next_holding(holds_listed, index, end[index])
            continue
        if role in CONTAINER_ROLES and (role not in _NAMED_ONLY_CONTAINERS or row[ARIA_LABEL] or row[ARIA_LABELLEDBY] or row[TAG] == "fieldset"):
            name = doc.accessible_name(index)[0] if role not in ("list", "table", "grid") or row[ARIA_LABEL] or row[ARIA_LABELLEDBY] else ""
            nodes.append(make_node(("container", len(stack), role, _clip_text(name, True), -1, in_view(index), 0)))
            stack.append((end[index], len(nodes) - 1))
            index += 1
            continue
        if (
            index > consumed_until and row[DISPLAY] not in _INLINE_DISPLAYS and (row[TEXT_PARTS] or children[index])
            and visible(index)
        ):
            view = in_view(index)
            if include_offscreen or view:
                text, last = _block_text(doc, index, listed, end, holds_listed)
                if text:
                    nodes.append(make_node(("text", len(stack), "", _clip_text(text, view), -1, view, 0)))
                    consumed_until = max(consumed_until, last)
                    # The rows it read (up to `last`, all inside it): on to the next one
                    # holding something listed (the rows before it would be passed over).
                    index = _next_holding(holds_listed, index, last)
                    continue
        index += 1
    # Drop containers that ended up empty (their children are the nodes deeper right after).
    kept: list[OutlineNode] = []
    for position, node in enumerate(nodes):
        if node.kind == "container":
            following = nodes[position + 1] if position + 1 < len(nodes) else None
            if following is None or following.depth <= node.depth:
                continue
        kept.append(node)
    return kept


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


def _block_text(doc: DocumentIndex, index: int, listed: dict[int, int], end: list[int], holds_listed: list[bool]) -> tuple[str, int]:
    """Text of a block made of its text nodes and inline descendants (table rows: their
    cells, joined with ' | '). Returns the text and the last row consumed; stops before a
    nested block, heading or listed element, which get their own lines."""
    rows = doc.rows
    out: list[str] = []
    last = index
    DISPLAY, TAG = F.DISPLAY, F.TAG
    hidden, aria_hidden, text_content = doc.hidden, doc.aria_hidden, doc.text_content
    row_like = rows[index][DISPLAY] == "table-row" or doc.roles[index] == "row"
    for item in doc.content(index):
        if isinstance(item, str):
            out.append(item)
            continue
        child = rows[item]
        if hidden[item] or aria_hidden[item] or child[TAG] in _NO_TEXT_TAGS:
            last = end[item]
            continue
        if row_like and child[DISPLAY] == "table-cell" and item not in listed:
            # A cell holding a control is read through the control's own line.
            cell = "" if holds_listed[item] else text_content(item, limit=TEXT_LINE_LIMIT)
            if out and cell:
                out.append(" | ")
            out.append(cell)
            last = end[item]
            continue
        if child[DISPLAY] not in _INLINE_DISPLAYS or item in listed or doc.roles[item] == "heading":
            break
        out.append(text_content(item, limit=TEXT_LINE_LIMIT) if not holds_listed[item] else "")
        last = end[item]
    return squash("".join(out))[:TEXT_LINE_LIMIT * 2], last


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
