"""The page scanner over synthetic fact rows (SPEC S1-S4, P5).

Rows stand in for what ``factsOf`` reads from the DOM; computed-style columns hold computed
values (an inherited ``visibility: hidden`` or ``cursor: pointer`` appears on descendants too).
"""

from __future__ import annotations

from typing import Any

import pytest
from mao_page.dom import facts as F
from mao_page.dom.index import DocumentIndex
from mao_page.dom.names import accessible_name
from mao_page.dom.roles import kind_of, role_of, roles_of_rows
from mao_page.snapshot.element import key_of
from mao_page.snapshot.scanner import scan_page

from .page_rows import VIEWPORT, PageRows

# -- SPEC S1: which elements are interactive -------------------------------------------------


@pytest.mark.parametrize("tag", ["button", "select", "textarea", "summary", "input"])
def test_native_controls_are_listed(tag: str) -> None:  # SPEC S1
    page = PageRows()
    control = page.add(tag)
    assert page.listed() == {control}


def test_hidden_input_is_not_listed() -> None:  # SPEC S1
    page = PageRows()
    page.add("input", type="hidden", value="csrf-token")
    assert page.listed() == set()


def test_link_with_href_is_listed_and_anchor_without_href_is_not() -> None:  # SPEC S1
    page = PageRows()
    link = page.add("a", href="https://shop.example/cart", own_text="Cart")
    page.add("a", own_text="Just an anchor")
    assert page.listed() == {link}


def test_only_the_contenteditable_host_is_listed() -> None:  # SPEC S1
    page = PageRows()
    editor = page.add("div", contenteditable=True)
    paragraph = page.add("p", editor, contenteditable=True, own_text="Draft")
    assert page.listed() == {editor}
    assert paragraph not in page.listed()


@pytest.mark.parametrize(
    "role",
    ["button", "link", "textbox", "searchbox", "combobox", "listbox", "option", "checkbox",
     "radio", "switch", "menuitem", "menuitemcheckbox", "menuitemradio", "tab", "slider",
     "spinbutton", "treeitem"],
)
def test_aria_widget_roles_are_listed(role: str) -> None:  # SPEC S1
    page = PageRows()
    widget = page.add("div", role=role, own_text="Widget")
    assert page.listed() == {widget}


def test_plain_and_landmark_containers_are_not_listed() -> None:  # SPEC S1
    page = PageRows()
    page.add("div", own_text="Text")
    page.add("nav", role="navigation", own_text="Menu")
    page.add("span", role="presentation", own_text="Decor")
    assert page.listed() == set()


@pytest.mark.parametrize(
    ("tabindex", "listed"), [("0", True), ("3", True), ("-1", False), ("x", False)]
)
def test_tabindex_of_zero_or_more_makes_an_element_interactive(
    tabindex: str, listed: bool
) -> None:  # SPEC S1
    page = PageRows()
    card = page.add("div", tabindex=tabindex, own_text="Card")
    assert (card in page.listed()) is listed


def test_cursor_pointer_counts_only_on_the_element_introducing_it() -> None:  # SPEC S1
    page = PageRows()
    tile = page.add("div", cursor="pointer")
    page.add("span", tile, cursor="pointer", own_text="Open")
    page.add("span", tile, cursor="pointer", own_text="details")
    assert page.listed() == {tile}


def test_clickable_wrapper_around_one_native_control_collapses_into_it() -> None:  # SPEC S1
    page = PageRows()
    wrapper = page.add("div", cursor="pointer")
    checkbox = page.add("input", wrapper, type="checkbox", checked=0, aria_label="Agree")
    assert page.listed() == {checkbox}


def test_clickable_wrapper_around_two_controls_stays_listed() -> None:  # SPEC S1
    page = PageRows()
    wrapper = page.add("div", cursor="pointer", own_text="Row")
    first = page.add("button", wrapper, own_text="Edit")
    second = page.add("button", wrapper, own_text="Delete")
    assert page.listed() == {wrapper, first, second}


def test_wrapper_with_its_own_widget_role_is_not_collapsed() -> None:  # SPEC S1
    page = PageRows()
    option = page.add("div", role="option", own_text="Express shipping")
    radio = page.add("input", option, type="radio", checked=0)
    assert page.listed() == {option, radio}


# -- SPEC S4: visibility and viewport ---------------------------------------------------------


def test_descendant_of_display_none_is_not_listed() -> None:  # SPEC S4
    page = PageRows()
    menu = page.add("div", display="none")
    inner = page.add("div", menu)
    page.add("button", inner, own_text="Hidden item")
    assert page.listed() == set()
    assert page.listed(include_offscreen=True) == set()


def test_hidden_subtrees_are_followed_through_rows_added_out_of_order() -> None:  # SPEC S4
    # Hidden, inert and ignored subtrees are marked from their root rows over the rows after
    # them; rows of other subtrees in between must keep their own state.
    page = PageRows()
    menu = page.add("div", display="none")
    aside = page.add("div")
    inert = page.add("div", inert=True)
    ignored = page.add("div", privacy="ignore")
    page.add("button", menu, own_text="Hidden item")
    shown = page.add("button", aside, own_text="Shown")
    page.add("button", inert, own_text="Behind modal")
    page.add("button", ignored, own_text="Not collected")
    later = page.add("button", aside, own_text="Shown too")
    assert page.listed() == {shown, later}


def test_visibility_hidden_element_is_not_listed() -> None:  # SPEC S4
    page = PageRows()
    page.add("button", visibility="hidden", own_text="Ghost")
    assert page.listed() == set()


def test_visible_child_of_a_visibility_hidden_parent_is_listed() -> None:  # SPEC S4, S1 recall
    page = PageRows()
    panel = page.add("div", visibility="hidden")
    page.add("button", panel, visibility="hidden", own_text="Inherits hidden")
    shown = page.add("button", panel, visibility="visible", own_text="Sets visible again")
    assert page.listed() == {shown}


def test_descendant_of_an_opacity_zero_ancestor_is_not_listed() -> None:  # SPEC S4
    page = PageRows()
    faded = page.add("div", opacity=0.0)
    page.add("button", faded, own_text="Invisible")
    translucent = page.add("button", opacity=0.5, own_text="Half")
    assert page.listed() == {translucent}


@pytest.mark.parametrize(("width", "height"), [(0, 24), (120, 0)])
def test_zero_size_element_is_not_listed(width: float, height: float) -> None:  # SPEC S4
    page = PageRows()
    page.add("button", width=width, height=height, own_text="Collapsed")
    assert page.listed(include_offscreen=True) == set()


