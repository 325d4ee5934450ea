"""Accessible names over fact rows: the W3C accname 1.2 computation, steps labelled.

https://www.w3.org/TR/accname-1.2/#computation-steps. Each step below cites its letter.
Where we deviate on purpose, the comment says ``SPEC DIFFERENCE:`` and why. Conformance is
measured against the WPT accname suite in a real browser (tests/conformance/).

Everything reads the rows of one ``collectDocument`` walk (``mao_page.dom.facts``) through a
``DocumentIndex`` (``index``) built once per scan; names computed during a scan are cached in
it (``DocumentIndex.name_cache``), and the cache dies with it. The labels after the name
(SPEC S3 fallbacks: nearby text, the field container's label, ...) are built on it too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from . import facts as F
from .index import LABELABLE, ControlRows, DocumentIndex, embedded_value
from .roles import NAME_FROM_CONTENT_ROLES
from .textrules import INLINE_DISPLAYS as _INLINE_DISPLAYS
from .textrules import NO_TEXT_TAGS as _NEVER_TEXT
from .textrules import squash

MAX_NAME = 200
_MAX_DEPTH = 60
# Tags whose host-language label (2E) is more than their <label>s.
_HOST_LABEL_TAGS = frozenset(
    {"input", "img", "area", "fieldset", "table", "figure", "svg", "iframe", "frame"}
)
# Tags named from their content whatever their role (2F, HTML-AAM).
_CONTENT_NAMED_TAGS = frozenset({"summary", "label", "legend", "caption", "figcaption"})
_CSS_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"|\'((?:[^\'\\]|\\.)*)\'')


def accessible_name(doc: DocumentIndex, index: int, *, hidden_ok: bool = False) -> tuple[str, str]:
    """(name, source) of the element at ``index``; the source names the step used:
    aria-labelledby, aria-label, label, value, alt, content, title, placeholder, ...
    ``hidden_ok`` names a hidden element anyway (the real input of a custom checkbox)."""
    key = -index - 1 if hidden_ok else index
    cached = doc.name_cache.get(key)
    if cached is None:
        cached = doc.name_cache[key] = _name(
            doc, index, hidden_ok, _leaf_text_names(doc, (index,))[0]
        )
    return cached


def accessible_names(doc: DocumentIndex, indexes: Sequence[int]) -> list[tuple[str, str]]:
    """``accessible_name`` of each row (not ``hidden_ok``). A scan names every listed
    element: the commonest names (``_leaf_text_names``) are found in one pass here, where
    a call of ``accessible_name`` and its shortcut per element cost more than the
    shortcut's work."""
    names = doc.name_cache
    out: list[tuple[str, str]] = []
    for index, text in zip(indexes, _leaf_text_names(doc, indexes), strict=True):
        cached = names.get(index)
        if cached is None:
            cached = names[index] = _name(doc, index, False, text)
        out.append(cached)
    return out


def _name(
    doc: DocumentIndex, index: int, hidden_ok: bool, leaf_text: str | None
) -> tuple[str, str]:
    """``accessible_name`` computed; ``leaf_text``: the row's ``_leaf_text_names``."""
    # The shortcuts, commonest first (they never both apply): the steps below as they
    # would run for most of a page's names, without their machinery.
    source = "content"
    text = leaf_text
    if text is None:
        source = "label"
        text = _label_text_name(doc, index)
        if text is None:
            named = _attribute_name(doc, index)
            if named is not None:
                text, source = named
    if text is not None:
        name = squash(text)
        name = (name if source == "aria-label" else name.strip("\xa0 "))[:MAX_NAME]
        return name, source if name else ""
    computer = _NameComputation(doc, index)
    name = squash(computer.text_alternative(index, _Context(include_hidden=hidden_ok)))
    if computer.source != "aria-label":
        # NBSP at the very ends of text is trimmed (inside it is kept, accname 2G):
        # libraries add it as decoration (antd's checkbox label), and an agent matching
        # "I agree" must not need to know that. An author's aria-label is kept as is.
        name = name.strip("\xa0 ")
    name = name[:MAX_NAME]
    return name, computer.source if name else ""


