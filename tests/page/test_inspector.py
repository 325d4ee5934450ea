"""``Inspector.inspect`` builds its answer without a pydantic model per element (for speed in
Pyodide); the wire form must still be exactly what the protocol models produce (SPEC S2, S7)."""

from __future__ import annotations

from typing import Any, get_type_hints

from mao_page.protocol import FormOwner, InspectOptions, PageElement, PageOption, PageSnapshot, Rect
from mao_page.snapshot.element import ALWAYS, WIRE_FIELDS, WIRE_NAMES, Element
from mao_page.snapshot.inspector import ElementDescription, Inspector
from mao_page.snapshot.refs import checked_name
from mao_page.snapshot.render import ElementColumns, element_line, element_lines
from mao_page.snapshot.scanner import scan
from mao_page.snapshot.store import SnapshotStore

from .page_rows import VIEWPORT, PageRows


class _Facts:
    def __init__(self, rows: list[list[Any]]) -> None:
        self.rows = rows
        self.scopes = [["document", 0, -1]]
        self.frames: list[list[Any]] = []

    def handle(self, index: int) -> int:
        return index

    def handles(self, indices: list[int]) -> list[int]:
        return list(indices)

    def release(self) -> None:
        pass


class _Page:
    """Just enough of ``page.Page`` for ``Inspector.inspect``."""

    def __init__(self, rows: list[list[Any]]) -> None:
        self.rows = rows

    def collect_main_document(
        self, *, viewport_only: bool = False, snapshot: bool = False
    ) -> _Facts:
        return _Facts(self.rows)

    def viewport(self) -> list[float]:
        return [1280, 800, 0, 0, 1]  # integers, as the browser reports whole pixels

    def counters(self) -> tuple[int, int, float, str, str]:
        return (3, 1, 0.0, "https://shop.example/checkout", "Checkout")


def _every_kind_of_element() -> PageRows:
    page = PageRows()
    form = page.add(
        "form", id="pay", name="payment", form_action="https://shop.example/pay", form_method="post"
    )
    page.add(
        "input",
        form,
        form=form,
        aria_label="Name",
        value="Ada",
        placeholder="Your name",
        required=True,
    )
    page.add("input", form, form=form, type="password", aria_label="Password", value="hunter2")
    page.add(
        "select",
        form,
        form=form,
        aria_label="Size",
        options=[["s", "Small", False, False], ["m", "Medium", True, True]],
    )
    page.add("select", form, form=form, aria_label="Colours", multiple=True, disabled=True,
             options=[["r", "Red", True, False], ["g", "Green", True, False]])
    page.add("input", form, form=form, type="checkbox", aria_label="Gift", checked=2, readonly=True)
    page.add("button", form, own_text="Pay", x=10, y=20, width=100, height=30)  # integer rects
    page.add("a", href="https://shop.example/help", own_text="Help", aria_describedby="tip")
    page.add("span", id="tip", own_text="Opens in a new tab")
    page.add("div", role="button", aria_pressed="mixed", aria_expanded="false", own_text="Bold")
    page.add(
        "div", role="slider", aria_value="40", y=2000.0
    )  # offscreen, named by the text before it
    page.add("div", role="tab", aria_selected="true", own_text="Details")
    page.add("iframe", frame="cross", title="Card")
    # Disabled and readonly also appear alone (Colours, Gift): a line that showed one state
    # for the other would differ somewhere.
    page.add("input", aria_invalid="true", aria_label="Zip", disabled=True, readonly=True)
    return page


def _legacy_element(element: Any) -> dict[str, Any]:
    """The element as the protocol model writes it (what inspect returned before)."""
    return _protocol_element(element).to_wire()