def test_element_below_the_fold_is_left_out_by_default() -> None:  # SPEC S4
    page = PageRows()
    above = page.add("button", y=100, own_text="Top")
    page.add("button", y=2000, own_text="Footer")
    assert page.listed() == {above}


def test_include_offscreen_lists_elements_outside_the_viewport_marked_as_such() -> None:  # SPEC S4
    page = PageRows()
    page.add("button", y=100, own_text="Top")
    footer = page.add("button", y=2000, own_text="Footer")
    scrolled_past = page.add("button", y=-300, own_text="Header")
    assert {footer, scrolled_past} <= page.listed(include_offscreen=True)
    assert page.scanned(footer, include_offscreen=True).in_viewport is False
    assert page.scanned(scrolled_past, include_offscreen=True).in_viewport is False


def test_partly_visible_element_counts_as_in_viewport() -> None:  # SPEC S4
    page = PageRows()
    edge = page.add("button", y=790, height=40, own_text="Half in view")
    assert page.scanned(edge).in_viewport is True


# -- SPEC S4: what the page owner marks --------------------------------------------------------


def test_data_mao_ignore_excludes_the_whole_subtree() -> None:  # SPEC S4
    page = PageRows()
    admin = page.add("div", privacy="ignore")
    page.add("button", admin, own_text="Impersonate")
    page.add("input", admin, value="internal")
    kept = page.add("button", own_text="Save")
    assert page.listed(include_offscreen=True) == {kept}


def test_data_mao_private_field_is_listed_without_its_value() -> None:  # SPEC S4, P5
    page = PageRows()
    notes = page.add("textarea", privacy="private", aria_label="Notes", value="my diagnosis")
    element = page.scanned(notes)
    assert element.private is True
    assert element.value is None
    assert element.label == "Notes"


def test_data_mao_private_element_does_not_expose_its_text() -> None:  # SPEC S4
    page = PageRows()
    balance = page.add("div", privacy="private", tabindex="0", aria_label="Balance")
    page.add("span", balance, own_text="$12,345")
    element = page.scanned(balance)
    assert "$12,345" not in element.text


# -- SPEC S3: accessible names ---------------------------------------------------------------


# SPEC S3
def test_aria_labelledby_wins_over_aria_label_and_uses_referenced_text_in_order() -> None:
    page = PageRows()
    page.add("span", id="first", own_text="Shipping")
    page.add("span", id="second", display="none", own_text="address")
    field = page.add("input", aria_labelledby="first second", aria_label="ignored", id="addr")
    page.add("label", label_for="addr", own_text="also ignored")
    element = page.scanned(field)
    assert (element.label, element.label_source) == ("Shipping address", "aria-labelledby")


def test_aria_describedby_targets_give_the_description_from_their_content() -> None:  # SPEC S2
    page = PageRows()
    tip = page.add("p", id="tip", own_text="Amounts in ")
    page.add("b", tip, own_text="euros")
    page.add("span", id="hidden-tip", display="none", own_text="(hidden too)")
    link = page.add(
        "a", href="https://shop.example/help", own_text="Help", aria_describedby="tip hidden-tip"
    )
    assert page.scanned(link).description == "Amounts in euros (hidden too)"


def test_aria_owns_moves_content_into_the_owner_and_out_of_its_dom_parent() -> None:  # SPEC S3
    # WPT accname/aria-owns.html: owned nodes are the owner's last children; their aria-hidden
    # state comes from the owner, and their DOM parent no longer reads them.
    page = PageRows()
    hidden = page.add("div", aria_hidden="true")
    play = page.add("span", hidden, id="play", own_text="Play")
    button = page.add("button", aria_owns="play")
    owner = page.add("span", aria_owns="car missing")
    heading = page.add("h4", own_text="Speeding")
    car = page.add("mark", heading, id="car", own_text="car")
    assert page.scanned(button).label == "Play"
    doc = DocumentIndex(page.rows)
    assert doc.owner_of == {play: button, car: owner}
    assert accessible_name(doc, heading)[0] == "Speeding"


def test_aria_owns_is_ignored_on_hidden_owners_and_hidden_targets() -> None:  # SPEC S3
    page = PageRows()
    page.add("span", display="none", aria_owns="kept")
    page.add("mark", id="kept", own_text="treasure")
    link = page.add("a", href="/w3c", own_text="W3C", aria_owns="gone")
    page.add("span", id="gone", display="none", own_text=" (new window)")
    doc = DocumentIndex(page.rows)
    assert doc.owner_of == {}
    assert page.scanned(link).label == "W3C"


def test_aria_label_wins_over_a_label_element() -> None:  # SPEC S3
    page = PageRows()
    page.add("label", label_for="q", own_text="Search the shop")
    field = page.add("input", id="q", aria_label="Search")
    assert page.scanned(field).label == "Search"


def test_blank_aria_label_is_skipped() -> None:  # SPEC S3
    page = PageRows()
    button = page.add("button", aria_label="   ", own_text="Pay")
    assert page.scanned(button).label == "Pay"


def test_label_for_names_its_control() -> None:  # SPEC S3
    page = PageRows()
    page.add("label", label_for="email", own_text="Email address")
    field = page.add("input", id="email", type="email", placeholder="you@example.com")
    element = page.scanned(field)
    assert (element.label, element.label_source) == ("Email address", "label")


@pytest.mark.parametrize(("display", "name"), [("inline", "Nickname:"), ("none", "Nickname")])
def test_label_colon_from_generated_content_counts_only_when_rendered(
    display: str, name: str
) -> None:  # SPEC S3
    # accname 2F.ii takes ::after content; a pseudo-element with display: none generates no
    # box and no text (Chromium names the field "Nickname"), as vertical antd forms hide the colon.
    page = PageRows()
    page.add("label", label_for="nick", own_text="Nickname", pseudo=["", "inline", '":"', display])
    field = page.add("input", id="nick", type="text")
    assert page.scanned(field).label == name


def test_wrapping_label_names_its_control_without_the_controls_value() -> None:  # SPEC S3
    page = PageRows()
    label = page.add("label", own_text="Full name")
    field = page.add("input", label, value="Ada Lovelace")
    assert page.scanned(field).label == "Full name"


def test_label_wrapping_a_control_deeper_down_names_it() -> None:  # SPEC S3
    page = PageRows()
    label = page.add("label", own_text="Full name")
    span = page.add("span", label)
    field = page.add("input", span)
    assert page.scanned(field).label == "Full name"