def _leaf_text_names(doc: DocumentIndex, indexes: Sequence[int]) -> list[str | None]:
    """Per row: the name of the commonest named element, a link or button holding text
    only, as the steps below would compute it but without their machinery (most of a
    page's names); None when any step other than 2F could apply: the full
    computation. Rendered and without element children, pseudo content, aria-owns on the
    page, aria-labelledby, aria-label or native labels; a role named from content (2F);
    its text non-blank (else 2I and later apply)."""
    if doc.owner_of:
        return [None] * len(indexes)
    columns = doc.columns
    tags, roles, children, hidden, text_parts = (
        doc.tags,
        doc.roles,
        doc.children,
        doc.hidden,
        doc.text_parts,
    )
    pseudo, labelledby, aria_label = (
        columns[F.PSEUDO],
        columns[F.ARIA_LABELLEDBY],
        columns[F.ARIA_LABEL],
    )
    out: list[str | None] = []
    for index in indexes:
        tag = tags[index]
        role = roles[index]
        parts = text_parts[index]
        if (
            not parts
            or children[index]
            or hidden[index]
            or pseudo[index]
            or labelledby[index]
            or aria_label[index]
            or tag in _NEVER_TEXT
            or tag in _HOST_LABEL_TAGS
            or (tag in LABELABLE and doc.labels_of(index))
            or not (
                role in NAME_FROM_CONTENT_ROLES
                or tag in _CONTENT_NAMED_TAGS
                or (not role and tag in ("th", "td"))
            )
        ):
            out.append(None)
            continue
        text = (parts[1] if len(parts) == 2 else "".join(parts[1::2])).strip()
        out.append(text or None)
    return out


def _attribute_name(doc: DocumentIndex, index: int) -> tuple[str, str] | None:
    """(name, source) of an element only its attributes can name (forms, sections,
    landmarks: the containers of the text form), as the steps below would compute it:
    aria-label (2D), else title (2I), else nothing. None when any other step could
    apply: hidden, aria-labelledby (2B), a host-language label (2E), name from content (2F)."""
    columns = doc.columns
    tag = doc.tags[index]
    role = doc.roles[index]
    if (
        doc.hidden[index]
        or columns[F.ARIA_LABELLEDBY][index]
        or tag in _NEVER_TEXT
        or tag in _HOST_LABEL_TAGS
        or tag in LABELABLE
        or role in NAME_FROM_CONTENT_ROLES
        or tag in _CONTENT_NAMED_TAGS
        or (not role and tag in ("th", "td"))
    ):
        return None
    if role in ("none", "presentation"):
        return "", ""  # their attributes are ignored (2D, 2I)
    label = columns[F.ARIA_LABEL][index]
    if label.strip() and tag != "slot":
        return label, "aria-label"
    title = columns[F.TITLE][index]
    return (title, "title") if title.strip() else ("", "")


def _label_text_name(doc: DocumentIndex, index: int) -> str | None:
    """The name of a field named by its <label>s (2E) when each label holds text and the
    field only, as the steps below would compute it without their machinery; None when
    anything else could apply. The field: rendered, no aria-owns on the page, no
    aria-labelledby or aria-label, not a button-like input. Each label: no role,
    aria-labelledby, aria-label or pseudo content; its text non-blank (else 2I)."""
    columns = doc.columns
    tag = doc.tags[index]
    labelledby, aria_label = columns[F.ARIA_LABELLEDBY], columns[F.ARIA_LABEL]
    if (
        (
            tag not in ("select", "textarea")
            and (tag != "input" or columns[F.TYPE][index] in ("submit", "reset", "button", "image"))
        )
        or doc.owner_of
        or doc.hidden[index]
        or labelledby[index]
        or aria_label[index]
    ):
        return None
    labels = doc.labels_of(index)
    if not labels:
        return None
    texts = []
    for label in labels:
        if (
            doc.roles[label]
            or labelledby[label]
            or aria_label[label]
            or columns[F.PSEUDO][label]
            or doc.children[label].count(index)
            != len(doc.children[label])  # an element other than the field
        ):
            return None
        # The field inside its own label adds a word break (see _name_from_content).
        text = "".join([" " if item == index else item for item in doc.content(label)])
        if not text.strip():
            return None
        texts.append(text)
    return " ".join(texts)