def _protocol_element(element: Any) -> PageElement:
    x, y, width, height = element.rect
    return PageElement(
        element_id=element.element_id,
        kind=element.kind,
        role=element.role,
        type=element.type,
        label=element.label,
        text=element.text,
        value=element.value,
        options=[
            PageOption(value=o.value, label=o.label, selected=o.selected, disabled=o.disabled)
            for o in element.options
        ],
        visible=element.visible,
        in_viewport=element.in_viewport,
        disabled=element.disabled,
        readonly=element.readonly,
        required=element.required,
        rect=Rect(x=x, y=y, width=width, height=height),
        checked=element.checked,
        selected=element.selected,
        expanded=element.expanded,
        placeholder=element.placeholder,
        href=element.href,
        sensitive=element.sensitive,
        form=FormOwner(
            form_id=element.form[0],
            form_name=element.form[1],
            action=element.form[2],
            method=element.form[3],
        )
        if element.form
        else None,
        frame=element.frame,
        invalid=element.invalid,
        pressed=element.pressed,
        description=element.description,
        opaque=element.opaque,
        name_from=element.name_from,
        new=element.new,
    )


def test_the_wire_form_is_what_the_protocol_models_write() -> None:  # SPEC S2, S7
    page = _every_kind_of_element()
    result = Inspector(_Page(page.rows), SnapshotStore()).inspect(  # type: ignore[arg-type]
        InspectOptions(format="text", include_offscreen=True)
    )
    assert len(result.elements) == len(scan(page.rows, VIEWPORT, include_offscreen=True)) == 12
    wire = result.to_wire()
    assert PageSnapshot.model_validate(wire).to_wire() == wire
    assert result.to_model().to_wire() == wire
    assert [element.wire() for element in result.elements] == [
        _legacy_element(e) for e in result.elements
    ]
    # The same keys in the same order too (dict equality ignores order; the JSON text does not).
    assert [list(element.wire()) for element in result.elements] == [
        list(_legacy_element(e)) for e in result.elements
    ]
    # The answer is written from the scan's tuples; the elements, made when read, write the same.
    assert wire["elements"] == [element.wire() for element in result.elements]
    assert [list(element) for element in wire["elements"]] == [
        list(element.wire()) for element in result.elements
    ]
    # Every optional field appears somewhere, so the comparison above covers it.
    present = set().union(*(element.keys() for element in wire["elements"]))
    assert {
        "value",
        "checked",
        "selected",
        "expanded",
        "placeholder",
        "href",
        "form",
        "pressed",
        "opaque",
        "nameFrom",
    } <= present
    assert wire["viewport"] == {
        "width": 1280.0,
        "height": 800.0,
        "scrollX": 0.0,
        "scrollY": 0.0,
        "devicePixelRatio": 1.0,
    }
    assert '- button "Pay"' in wire["text"]


def test_the_element_model_holds_the_protocol_elements_fields() -> None:  # SPEC S2
    # The page side writes the wire form from element.WIRE_FIELDS: PageElement's fields in its
    # order, each left out exactly where PageElement's default is None, all of them fields of
    # the scanned Element; the text form's columns are Element fields too.
    assert ("element_id", *WIRE_NAMES) == tuple(PageElement.model_fields)
    assert [name for name, rule in WIRE_FIELDS if rule != ALWAYS] == [
        name for name, field in PageElement.model_fields.items() if field.default is None
    ]
    assert set(WIRE_NAMES) <= set(Element._fields)
    assert set(ElementColumns._fields[1:]) <= set(Element._fields)
    # A live element named without a snapshot holds Element's naming fields, typed alike.
    element_types = get_type_hints(Element)
    assert {
        name: element_types[name] for name in ElementDescription._fields
    } == get_type_hints(ElementDescription)