@pytest.mark.parametrize("tag", ["button", "a"])
def test_a_control_named_from_content_keeps_its_states(tag: str) -> None:  # SPEC S2
    page = PageRows()
    control = page.add(
        tag,
        own_text="Menu",
        aria_expanded="true",
        aria_pressed="true",
        href="/m" if tag == "a" else "",
    )
    element = page.scanned(control)
    assert (element.label, element.expanded) == ("Menu", True)
    if tag == "button":
        assert element.pressed is True


def test_label_that_both_wraps_and_points_at_a_control_is_read_once() -> None:  # SPEC S3
    page = PageRows()
    label = page.add("label", label_for="email", own_text="Email")
    field = page.add("input", label, id="email", type="email")
    assert page.scanned(field).label == "Email"


def test_button_is_named_from_content_before_title() -> None:  # SPEC S3
    page = PageRows()
    button = page.add("button", title="Add the item to your cart")
    page.add("span", button, own_text="Add to cart")
    page.add("span", button, aria_hidden="true", own_text="(icon)")
    element = page.scanned(button)
    assert (element.label, element.label_source) == ("Add to cart", "content")


def test_link_is_named_from_image_alt_text() -> None:  # SPEC S3
    page = PageRows()
    link = page.add("a", href="https://shop.example/")
    page.add("img", link, alt="Home")
    assert page.scanned(link).label == "Home"


def test_title_comes_before_placeholder() -> None:  # SPEC S3
    page = PageRows()
    field = page.add("input", title="Coupon code", placeholder="e.g. SPRING10")
    element = page.scanned(field)
    assert (element.label, element.label_source) == ("Coupon code", "title")


def test_placeholder_names_an_otherwise_unlabelled_field() -> None:  # SPEC S3
    page = PageRows()
    field = page.add("input", placeholder="Search products")
    element = page.scanned(field)
    assert (element.label, element.label_source) == ("Search products", "placeholder")


def test_nearby_text_is_the_last_resort() -> None:  # SPEC S3
    page = PageRows()
    row = page.add("div")
    page.add("span", row, own_text="Quantity")
    field = page.add("input", row, type="number", value="2")
    element = page.scanned(field)
    assert (element.label, element.label_source) == ("Quantity", "nearby")


def test_submit_input_without_value_is_named_submit() -> None:  # SPEC S3 (HTML-AAM)
    page = PageRows()
    submit = page.add("input", type="submit")
    assert page.scanned(submit).label == "Submit"


def test_button_text_equal_to_its_label_is_not_repeated() -> None:  # SPEC S2
    page = PageRows()
    button = page.add("button", own_text="Checkout")
    element = page.scanned(button)
    assert (element.label, element.text) == ("Checkout", "")


# -- SPEC S2: roles, kinds, types -------------------------------------------------------------


@pytest.mark.parametrize(
    ("tag", "columns", "role", "kind"),
    [
        ("button", {}, "button", "button"),
        ("a", {"href": "https://x.example/"}, "link", "link"),
        ("input", {}, "textbox", "form-control"),
        ("input", {"type": "email"}, "textbox", "form-control"),
        ("input", {"type": "search"}, "searchbox", "form-control"),
        ("input", {"type": "number"}, "spinbutton", "form-control"),
        ("input", {"type": "range"}, "slider", "form-control"),
        ("input", {"type": "checkbox", "checked": 0}, "checkbox", "form-control"),
        ("input", {"type": "radio", "checked": 0}, "radio", "form-control"),
        ("input", {"type": "submit"}, "button", "button"),
        ("select", {}, "combobox", "form-control"),
        ("select", {"multiple": True}, "listbox", "form-control"),
        ("textarea", {}, "textbox", "form-control"),
        ("summary", {}, "button", "button"),
        ("div", {"contenteditable": True}, "textbox", "form-control"),
        ("div", {"tabindex": "0"}, "generic", "other"),
        ("div", {"role": "switch"}, "switch", "form-control"),
        ("div", {"role": "tab"}, "tab", "button"),
        ("span", {"role": "link"}, "link", "link"),
        ("div", {"role": "fancy button"}, "button", "button"),
    ],
    ids=lambda v: repr(v) if isinstance(v, dict) else str(v),
)
def test_role_and_kind(tag: str, columns: dict, role: str, kind: str) -> None:  # SPEC S2
    page = PageRows()
    index = page.add(tag, aria_label="Thing", **columns)
    element = page.scanned(index)
    assert (element.role, element.kind) == (role, kind)


def test_input_without_a_type_reports_type_text() -> None:  # SPEC S2
    page = PageRows()
    field = page.add("input")
    assert page.scanned(field).type == "text"


def test_form_ownership_is_reported() -> None:  # SPEC S2
    page = PageRows()
    form = page.add(
        "form",
        id="checkout",
        name="checkout-form",
        form_action="https://shop.example/pay",
        form_method="post",
    )
    field = page.add("input", form, form=form, aria_label="Name")
    loose = page.add("input", aria_label="Newsletter")
    assert page.scanned(field).form == (
        "checkout",
        "checkout-form",
        "https://shop.example/pay",
        "post",
    )
    assert page.scanned(loose).form is None


# -- SPEC S2: values, options and states ------------------------------------------------------


def test_text_field_reports_its_value() -> None:  # SPEC S2
    page = PageRows()
    field = page.add("input", aria_label="City", value="Lisbon")
    assert page.scanned(field).value == "Lisbon"


def test_contenteditable_value_is_its_text() -> None:  # SPEC S2
    page = PageRows()
    editor = page.add("div", contenteditable=True, aria_label="Comment")
    page.add("p", editor, contenteditable=True, own_text="Looks good")
    assert page.scanned(editor).value == "Looks good"


def test_select_reports_options_and_the_chosen_value() -> None:  # SPEC S2
    page = PageRows()
    options = [
        ["s", "Small", False, False],
        ["m", "Medium", True, False],
        ["xl", "XL", False, True],
    ]
    size = page.add("select", aria_label="Size", options=options)
    element = page.scanned(size)
    assert element.options == (
        ("s", "Small", False, False),
        ("m", "Medium", True, False),
        ("xl", "XL", False, True),
    )
    assert element.value == "m"


def test_multiple_select_reports_every_chosen_value() -> None:  # SPEC S2
    page = PageRows()
    options = [["r", "Red", True, False], ["g", "Green", False, False], ["b", "Blue", True, False]]
    colours = page.add("select", aria_label="Colours", multiple=True, options=options)
    assert page.scanned(colours).value == ["r", "b"]