def accessible_description(doc: DocumentIndex, index: int) -> str:
    """Accessible description: aria-describedby targets (accdesc 1.0, hidden ones too)."""
    row = doc.rows[index]
    refs = [doc.by_id.get((row[F.SCOPE], ref)) for ref in row[F.ARIA_DESCRIBEDBY].split()]
    computer = _NameComputation(doc, index)
    texts = [
        # A referenced node is named from its content whatever its role (accname 2F).
        computer.text_alternative(
            target, _Context(in_reference=True, recursing=True, include_hidden=doc.hidden[target])
        )
        for target in refs
        if target is not None
    ]
    return squash(" ".join(texts))[:MAX_NAME]


class _Context:
    """Where the traversal is: the flags the accname steps test."""

    __slots__ = ("in_reference", "include_hidden", "recursing", "in_label", "depth")

    def __init__(
        self,
        *,
        in_reference: bool = False,
        include_hidden: bool = False,
        recursing: bool = False,
        in_label: bool = False,
        depth: int = 0,
    ) -> None:
        self.in_reference = in_reference  # inside an aria-labelledby/-describedby traversal
        self.include_hidden = include_hidden  # the traversal's root was hidden (2A)
        self.recursing = recursing  # not the root: a descendant or a referenced node
        self.in_label = in_label  # inside a native label (<label>, <legend>, <caption>, ...)
        self.depth = depth

    def down(
        self,
        *,
        in_reference: bool | None = None,
        include_hidden: bool | None = None,
        recursing: bool | None = None,
        in_label: bool | None = None,
    ) -> _Context:
        """A child context: the given flags changed, the others kept, one level deeper.
        (Spelled out rather than copied through ``__slots__``: it runs per node named.)"""
        child = _Context.__new__(_Context)
        child.in_reference = self.in_reference if in_reference is None else in_reference
        child.include_hidden = self.include_hidden if include_hidden is None else include_hidden
        child.recursing = self.recursing if recursing is None else recursing
        child.in_label = self.in_label if in_label is None else in_label
        child.depth = self.depth + 1
        return child