def test_a_ref_stands_for_the_element_its_snapshot_listed() -> None:  # SPEC R1, R2, P5
    # The store keeps the scanned element itself: what a ref is checked and masked by is that
    # element's fields, not a copy of them.
    page = _every_kind_of_element()
    page.add("input", aria_label="Notes", privacy="private")
    store = SnapshotStore()
    result = Inspector(_Page(page.rows), store).inspect(InspectOptions(include_offscreen=True))  # type: ignore[arg-type]
    snapshot = store.find(result.snapshot_id)
    assert snapshot is not None
    masked, rechecked = {}, {}
    for listed in result.elements:
        entry = snapshot.entries[listed.element_id]
        element = entry.element
        assert (entry.role, entry.label, entry.type, element.placeholder or None) == (
            listed.role, listed.label, listed.type, listed.placeholder
        )
        assert entry.tag == element.tag and (element.opaque or None) == listed.opaque
        masked[listed.role, listed.label] = entry.sensitive
        rechecked[listed.role, listed.label] = checked_name(entry.element)
    assert (
        masked["textbox", "Password"], masked["textbox", "Notes"], masked["textbox", "Name"]
    ) == (True, True, False)
    # The slider is named by the text before it, which the element alone cannot recompute.
    slider = [name for (role, _label), name in rechecked.items() if role == "slider"]
    assert (rechecked["button", "Pay"], slider) == ("Pay", [None])


def test_a_snapshot_element_renders_the_same_line_as_its_protocol_model() -> None:  # SPEC S7
    result = Inspector(_Page(_every_kind_of_element().rows), SnapshotStore()).inspect(  # type: ignore[arg-type]
        InspectOptions(format="text", include_offscreen=True)
    )
    assert [element_line(e) for e in result.elements] == [
        element_line(_protocol_element(e)) for e in result.elements
    ]
    # The text form reads the scan's columns.
    assert element_lines(
        ElementColumns.of(result.elements.element_ids, result.elements.column)
    ) == [element_line(_protocol_element(e)) for e in result.elements]


def test_an_answer_without_text_leaves_the_text_out() -> None:  # SPEC S7
    result = Inspector(_Page(_every_kind_of_element().rows), SnapshotStore()).inspect(
        InspectOptions()
    )  # type: ignore[arg-type]
    wire = result.to_wire()
    assert "text" not in wire and PageSnapshot.model_validate(wire).to_wire() == wire


def test_each_custom_checkbox_ref_holds_its_own_real_input() -> None:  # SPEC S1, R1
    # Refs are made on first use; the real inputs' handles follow the listed elements' in the
    # handles array. Resolved out of order, every custom checkbox must get its own input.
    page = PageRows()
    pairs = []
    for name in ("Remember me", "Subscribe", "Accept terms"):
        label = page.add("label", own_text=name, display="inline-block")
        pairs.append((label, page.add("input", label, type="checkbox", display="none")))
    plain = page.add("button", own_text="Save")
    store = SnapshotStore()
    result = Inspector(_Page(page.rows), store).inspect(InspectOptions(include_offscreen=True))  # type: ignore[arg-type]
    by_label = {element.label: element.element_id for element in result.elements}
    snapshot = store.find(result.snapshot_id)
    assert snapshot is not None
    for (label, checkbox), name in reversed(
        list(zip(pairs, ("Remember me", "Subscribe", "Accept terms"), strict=True))
    ):
        entry = snapshot.entries[by_label[name]]
        assert (entry.handle, entry.control) == (label, checkbox)
    assert (
        snapshot.entries[by_label["Save"]].handle == plain
        and snapshot.entries[by_label["Save"]].control is None
    )


def test_the_second_snapshot_marks_what_appeared_since_the_first() -> None:  # SPEC S9
    # The walk's FRESH column compares with the previous snapshot's walk; the first snapshot
    # has none to compare with, and marks nothing.
    page = PageRows()
    page.add("button", own_text="Open menu")
    page.add("button", own_text="Archive", fresh=True)
    inspector = Inspector(_Page(page.rows), SnapshotStore())  # type: ignore[arg-type]
    first = inspector.inspect(InspectOptions(format="text")).to_wire()
    assert (
        not any("new" in element for element in first["elements"]) and "[new]" not in first["text"]
    )
    second = inspector.inspect(InspectOptions(format="text")).to_wire()
    assert [element.get("new") for element in second["elements"]] == [None, True]
    assert PageSnapshot.model_validate(second).to_wire() == second
    assert (
        '- button "Archive" [new] [ref=' in second["text"]
        and '- button "Open menu" [ref=' in second["text"]
    )