def test_select_with_nothing_chosen_reports_an_empty_value() -> None:  # SPEC S2
    page = PageRows()
    size = page.add("select", aria_label="Size", options=[["s", "Small", False, False]])
    assert page.scanned(size).value == ""


@pytest.mark.parametrize(("checked", "state"), [(0, False), (1, True), (2, "mixed")])
def test_native_checkbox_state(checked: int, state: object) -> None:  # SPEC S2
    page = PageRows()
    box = page.add("input", type="checkbox", checked=checked, aria_label="Agree")
    element = page.scanned(box)
    assert element.checked == state
    assert element.value is None


@pytest.mark.parametrize(
    ("aria_checked", "state"), [("false", False), ("true", True), ("mixed", "mixed"), ("", False)]
)
def test_aria_checked_state(aria_checked: str, state: object) -> None:  # SPEC S2
    page = PageRows()
    switch = page.add("div", role="switch", aria_checked=aria_checked, aria_label="Dark mode")
    assert page.scanned(switch).checked == state


def test_aria_states_are_reported() -> None:  # SPEC S2
    page = PageRows()
    tab = page.add(
        "div",
        role="tab",
        aria_selected="true",
        aria_expanded="false",
        aria_disabled="true",
        aria_label="Billing",
    )
    element = page.scanned(tab)
    assert (element.selected, element.expanded, element.disabled) == (True, False, True)


def test_native_disabled_readonly_and_required_are_reported() -> None:  # SPEC S2
    page = PageRows()
    field = page.add("input", aria_label="Code", disabled=True, readonly=True, required=True)
    element = page.scanned(field)
    assert (element.disabled, element.readonly, element.required) == (True, True, True)


def test_aria_required_and_readonly_are_reported() -> None:  # SPEC S2
    page = PageRows()
    box = page.add(
        "div", role="textbox", aria_required="true", aria_readonly="true", aria_label="Bio"
    )
    element = page.scanned(box)
    assert (element.required, element.readonly) == (True, True)


# -- SPEC P5: sensitive fields ----------------------------------------------------------------


def test_password_field_is_sensitive_and_its_value_withheld() -> None:  # SPEC P5
    page = PageRows()
    field = page.add("input", type="password", aria_label="Login secret", value="hunter2")
    element = page.scanned(field)
    assert (element.sensitive, element.value) == (True, None)


@pytest.mark.parametrize(
    "autocomplete", ["one-time-code", "cc-number", "cc-csc", "billing cc-exp", "new-password"]
)
def test_sensitive_autocomplete_tokens(autocomplete: str) -> None:  # SPEC P5
    page = PageRows()
    field = page.add("input", autocomplete=autocomplete, aria_label="Field", value="4242")
    element = page.scanned(field)
    assert (element.sensitive, element.value) == (True, None)


@pytest.mark.parametrize(
    "label",
    [
        "Card number",
        "CVV",
        "One-time code",
        "PIN",
        "支付密码",
        "密码",
        "短信验证码",
        "银行卡号",
        "身份证号码",
    ],
)
def test_sensitive_labels_in_english_and_chinese(label: str) -> None:  # SPEC P5
    page = PageRows()
    page.add("label", label_for="f", own_text=label)
    field = page.add("input", id="f", value="123456")
    element = page.scanned(field)
    assert (element.sensitive, element.value) == (True, None)


def test_sensitive_detection_reads_the_placeholder_too() -> None:  # SPEC P5
    page = PageRows()
    field = page.add("input", aria_label="Step 2", placeholder="请输入验证码", value="8841")
    element = page.scanned(field)
    assert (element.sensitive, element.value) == (True, None)


def test_released_sensitive_values_are_kept_but_private_ones_never() -> None:  # SPEC P5
    # The authorization center's decision reaches the scan as release_sensitive; a page
    # owner's data-mao-private outranks it, also on a field that is sensitive as well.
    page = PageRows()
    password = page.add("input", type="password", aria_label="Password", value="hunter2")
    private_pin = page.add(
        "input", type="password", privacy="private", aria_label="Private PIN", value="9931"
    )
    notes = page.add("textarea", privacy="private", aria_label="Notes", value="my diagnosis")
    released = {
        e.index: e.value for e in scan_page(page.rows, VIEWPORT, release_sensitive=True).elements
    }
    assert released[password] == "hunter2"
    assert released[private_pin] is None and released[notes] is None
    masked = {e.index: e.value for e in scan_page(page.rows, VIEWPORT).elements}
    assert masked[password] is None


@pytest.mark.parametrize("label", ["Email", "用户名", "Shipping address", "Spinner speed", "Topic"])
def test_ordinary_fields_are_not_sensitive(label: str) -> None:  # SPEC P5
    page = PageRows()
    field = page.add("input", aria_label=label, value="visible")
    element = page.scanned(field)
    assert (element.sensitive, element.value) == (False, "visible")


@pytest.mark.parametrize("kind", ["radio", "checkbox"])
def test_a_payment_choice_is_not_sensitive(kind: str) -> None:  # SPEC P5 (no false positives)
    page = PageRows()
    page.add("label", label_for="card", own_text="Credit card")
    choice = page.add("input", id="card", type=kind, name="payment", value="card")
    assert page.scanned(choice).sensitive is False


def test_a_card_number_beside_a_payment_choice_stays_masked() -> None:  # SPEC P5
    page = PageRows()
    page.add("input", type="radio", aria_label="Credit card", name="payment")
    number = page.add("input", aria_label="Credit card number", value="4242424242424242")
    assert (page.scanned(number).sensitive, page.scanned(number).value) == (True, None)


# -- SPEC S3: labels structurally tied to a nameless control -----------------------------------


def _form_row(page: PageRows, label: str) -> tuple[int, int]:
    """A component library's form row: a label column and a control column, the control
    nested a few wrappers deep in it (antd Form.Item without a name: no label[for])."""
    row = page.add("div")
    label_column = page.add("div", row)
    page.add("label", label_column, own_text=label, title=label)
    control_column = page.add("div", row)
    inner = page.add("div", page.add("div", control_column))
    return row, inner


def test_a_nameless_switch_takes_its_form_rows_label() -> None:  # SPEC S3
    page = PageRows()
    _row, inner = _form_row(page, "Subscribe to newsletter")
    switch = page.add("button", inner, role="switch", aria_checked="false")
    page.add("span", switch)
    element = page.scanned(switch)
    assert (element.label, element.label_source, element.name_from) == (
        "Subscribe to newsletter",
        "nearby",
        "nearby",
    )