class _NameComputation:
    __slots__ = ("doc", "rows", "root", "source")

    def __init__(self, doc: DocumentIndex, root: int) -> None:
        self.doc = doc
        self.rows = doc.rows
        self.root = root
        self.source = ""

    def _found(self, source: str, ctx: _Context, text: str) -> str:
        if not ctx.recursing and not self.source:
            self.source = source
        return text

    def text_alternative(self, index: int, ctx: _Context) -> str:
        doc = self.doc
        row = self.rows[index]
        if ctx.depth > _MAX_DEPTH or row[F.TAG] in _NEVER_TEXT:
            return ""
        role = doc.roles[index]
        # 2A Hidden not referenced: a hidden node contributes nothing, unless the node that
        # started this aria-labelledby or native-label traversal was itself hidden.
        # SPEC DIFFERENCE: aria-hidden is not applied to the element being named; we name the
        # visible elements an agent can operate, even inside an aria-hidden region.
        if (
            doc.hidden[index] or (ctx.recursing and doc.aria_hidden[index])
        ) and not ctx.include_hidden:
            if ctx.recursing and not doc.skipped[index] and not doc.aria_hidden[index]:
                # visibility:hidden hides this node's own text, not a descendant that sets
                # visibility:visible again (CSS 2 §11.2).
                return "".join(
                    self.text_alternative(child, ctx.down()) for child in doc.children[index]
                )
            return ""
        # 2B LabelledBy: only when not already inside a labelledby traversal.
        if not ctx.in_reference and row[F.ARIA_LABELLEDBY]:
            targets = [doc.by_id.get((row[F.SCOPE], ref)) for ref in row[F.ARIA_LABELLEDBY].split()]
            texts = []
            for target in targets:
                if target is None:
                    continue
                # 2B.ii.b: each referenced node's text alternative, with hidden content
                # included when the referenced node itself is hidden.
                hidden = doc.hidden[target] or doc.aria_hidden[target]
                texts.append(
                    self.text_alternative(
                        target, ctx.down(in_reference=True, recursing=True, include_hidden=hidden)
                    )
                )
            text = " ".join(texts)
            # SPEC DIFFERENCE: 1.2 returns the result even when it is empty; like browsers,
            # an aria-labelledby that yields nothing falls through to the next step.
            if text.strip():
                return self._found("aria-labelledby", ctx, text)
        # 2C Embedded control: inside another element's label, a control contributes its
        # value, not its name. The element being named is never its own embedded control.
        if ctx.recursing and index != self.root and doc.same_as.get(index) != self.root:
            embedded = embedded_value(doc, index)
            if embedded is not None:
                return embedded
        # 2D AriaLabel (not for none/presentation, whose attributes are ignored).
        if role not in ("none", "presentation") and row[F.TAG] != "slot":
            label = row[F.ARIA_LABEL]
            if label.strip():
                return self._found("aria-label", ctx, label)
        # 2E Host language label (HTML-AAM).
        if role not in ("none", "presentation") or row[F.TAG] in (
            "input",
            "select",
            "textarea",
            "button",
        ):
            native = self._host_language_label(index, row, role, ctx)
            if native:
                return native
        # 2F Name from content: for roles that allow it, and for every node reached by
        # recursion (a descendant, a labelledby target, a label's content; 2F and 2H).
        if (
            ctx.recursing
            or role in NAME_FROM_CONTENT_ROLES
            or row[F.TAG] in _CONTENT_NAMED_TAGS
            or (not role and row[F.TAG] in ("th", "td"))
        ):
            text = self._name_from_content(index, row, ctx)
            if text.strip():
                return self._found("content", ctx, text.strip() if not ctx.recursing else text)
            if ctx.recursing and text:
                return text  # whitespace between inline siblings still separates words
        # 2I Tooltip attribute (ignored on none/presentation, like every other attribute).
        if row[F.TITLE].strip() and role not in ("none", "presentation"):
            return self._found("title", ctx, row[F.TITLE])
        # HTML-AAM, last for text fields: the placeholder.
        if row[F.TAG] in ("input", "textarea") and row[F.PLACEHOLDER].strip():
            return self._found("placeholder", ctx, row[F.PLACEHOLDER])
        return ""

    def _host_language_label(self, index: int, row: list[Any], role: str, ctx: _Context) -> str:
        doc = self.doc
        tag = row[F.TAG]
        kind = row[F.TYPE]
        if tag == "input" and kind in ("submit", "reset", "button"):
            labels = self._labels_text(index, ctx)
            if labels:
                return self._found("label", ctx, labels)
            value = row[F.VALUE_ATTR] if row[F.VALUE_ATTR] is not None else ""
            if value.strip() or (kind == "button" and value):
                return self._found("value", ctx, value)
            if kind in ("submit", "reset") and not row[F.TITLE].strip():
                # HTML-AAM: the localized default label; ours is English.
                return self._found("value", ctx, "Submit" if kind == "submit" else "Reset")
            return ""
        if tag == "input" and kind == "image":
            labels = self._labels_text(index, ctx)
            if labels:
                return self._found("label", ctx, labels)
            for source, text in (
                ("alt", row[F.ALT] or ""),
                ("value", row[F.VALUE_ATTR]),
                ("title", row[F.TITLE]),
            ):
                if text.strip():
                    return self._found(source, ctx, text)
            return self._found("value", ctx, "Submit")
        if tag in LABELABLE:
            labels = self._labels_text(index, ctx)
            if labels:
                return self._found("label", ctx, labels)
            return ""
        if tag in ("img", "area") or (tag == "input" and kind == "image"):
            if row[F.ALT]:
                return self._found("alt", ctx, row[F.ALT])
            return ""
        if tag in ("fieldset", "table", "figure"):
            wanted = {"fieldset": "legend", "table": "caption", "figure": "figcaption"}[tag]
            for child in doc.children[index]:
                if self.rows[child][F.TAG] == wanted:
                    text = self.text_alternative(child, ctx.down(recursing=True, in_label=True))
                    if text.strip():
                        return self._found(wanted, ctx, text)
                    break
            return ""
        if tag == "svg":
            for child in doc.children[index]:
                if self.rows[child][F.TAG] == "title":
                    text = "".join(p for p in doc.content(child) if isinstance(p, str))
                    if text.strip():
                        return self._found("title", ctx, text)
            return ""
        if tag in ("iframe", "frame") and row[F.TITLE].strip():
            return self._found("title", ctx, row[F.TITLE])
        return ""

    def _labels_text(self, index: int, ctx: _Context) -> str:
        """Text of an element's <label>s, joined (HTML-AAM 'associated label elements')."""
        texts = []
        for label in self.doc.labels_of(index):
            hidden = self.doc.hidden[label] or self.doc.aria_hidden[label]
            # 2A: a hidden label still names its control (its content is then included).
            texts.append(
                self.text_alternative(
                    label, ctx.down(recursing=True, in_label=True, include_hidden=hidden)
                )
            )
        return " ".join(t for t in texts if t.strip())

    def _name_from_content(self, index: int, row: list[Any], ctx: _Context) -> str:
        doc = self.doc
        out: list[str] = []
        before, after = _pseudo_texts(row)
        # 2F.ii: ::before content first.
        if before:
            out.append(before)
        child_ctx = ctx.down(recursing=True)
        for item in doc.content(index):
            if isinstance(item, str):
                out.append(item)  # 2G Text node
                continue
            if (item == self.root or doc.same_as.get(item) == self.root) and ctx.in_label:
                out.append(" ")  # a control inside its own label adds only a word break
                continue
            child_row = self.rows[item]
            text = self.text_alternative(item, child_ctx)
            # 2F.iii: browsers separate block-level children with spaces.
            if child_row[F.DISPLAY] not in _INLINE_DISPLAYS or child_row[F.TAG] == "br":
                out.append(" " + text + " ")
            elif text:
                out.append(text)
        if after:
            out.append(after)
        return "".join(out)


def _pseudo_texts(row: list[Any]) -> tuple[str, str]:
    """Text of ::before / ::after generated content (accname 2F.ii, CSS alt text after '/').

    SPEC DIFFERENCE: counters, attr() and quotes are not resolved (their computed value is
    not the rendered text); only string parts count.
    """
    pseudo = row[F.PSEUDO]
    if not pseudo:
        return "", ""
    return _css_content_text(pseudo[0], pseudo[1]), _css_content_text(pseudo[2], pseudo[3])


def _css_content_text(content: str, display: str) -> str:
    # A pseudo-element with display: none generates no box, so no text (CSS Display 2.5).
    if not content or display == "none":
        return ""
    head, _, alt = content.partition(" / ") if " / " in content else (content, "", "")
    source = alt if alt else head
    text = "".join(a or b for a, b in _CSS_STRING.findall(source))
    text = text.replace('\\"', '"').replace("\\'", "'")
    if all(c.isspace() or "\ue000" <= c <= "\uf8ff" for c in text):
        # SPEC DIFFERENCE: generated spacers (an NBSP after a label) and icon-font glyphs
        # (private-use code points) are decoration, not words; only a word break remains.
        return " " if text else ""
    if display not in _INLINE_DISPLAYS:
        return " " + text + " "
    return text