def test_a_custom_slider_handle_without_role_takes_its_form_rows_label() -> None:  # SPEC S3
    page = PageRows()
    _row, inner = _form_row(page, "Volume")
    page.add("div", inner, width=200.0, height=4.0)  # the track: no text
    handle = page.add("div", inner, tabindex="0", width=12.0, height=12.0)
    element = page.scanned(handle)
    assert (element.role, element.label, element.name_from) == ("generic", "Volume", "nearby")


# SPEC S3
def test_a_slider_keeping_its_value_in_a_hidden_input_takes_its_form_rows_label() -> None:
    # Vuetify: a display:none input beside the thumb holds the value; nobody sees or uses it.
    page = PageRows()
    _row, inner = _form_row(page, "Volume")
    page.add("input", inner, display="none", tabindex="-1", value="0")
    thumb = page.add("div", inner, role="slider", tabindex="0", aria_value="0")
    assert (page.scanned(thumb).label, page.scanned(thumb).name_from) == ("Volume", "nearby")


def test_a_visible_field_beside_a_slider_still_keeps_the_row_label_from_it() -> None:  # SPEC S3
    page = PageRows()
    _row, inner = _form_row(page, "Volume")
    page.add("input", inner, type="number")
    thumb = page.add("div", inner, role="slider", tabindex="0", aria_value="0")
    assert page.scanned(thumb).label == ""


def test_a_nameless_radio_group_takes_its_form_rows_label() -> None:  # SPEC S3
    # A star rating: a radiogroup list the row's label[for] points at (a ul is not labelable).
    page = PageRows()
    _row, inner = _form_row(page, "Rating")
    group = page.add("ul", inner, role="radiogroup", tabindex="0")
    for n in range(5):
        page.add(
            "div",
            page.add("li", group),
            role="radio",
            aria_checked="false",
            tabindex="0",
            aria_label=f"star {n}",
        )
    assert (page.scanned(group).label, page.scanned(group).name_from) == ("Rating", "nearby")


# SPEC S1, S3
def test_a_roleless_div_its_classes_call_a_switch_is_a_switch_named_by_its_form_row() -> None:
    # TDesign Vue: div.t-switch (no role, no tabindex, a pointer); "t-is-checked" when on.
    page = PageRows()
    _row, inner = _form_row(page, "Notifications")
    switch = page.add("div", inner, cursor="pointer", class_state="checked switch")
    page.add("span", switch, cursor="pointer")
    element = page.scanned(switch)
    assert (element.role, element.label, element.name_from, element.checked) == (
        "switch",
        "Notifications",
        "nearby",
        True,
    )


# SPEC S2
def test_a_switch_without_aria_checked_states_off_when_its_classes_say_nothing_checked() -> None:
    page = PageRows()
    _row, inner = _form_row(page, "Notifications")
    on = page.add("button", inner, role="switch", class_state="checked switch")
    off = page.add("button", inner, role="switch", class_state="switch")
    assert (page.scanned(on).checked, page.scanned(off).checked) == (True, False)


def _stars(page: PageRows, parent: int, count: int = 5) -> list[int]:
    """TDesign's rate: li items with a pointer and two star icons each, no role, no text."""
    stars = []
    for _ in range(count):
        star = page.add("li", parent, cursor="pointer")
        page.add("svg", page.add("div", star, cursor="pointer"), cursor="pointer")
        page.add("svg", page.add("div", star, cursor="pointer"), cursor="pointer")
        stars.append(star)
    return stars


# SPEC S1, S3
def test_nameless_same_shaped_stars_are_named_by_their_place_after_the_rows_label() -> None:
    page = PageRows()
    _row, inner = _form_row(page, "Rating")
    stars = _stars(page, page.add("ul", page.add("div", inner)))
    labels = [(page.scanned(star).label, page.scanned(star).name_from) for star in stars]
    assert labels == [(f"Rating {n} of 5", "nearby") for n in range(1, 6)]


def test_items_of_different_shapes_or_with_text_get_no_place_names() -> None:  # SPEC S3
    page = PageRows()
    row = page.add("ul")
    stars = _stars(page, row, 4)
    page.add("li", row, cursor="pointer", own_text="Clear")
    other = page.add("ul")
    icons = _stars(page, other, 3)
    page.add("span", page.add("li", other, cursor="pointer"), display="inline")
    assert {page.scanned(i).label for i in stars + icons} == {""}


def test_a_switch_takes_the_label_after_it_in_its_own_container() -> None:  # SPEC S3
    page = PageRows()
    box = page.add("div")
    switch = page.add("div", box, role="switch", tabindex="0")
    page.add("span", box, own_text="Dark mode")
    assert (page.scanned(switch).label, page.scanned(switch).name_from) == ("Dark mode", "nearby")


def test_a_container_holding_another_control_gives_no_label() -> None:  # SPEC S3
    # The text in the row belongs to the field before the switch, not to the switch.
    page = PageRows()
    row = page.add("div")
    page.add("span", row, own_text="Age")
    page.add("input", row, type="number")
    switch = page.add("div", page.add("div", row), role="switch", tabindex="0")
    element = page.scanned(switch)
    assert (element.label, element.name_from) == ("", "")


def test_a_text_field_never_takes_a_label_from_past_its_form() -> None:  # SPEC S3
    page = PageRows()
    page.add("h2", own_text="Checkout")
    form = page.add("form")
    field = page.add("input", page.add("div", form))
    assert page.scanned(field).label == ""


def test_a_nameless_combobox_takes_the_name_of_the_field_inside_it() -> None:  # SPEC S3
    page = PageRows()
    box = page.add("div", role="combobox", aria_expanded="false", tabindex="0")
    page.add("input", page.add("div", box), placeholder="Select tags")
    element = page.scanned(box)
    assert (element.label, element.label_source, element.name_from) == (
        "Select tags",
        "inner",
        "inner",
    )


def _replaced_select(page: PageRows, *, select_hidden: bool) -> int:
    """A jQuery select plugin's markup: the labelled <select> (hidden by the plugin) and,
    right after it, the plugin's container with a nameless combobox and its search field."""
    row = page.add("div")
    page.add("label", row, label_for="tags", own_text="Tags")
    page.add("select", row, id="tags", multiple=True, aria_hidden="true" if select_hidden else "")
    container = page.add("span", page.add("span", row))
    box = page.add("span", container, role="combobox", aria_expanded="false", tabindex="-1")
    page.add("textarea", box, role="searchbox", aria_label="Search")
    return box