def nearby_text(index: int, doc: DocumentIndex) -> str:
    """SPEC S3 fallback: text right before the element among its siblings and parent."""
    row = doc.rows[index]
    parent = row[F.PARENT]
    if parent < 0:
        return ""
    siblings = doc.children[parent]
    position = siblings.index(index)
    for sibling in reversed(siblings[:position]):
        if doc.hidden[sibling]:
            continue
        text = doc.text_content(sibling, limit=80)
        if text:
            return text
    return doc.rows[parent][F.OWN_TEXT][:80]


# -- labels beyond the accessible name (SPEC S3: "then nearby text") ---------------------
#
# For a control whose accessible name is empty. Each fallback reads structure only (which
# container holds which controls, what text precedes them in it), never class names, and
# says where its label came from (the scanner's ``label_source``): "inner" (the name of the
# one field inside the widget), "nearby" (the label text of the control's own field
# container), "stepper" (the increase / decrease buttons of one spin button).

# How far up a field container may be: a form row or a widget's wrapper is a few levels and
# a few dozen elements; anything bigger holds more than one field's label.
# Both reach collect.js viewportKeep as FIELD_CONTAINER_LEVELS / _ROWS (jstables).
CONTAINER_LEVELS = 8
CONTAINER_ROWS = 60
_STEPPER_LEVELS = 3
# Containers a field's label never comes from beyond: the page and its forms.
_NOT_CONTAINERS = frozenset(
    {"html", "body", "form", "fieldset", "table", "tbody", "thead", "tr", "ul", "ol", "dialog"}
)
# Controls a label beside them may name: fields and the roles without a name of their own
# (custom switches and slider handles). Buttons and links are actions: text near them is
# rarely theirs (a heading above an icon button names the card, not the button).
_LABELLED_ROLES = frozenset(
    {
        "textbox",
        "searchbox",
        "combobox",
        "listbox",
        "checkbox",
        "radio",
        "switch",
        "slider",
        "spinbutton",
        "generic",
        "",
        "radiogroup",
    }
)
# Their label may follow them in their container ("[o] Dark mode", a select's placeholder).
_LABEL_AFTER_ROLES = frozenset({"checkbox", "radio", "switch", "combobox", "listbox"})
# Fields an outer widget (a combobox, a tags box) may take its name from.
_TEXT_ENTRY_ROLES = frozenset({"textbox", "searchbox", "combobox"})
_SPIN_ROLES = frozenset({"spinbutton"})
_STEPPER_ROLES = frozenset({"button", "generic", ""})


def inner_field_label(index: int, doc: DocumentIndex, controls: ControlRows) -> str:
    """A widget (a combobox, a tags box) whose one text entry inside has a name: that name
    ("Select tags" of the inner input's placeholder)."""
    end = doc.end[index]
    inner = [i for i in controls.within(index + 1, end) if doc.roles[i] in _TEXT_ENTRY_ROLES]
    if len(inner) != 1:
        return ""
    return accessible_name(doc, inner[0])[0]


def replaced_control_label(index: int, doc: DocumentIndex, controls: ControlRows) -> str:
    """A widget drawn in place of a native control it hides (a jQuery select plugin keeps the
    original ``<select>`` hidden right before its own container): the name of that control,
    which its form label still names. Up through the ancestors that hold no other control,
    the first one whose previous element sibling is a hidden, named select, input or
    textarea gives that name."""
    if doc.roles[index] not in _LABELLED_ROLES:
        return ""
    parents, children, end, tags = doc.parents, doc.children, doc.end, doc.tags
    own = controls.count(index, end[index])
    node = index
    for _ in range(CONTAINER_LEVELS):
        parent = parents[node]
        if parent < 0:
            return ""
        siblings = children[parent]
        at = siblings.index(node) if node in siblings else 0
        if at > 0:
            before = siblings[at - 1]
            hidden = doc.hidden[before] or doc.aria_hidden[before]
            if (
                hidden
                and tags[before] in ("select", "input", "textarea")
                and doc.rows[before][F.TYPE] != "hidden"
            ):
                return accessible_name(doc, before, hidden_ok=True)[0]
        if tags[parent] in _NOT_CONTAINERS or controls.count(parent + 1, end[parent]) > own:
            return ""
        if controls.count(parent, parent):
            own += 1  # a clickable wrapper around this control is part of it
        node = parent
    return ""


def container_label(
    index: int,
    doc: DocumentIndex,
    controls: ControlRows,
    *,
    any_role: bool = False,
    label_elements_only: bool = False,
) -> str:
    """The label text of the control's own field container: up through the ancestors that
    hold no other control (each at most ``CONTAINER_ROWS`` rows, ``CONTAINER_LEVELS`` up),
    the nearest text before the control in one of them (after it, for checkboxes, switches
    and selects). A container holding another control ends the search: text in it may be
    that control's. Never past a form, list or table: their text labels many controls.
    The control's own ``<label>`` (a custom switch's wrapper: the hidden input and the knob
    the user clicks) is part of the control, with whatever clickable parts it holds.
    ``label_elements_only``: the nearest text must be a ``<label>`` element's (a form row's
    label column), not a heading or other text that happens to precede the control."""
    role = doc.roles[index]
    if role not in _LABELLED_ROLES and not any_role:
        return ""
    after_too = role in _LABEL_AFTER_ROLES and not label_elements_only
    parents, end, tags = doc.parents, doc.end, doc.tags
    own = controls.count(index, end[index])
    own_labels = doc.labels_of(index)
    node = index
    for _ in range(CONTAINER_LEVELS):
        parent = parents[node]
        if (
            parent < 0
            or tags[parent] in _NOT_CONTAINERS
            or doc.subtree_rows(parent) > CONTAINER_ROWS
        ):
            return ""
        if parent in own_labels:
            # Clicking anything in the control's own label toggles the control: its clickable
            # parts (the knob of a CSS switch) are the control's, not another control.
            own = controls.count(parent, end[parent])
            node = parent
            continue
        if (
            controls.count(parent + 1, end[parent]) > own
            and _shown_controls(parent, index, doc, controls) > own
        ):
            return ""
        text = (
            _label_beside(parent, node, doc)
            if label_elements_only
            else _text_beside(parent, node, doc, after_too)
        )
        if text:
            return text
        if controls.count(parent, parent):
            own += 1  # a clickable wrapper around this control is part of it
        node = parent
    return ""


def _shown_controls(parent: int, index: int, doc: DocumentIndex, controls: ControlRows) -> int:
    """Controls inside ``parent`` a user can see, counting ``index``'s own as ``container_label``
    does: a display:none input a slider keeps its value in labels nothing."""
    end, hidden = doc.end, doc.hidden
    return sum(
        1 for i in controls.within(parent + 1, end[parent])
        if not hidden[i] or _within(i, index, end)
    )


def _text_beside(parent: int, node: int, doc: DocumentIndex, after_too: bool) -> str:
    """The nearest rendered text before ``node`` among ``parent``'s content (then after it)."""
    content = doc.content(parent)
    if node not in content:
        return ""  # owned elsewhere (aria-owns): not beside this text
    at = content.index(node)
    for items in (reversed(content[:at]), content[at + 1:] if after_too else ()):
        for item in items:
            if isinstance(item, str):
                text = squash(item)
            elif doc.hidden[item] or doc.aria_hidden[item]:
                continue
            else:
                text = doc.text_content(item, limit=80)
            if text:
                return text[:80]
    return ""