def test_a_widget_drawn_in_place_of_a_hidden_select_takes_the_selects_label() -> None:  # SPEC S3
    page = PageRows()
    box = _replaced_select(page, select_hidden=True)
    element = page.scanned(box)
    assert (element.label, element.label_source, element.name_from) == ("Tags", "nearby", "nearby")


def test_a_visible_select_before_a_widget_does_not_name_it() -> None:  # SPEC S3
    # Two controls side by side: the select's label is the select's own.
    page = PageRows()
    box = _replaced_select(page, select_hidden=False)
    assert page.scanned(box).label == "Search"


def test_a_field_named_only_by_its_placeholder_takes_its_form_rows_label() -> None:  # SPEC S3
    page = PageRows()
    _row, inner = _form_row(page, "City")
    field = page.add("input", inner, placeholder="Please select", readonly=True)
    element = page.scanned(field)
    assert (element.label, element.name_from, element.placeholder) == (
        "City",
        "nearby",
        "Please select",
    )


def test_a_placeholder_names_a_field_before_a_heading_above_it() -> None:  # SPEC S3
    # HTML-AAM: the placeholder is the field's name; text around it is only a fallback.
    page = PageRows()
    card = page.add("div")
    page.add("h3", card, own_text="Find an order")
    field = page.add("input", page.add("div", card), placeholder="Order number")
    element = page.scanned(field)
    assert (element.label, element.label_source, element.name_from) == (
        "Order number",
        "placeholder",
        "",
    )


def test_a_placeholder_names_a_field_before_its_rows_plain_text() -> None:  # SPEC S3
    page = PageRows()
    row = page.add("div")
    page.add("span", row, own_text="Labels")
    field = page.add("input", page.add("div", row), placeholder="Select tags")
    assert (page.scanned(field).label, page.scanned(field).label_source) == (
        "Select tags",
        "placeholder",
    )


def test_a_title_names_a_field_before_a_heading_above_it() -> None:  # SPEC S3
    page = PageRows()
    card = page.add("div")
    page.add("h3", card, own_text="Coupons")
    field = page.add("input", page.add("div", card), title="Coupon code")
    assert (page.scanned(field).label, page.scanned(field).label_source) == ("Coupon code", "title")


def _css_switch(page: PageRows, row: int, input_type: str = "checkbox", role: str = "") -> int:
    """The classic CSS toggle: a <label> wrapping a hidden checkbox and the knob users click
    (a pointer-cursor span); the label holds no text. The label is what is listed: the
    element users click, standing for the hidden input."""
    wrapper = page.add("label", row, width=40.0, height=20.0)
    page.add("input", wrapper, type=input_type, role=role, opacity=0.0, width=0.0, height=0.0)
    page.add("span", wrapper, cursor="pointer", width=40.0, height=20.0)
    return wrapper


def test_a_css_switch_in_a_form_row_takes_the_rows_label() -> None:  # SPEC S3
    page = PageRows()
    row = page.add("div")
    page.add("span", row, own_text="Email alerts")
    switch = _css_switch(page, row, role="switch")
    element = page.scanned(switch)
    assert (element.role, element.label, element.name_from) == ("switch", "Email alerts", "nearby")


def test_a_css_checkbox_in_a_form_row_takes_the_label_column() -> None:  # SPEC S3
    page = PageRows()
    row = page.add("div")
    page.add("label", page.add("div", row), own_text="Dark mode")
    box = _css_switch(page, page.add("div", row))
    element = page.scanned(box)
    assert (element.role, element.label, element.name_from) == ("checkbox", "Dark mode", "nearby")


def _rail_slider(page: PageRows, label: str, **thumb: Any) -> int:
    """A slider of divs: a positioned rail 200 x 6 and an absolutely positioned thumb on it."""
    row = page.add("div")
    page.add("div", row, own_text=label)
    rail = page.add(
        "div", page.add("div", row), position="relative", x=100.0, y=10.0, width=200.0, height=6.0
    )
    return page.add(
        "div", rail, position="absolute", x=130.0, y=5.0, width=16.0, height=16.0, **thumb
    )


def test_a_roleless_thumb_with_a_drag_cursor_is_listed_as_a_slider() -> None:  # SPEC S1, S3
    page = PageRows()
    thumb = _rail_slider(page, "Volume", cursor="grab")
    element = page.scanned(thumb)
    assert (element.role, element.kind, element.label, element.name_from) == (
        "slider",
        kind_of("slider", "div"),
        "Volume",
        "nearby",
    )
    # The ref's key keeps the role the row states: a fresh row of the same thumb matches it.
    assert element.key[1] == "generic"


def test_a_focusable_roleless_thumb_is_a_slider() -> None:  # SPEC S1
    page = PageRows()
    thumb = _rail_slider(page, "Opacity", tabindex="0")
    assert page.scanned(thumb).role == "slider"


def test_the_thumb_of_a_slider_the_page_marks_up_is_not_another_slider() -> None:  # SPEC S1
    # A library puts role=slider on the widget and a focusable thumb inside it.
    page = PageRows()
    thumb = _rail_slider(page, "Volume", tabindex="0")
    rail = page.rows[thumb][F.PARENT]
    page.rows[page.rows[rail][F.PARENT]][F.ROLE] = "slider"
    roles = {e.index: e.role for e in page.scan()}
    assert roles[thumb] == "generic" and list(roles.values()).count("slider") == 1


def test_a_drag_cursor_off_a_rail_lists_nothing() -> None:  # SPEC S1 (no flood)
    # A draggable card or a resize handle is not a slider's thumb: no rail under it.
    page = PageRows()
    card = page.add("div", position="relative", width=200.0, height=120.0)
    handle = page.add("div", card, position="absolute", cursor="grab", width=16.0, height=16.0)
    assert handle not in page.listed()


def test_a_knob_inside_a_short_toggle_is_no_slider() -> None:  # SPEC S1
    page = PageRows()
    toggle = page.add("div", position="relative", cursor="pointer", width=36.0, height=18.0)
    page.add("span", toggle, position="absolute", width=14.0, height=14.0)
    assert page.scanned(toggle).role == "generic"


def _number_field(
    page: PageRows, stepper_boxes: list[tuple[float, float]], *, field_type: str = "number"
) -> list[int]:
    wrap = page.add("div")
    page.add("label", wrap, own_text="Quantity", label_for="qty")
    page.add("input", wrap, id="qty", type=field_type, value="2")
    handlers = page.add("div", wrap)
    return [
        page.add("span", handlers, cursor="pointer", x=x, y=y, width=20.0, height=12.0)
        for x, y in stepper_boxes
    ]