def _label_beside(parent: int, node: int, doc: DocumentIndex) -> str:
    """The text of a ``<label>`` element that is the nearest rendered text before ``node``
    among ``parent``'s content (the item itself or one inside it, as a form row's label
    column holds it); "" when the nearest text is anything else."""
    content = doc.content(parent)
    if node not in content:
        return ""
    for item in reversed(content[:content.index(node)]):
        if isinstance(item, str):
            if squash(item):
                return ""
            continue
        if doc.hidden[item] or doc.aria_hidden[item] or not doc.text_content(item, limit=80):
            continue
        for row in range(item, doc.end[item] + 1):
            if doc.tags[row] == "label" and not doc.hidden[row]:
                text = doc.text_content(row, limit=80)
                if text:
                    return text[:80]
        return ""
    return ""


# A row of same-shaped items: a star rating's stars, a carousel's dots.
_ROW_ITEMS = range(3, 21)


def position_label(index: int, doc: DocumentIndex, controls: ControlRows) -> str:
    """"Rating 4 of 5" for a nameless, textless clickable item whose siblings of its tag are
    all such items (three to twenty, nothing else clickable among them): its place in the
    row, after the label of the row's field container when it has one. A user tells these
    items apart by where they sit, and so can an agent."""
    parent = doc.parents[index]
    if parent < 0:
        return ""
    tag = doc.tags[index]
    siblings = doc.children[parent]
    if len(siblings) > 2 * _ROW_ITEMS.stop:
        return ""
    items = [i for i in siblings if doc.tags[i] == tag and not doc.hidden[i]]
    if len(items) not in _ROW_ITEMS or controls.count(parent + 1, doc.end[parent]) != len(items):
        return ""
    if any(
        not controls.count(i, i) or accessible_name(doc, i)[0] or doc.text_content(i, limit=20)
        for i in items
    ):
        return ""
    shape = _shape(items[0], doc)
    if any(_shape(i, doc) != shape for i in items[1:]):
        return ""
    place = f"{items.index(index) + 1} of {len(items)}"
    label = container_label(parent, doc, controls, any_role=True)
    return f"{label} {place}" if label else place


def _shape(index: int, doc: DocumentIndex) -> tuple[str, ...]:
    """The tags of an element's subtree in order: same-shaped items have the same."""
    return tuple(doc.tags[index:doc.end[index] + 1])


def stepper_label(index: int, doc: DocumentIndex, controls: ControlRows, field_label: Any) -> str:
    """"Increase X" / "Decrease X" for a nameless button that is one of the two steppers
    of a spin button X: the smallest container (up to three levels) holding both holds that
    one field, these two nameless buttons and no other control. Which is which comes from
    where they sit: of two stacked buttons the upper one increases, of two side by side the
    right one. ``field_label(row)`` names the field."""
    if doc.roles[index] not in _STEPPER_ROLES:
        return ""
    parents, end, roles = doc.parents, doc.end, doc.roles
    node = index
    for _ in range(_STEPPER_LEVELS):
        node = parents[node]
        if node < 0 or doc.subtree_rows(node) > CONTAINER_ROWS:
            return ""
        inside = [i for i in controls.within(node + 1, end[node]) if not _within(i, index, end)]
        fields = [i for i in inside if roles[i] in _SPIN_ROLES]
        if not fields:
            continue
        others = [i for i in inside if i not in fields]
        if len(fields) != 1 or len(others) != 1 or roles[others[0]] not in _STEPPER_ROLES:
            return ""
        other = others[0]
        if accessible_name(doc, other)[0] or doc.text_content(other, limit=20):
            return ""
        columns = doc.columns
        ys, xs, heights = columns[F.Y], columns[F.X], columns[F.HEIGHT]
        if abs(ys[index] - ys[other]) >= min(heights[index], heights[other]) / 2:
            increase = ys[index] < ys[other]
        elif xs[index] != xs[other]:
            increase = xs[index] > xs[other]
        else:
            return ""
        name = field_label(fields[0])
        verb = "Increase" if increase else "Decrease"
        return f"{verb} {name}" if name else verb
    return ""


def _within(row: int, ancestor: int, end: Sequence[int]) -> bool:
    return ancestor <= row <= end[ancestor]