def test_stacked_steppers_of_a_number_field_are_named_increase_and_decrease() -> None:  # SPEC S3
    page = PageRows()
    up, down = _number_field(page, [(200.0, 10.0), (200.0, 22.0)])
    assert (page.scanned(up).label, page.scanned(up).name_from) == ("Increase Quantity", "stepper")
    assert page.scanned(down).label == "Decrease Quantity"


def test_steppers_on_either_side_of_a_number_field_are_named_by_side() -> None:  # SPEC S3
    page = PageRows()
    minus, plus = _number_field(page, [(10.0, 10.0), (200.0, 10.0)])
    assert (page.scanned(minus).label, page.scanned(plus).label) == (
        "Decrease Quantity",
        "Increase Quantity",
    )


def test_two_icon_buttons_beside_a_text_field_are_not_steppers() -> None:  # SPEC S3
    page = PageRows()
    clear, _search = _number_field(page, [(200.0, 10.0), (220.0, 10.0)], field_type="text")
    assert page.scanned(clear).name_from != "stepper"


# -- SPEC S1, S9: items of delegated-listener lists and popups, new elements -----------------


def _fresh_scan(page: PageRows) -> dict[int, object]:
    return {e.index: e for e in scan_page(page.rows, VIEWPORT, mark_new=True).elements}


def test_plain_children_of_a_listbox_are_items() -> None:  # SPEC S1, S9
    page = PageRows()
    box = page.add("div", role="listbox")
    apple = page.add("div", box, own_text="Apple")
    pear = page.add("div", box, own_text="Pear")
    assert {apple, pear} <= page.listed()
    assert page.scanned(apple).name_from == "text"


def test_appeared_items_of_a_list_get_refs_and_are_marked_new() -> None:  # SPEC S9
    page = PageRows()
    search = page.add("input", aria_label="Search", placeholder="Fruit")
    suggestions = page.add("ul", fresh=True)
    items = [
        page.add("li", suggestions, own_text=name, fresh=True) for name in ("Apple", "Apricot")
    ]
    listed = _fresh_scan(page)
    assert all(listed[item].new and listed[item].label for item in items)
    assert listed[search].new is False  # the search field was there before
    # Without a previous snapshot to compare with, nothing is new and the list stays text.
    assert not set(items) & page.listed()


def test_items_of_a_list_that_was_already_there_stay_text() -> None:  # SPEC S9 (no flood)
    page = PageRows()
    bullets = page.add("ul")
    items = [page.add("li", bullets, own_text=text) for text in ("Free shipping", "30-day returns")]
    assert not set(items) & set(_fresh_scan(page))


# SPEC S9
def test_an_appeared_popup_lists_its_repeated_items_but_not_its_title_or_their_parts() -> None:
    page = PageRows()
    popup = page.add("div", position="absolute", fresh=True)
    title = page.add("div", popup, own_text="Suggestions", fresh=True)
    body = page.add("div", popup, fresh=True)
    items = []
    for name in ("Paris", "Parma"):
        item = page.add("div", body, fresh=True)
        page.add("span", item, fresh=True, width=0.0)  # an icon
        page.add("span", item, own_text=name, fresh=True)
        items.append(item)
    note = page.add("p", popup, own_text="Type to search more cities", fresh=True)
    listed = _fresh_scan(page)
    assert set(items) <= set(listed) and {title, body, note}.isdisjoint(listed)
    assert [listed[item].label for item in items] == ["Paris", "Parma"]


# SPEC S9 (no flood)
def test_an_appeared_group_outside_any_positioned_subtree_stays_text() -> None:
    page = PageRows()
    section = page.add("div", fresh=True)
    rows = [page.add("div", section, own_text=text, fresh=True) for text in ("Order 1", "Order 2")]
    assert not set(rows) & set(_fresh_scan(page))


def test_items_with_a_control_inside_are_not_items() -> None:  # SPEC S9
    page = PageRows()
    box = page.add("div", role="menu")
    entry = page.add("div", box, own_text="Rename")
    button = page.add("button", entry, own_text="Go")
    listed = page.listed()
    assert button in listed and entry not in listed


# -- frames, placeholders, clipping, custom controls, outline ----------------------------------


def test_overflow_hidden_ancestor_clips_an_element_away() -> None:  # SPEC S4
    page = PageRows()
    box = page.add("div", overflow="hidden", x=0.0, y=0.0, width=200.0, height=30.0)
    page.add("button", box, own_text="Clipped", x=0.0, y=40.0)
    assert page.listed(include_offscreen=True) == set()


def test_absolutely_positioned_child_escapes_the_clip_of_a_static_ancestor() -> None:  # SPEC S4
    page = PageRows()
    box = page.add("div", overflow="hidden", x=0.0, y=0.0, width=200.0, height=30.0)
    menu = page.add("button", box, own_text="Popup", x=0.0, y=40.0, position="absolute")
    assert page.listed() == {menu}


def test_scroll_container_hides_nothing_but_takes_elements_out_of_view() -> None:  # SPEC S4
    page = PageRows()
    box = page.add("div", overflow="auto", x=0.0, y=0.0, width=200.0, height=30.0)
    inside = page.add("button", box, own_text="Scrolled", x=0.0, y=40.0)
    assert page.listed() == set()
    assert page.scanned(inside, include_offscreen=True).in_viewport is False


def test_content_visibility_hidden_hides_descendants() -> None:  # SPEC S4
    page = PageRows()
    box = page.add("div", content_visibility="hidden")
    page.add("button", box, own_text="Skipped")
    assert page.listed(include_offscreen=True) == set()


def test_inert_subtree_is_not_listed() -> None:  # SPEC S4
    page = PageRows()
    box = page.add("div", inert=True)
    page.add("button", box, own_text="Behind modal")
    assert page.listed() == set()


def test_cross_origin_frame_and_closed_shadow_host_are_placeholders() -> None:  # SPEC S6
    page = PageRows()
    frame = page.add("iframe", frame="cross", title="Payment")
    host = page.add("secure-pad", shadow="closed", aria_label="PIN pad")
    frame_el, host_el = page.scanned(frame), page.scanned(host)
    assert (frame_el.kind, frame_el.opaque, frame_el.label) == (
        "opaque",
        "cross_origin_frame",
        "Payment",
    )
    assert (host_el.kind, host_el.opaque) == ("opaque", "closed_shadow_root")


def test_hidden_checkbox_is_listed_through_its_visible_label() -> None:  # SPEC S1
    page = PageRows()
    label = page.add("label", own_text="Remember me", display="inline-block")
    checkbox = page.add("input", label, type="checkbox", checked=1, display="none")
    element = page.scanned(label)
    assert (element.role, element.checked, element.label, element.control) == (
        "checkbox",
        True,
        "Remember me",
        checkbox,
    )


def test_label_wrapping_a_visible_control_collapses_into_it() -> None:  # SPEC S1
    page = PageRows()
    label = page.add("label", own_text="Agree", cursor="pointer")
    checkbox = page.add("input", label, type="checkbox", checked=0, cursor="pointer")
    assert page.listed() == {checkbox}


def test_pointer_span_inside_a_button_is_part_of_the_button() -> None:  # SPEC S1
    page = PageRows()
    button = page.add("button", own_text="Save")
    page.add("span", button, cursor="pointer", own_text="icon")
    assert page.listed() == {button}


# SPEC S6
def test_elements_in_a_same_origin_frame_get_top_viewport_rects_and_a_frame_label() -> None:
    page = PageRows()
    frame = page.add(
        "iframe", frame="same", title="Embedded form", x=100.0, y=200.0, width=400.0, height=200.0
    )
    html = page.add("html", frame, scope=1)
    body = page.add("body", html, scope=1)
    button = page.add("button", body, scope=1, own_text="Inside", x=10.0, y=20.0)
    scopes = [["document", 0, -1], ["document", 1, frame]]
    frames = [[-1, "top", 0, 0, 1280, 800], [frame, "inner", 105.0, 205.0, 400, 200]]
    from mao_page.snapshot.scanner import scan

    from .page_rows import VIEWPORT

    found = {e.index: e for e in scan(page.rows, VIEWPORT, scopes=scopes, frames=frames)}
    assert found[button].rect[:2] == (115.0, 225.0)
    assert found[button].frame == "frame 1: Embedded form"


def test_ids_resolve_within_their_own_tree_scope() -> None:  # SPEC S3, S6
    page = PageRows()
    page.add("span", id="lbl", own_text="Outer label")
    host = page.add("div", shadow="open")
    page.add("span", host, id="lbl", own_text="Shadow label", scope=1)
    field = page.add("input", host, aria_labelledby="lbl", scope=1)
    assert page.scanned(field).label == "Shadow label"


def test_outline_nests_elements_under_their_form_and_skips_empty_containers() -> None:  # SPEC S7
    page = PageRows()
    page.add("nav", own_text="")
    form = page.add("form", aria_label="Login")
    field = page.add("input", form, aria_label="Email")
    page.add("h2", own_text="Welcome")
    outline = page.outline()
    kinds = [(n.kind, n.depth, n.role or n.name) for n in outline]
    assert kinds == [("container", 0, "form"), ("element", 1, ""), ("heading", 0, "heading")]
    assert outline[1].element == 0 and page.scanned(field).label == "Email"


def test_outline_reads_a_table_row_as_one_text_line() -> None:  # SPEC S7
    page = PageRows()
    table = page.add("table", display="table")
    row = page.add("tr", table, display="table-row")
    page.add("td", row, display="table-cell", own_text="#1001")
    page.add("td", row, display="table-cell", own_text="12.50")
    texts = [n.name for n in page.outline() if n.kind == "text"]
    assert texts == ["#1001 | 12.50"]


@pytest.mark.parametrize(
    ("kind", "fillable"),
    [
        ("text", True),
        ("range", True),
        ("color", True),
        ("date", True),
        ("checkbox", False),
        ("file", False),
        ("submit", False),
    ],
)
def test_which_inputs_take_a_filled_value(kind: str, fillable: bool) -> None:  # SPEC A1
    from mao_page.snapshot.scanner import is_fillable

    from .page_rows import fact_row

    assert is_fillable(fact_row("input", type=kind)) is fillable


def test_roles_of_all_rows_agree_with_role_of_each_row() -> None:  # SPEC S1, S2
    # DocumentIndex takes every row's role from the tag column at once; the rows the tag does
    # not decide (role attribute, attribute-decided tags, contenteditable) go through role_of.
    page = PageRows()
    page.add("a", href="/x")
    page.add("a")
    page.add("input", type="checkbox")
    page.add("input", list=1)
    page.add("select", multiple=True)
    page.add("img", alt="")
    page.add("img", alt="Logo")
    page.add("section")
    page.add("section", aria_label="News")
    page.add("form")
    page.add("div", role="presentation", tabindex="0")
    page.add("div", role="bogus tab")
    page.add("div", contenteditable=True)
    page.add("p", contenteditable=True)
    page.add("custom-element")
    # roles_of_rows spells implicit_role's attribute rules over the columns: every rule's
    # both ways, so that the two copies cannot drift apart unnoticed.
    page.add("area", href="/y")
    page.add("area")
    page.add("input", type="range", list=1)
    page.add("input", type="email", list=1)
    page.add("input", type="search")
    page.add("select", list=2)
    page.add("select")
    page.add("img", alt="", title="Chart")
    page.add("img", alt="", aria_label="Chart")
    page.add("img", alt="", aria_labelledby="cap")
    page.add("section", aria_labelledby="h")
    page.add("form", aria_label="Login")
    page.add("form", title="Search")
    page.add("div", cursor="pointer", class_state="switch")
    page.add("span", class_state="checked")
    page.add("button", role="switch", class_state="checked switch")
    rows = page.rows
    assert roles_of_rows(rows, F.columns_of(rows)) == [role_of(row) for row in rows]
    assert [role_of(row) for row in rows[-3:]] == ["switch", "", "switch"]


def test_a_scanned_elements_key_is_key_of_its_row() -> None:  # SPEC R2
    # _describe builds every key from whole columns; refs.resolve re-checks a ref with
    # key_of on one fresh row. Were the two to differ, fresh refs would read as stale (or a
    # changed element as the same one).
    page = PageRows()
    page.add("button", own_text="Buy", title="Buy now")
    page.add("a", href="/x", own_text="Home", aria_label="Go home")
    page.add("input", type="email", id="mail", name="email", placeholder="you@example.com")
    page.add("label", label_for="mail", own_text="Email")
    page.add("select", name="size", aria_labelledby="size-label")
    page.add("div", role="button", tabindex="0", own_text="Custom")
    page.add("div", contenteditable=True, own_text="Notes")
    page.add("div", cursor="pointer", own_text="Row")
    elements = page.scan()
    assert len(elements) == 7
    for element in elements:
        row = page.rows[element.control if element.control is not None else element.index]
        assert element.key == key_of(row, role_of(row))
