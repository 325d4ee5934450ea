"""The input model (SPEC A7, A3): one virtual pointer whose hover state CSS sees, clicks at
the point a real pointer would hit, double and right clicks, fills that keep the page's
suggestions, drags between refs. Each test reads the page's own state after the action.

One page (fixtures/input_model.html) serves every test; ``window.__mount()`` rebuilds it.
"""

from __future__ import annotations

import pytest
from frameworks import AgentView, failure, fixture_body


@pytest.fixture
def view(reusable_pages) -> AgentView:
    return AgentView(
        reusable_pages.open("input-model", fixture_body("input_model.html"), title="Input model")
    )


def labels(view: AgentView) -> set[str]:
    return {e.get("label", "") for e in view.snapshot["elements"]}


def outcome(result: dict) -> dict:
    return result["result"]["steps"][0]["outcome"]


# -- CSS :hover (SPEC A7) -------------------------------------------------------------------


def test_a_button_shown_by_a_rows_hover_rule_is_listed_after_hovering_the_row_and_works(view):
    assert "Delete invoice 2" not in labels(view)
    result = view.do("page_hover", "Invoice 2", "link")
    assert outcome(result)["effect"] == "changed" and "style" in outcome(result)["effects"]
    after = AgentView(view.embedded)
    assert "Delete invoice 2" in labels(after) and "Delete invoice 1" not in labels(after)
    after.do("page_click", "Delete invoice 2", "button")
    assert view.state()["deleted"] == ["2"]


def test_a_click_on_a_hover_shown_button_after_the_pointer_moved_on_hovers_its_row_first(view):
    view.do("page_hover", "Invoice 2", "link")
    shown = AgentView(view.embedded)
    shown.do("page_hover", "Tools", "button")  # the pointer leaves the row: the button hides
    result = shown.do("page_click", "Delete invoice 2", "button")
    assert view.state()["deleted"] == ["2"]
    assert "Invoice 2" in outcome(result)["hoveredHostFirst"]


def test_a_css_only_menu_opens_on_hover_and_its_item_can_be_clicked(view):
    view.do("page_hover", "Tools", "button")
    after = AgentView(view.embedded)
    after.do("page_click", "Export all", "menuitem")
    assert view.state()["tool"] == "export"


def test_a_shadow_roots_host_hover_rule_applies(view):
    assert "Shadow action" not in labels(view)
    view.do("page_hover", "Shadow row", "link")
    after = AgentView(view.embedded)
    after.do("page_click", "Shadow action", "button")
    assert view.state()["shadowClicks"] == 1


def test_a_hover_rule_inserted_after_load_applies(view):
    assert "Late action" not in labels(view)
    view.do("page_hover", "Late row", "link")
    after = AgentView(view.embedded)
    after.do("page_click", "Late action", "button")
    assert view.state()["lateClicks"] == 1


def test_the_hover_markers_leave_with_the_pointer(view):
    view.do("page_hover", "Tools", "button")
    marked = view.state()["hoverMarked"]
    assert marked >= 3  # the button, the menu wrapper and their ancestors
    view.do("page_hover", "Counted", "textbox")
    menu_marked = "() => document.querySelector('.cssmenu').hasAttribute('data-mao-hover')"
    assert view.embedded.page.evaluate(menu_marked) is False


# -- the hit point (SPEC A1, A7) ------------------------------------------------------------


def test_a_click_on_a_readonly_combobox_under_its_placeholder_lands_on_the_placeholder(view):
    # The widget listens on its wrapper and ignores presses on the transparent input itself:
    # a real click at the input's centre lands on the placeholder text and opens the list.
    view.do("page_click", "Fruit", "combobox")
    assert view.state()["pickerOpened"] == 1
    after = AgentView(view.embedded)
    after.do("page_click", "Pear", "option")
    assert view.state()["fruit"] == "pear"


# -- double and right click (SPEC A7) ---------------------------------------------------------


def test_a_double_click_starts_editing_text_that_edits_on_double_click(view):
    view.do("page_click", "Quarterly report", clickCount=2)
    assert view.state()["editing"] is True
    after = AgentView(view.embedded)
    assert "Report title" in labels(after)


def test_a_double_click_sends_both_clicks_then_dblclick_with_their_details(view):
    page = view.embedded.page
    page.evaluate(
        """() => { window.__seen = [];
        for (const t of ['mousedown', 'mouseup', 'click', 'dblclick', 'pointerdown'])
          document.getElementById('context-target').addEventListener(t,
            (e) => window.__seen.push(`${t}:${e.detail}:${e.button}`)); }"""
    )
    view.do("page_click", "Context file", "button", clickCount=2)
    assert page.evaluate("() => window.__seen") == [
        "pointerdown:0:0", "mousedown:1:0", "mouseup:1:0", "click:1:0",
        "pointerdown:0:0", "mousedown:2:0", "mouseup:2:0", "click:2:0", "dblclick:2:0",
    ]


def test_a_right_click_opens_the_pages_context_menu_and_its_item_works(view):
    result = view.do("page_click", "Context file", "button", button="right")
    assert view.state()["contextOpened"] == 1
    assert outcome(result)["effect"] == "changed"
    after = AgentView(view.embedded)
    after.do("page_click", "Rename", "menuitem")
    assert view.state()["renamed"] == 1


# -- hover in React (SPEC A7): enter and leave derived from mouseover/mouseout pairs ----------


@pytest.fixture
def react_view(reusable_pages, mao_pages) -> AgentView:
    from frameworks import serve_vendor

    return AgentView(
        reusable_pages.open(
            "hover-react",
            fixture_body("hover_react.html"),
            head=serve_vendor(mao_pages, "mui"),
            title="React hover",
        )
    )


def test_hover_opens_a_mui_tooltip(react_view):
    # MUI names the button by its tooltip's title (aria-label).
    react_view.do("page_hover", "Opens the help center", "button")
    assert react_view.state()["tooltip"] == "Opens the help center"


def test_a_react_hover_menu_in_a_portal_opens_and_its_item_is_chosen(react_view):
    result = react_view.do("page_hover", "Share", "button")
    assert react_view.state()["menuOpen"] is True
    assert outcome(result)["effect"] == "changed"
    after = AgentView(react_view.embedded)
    # The pointer leaves the trigger for the portal's item: React sees the leave and the
    # enter on the menu, which keeps it open, and the click lands.
    after.do("page_click", "Copy link", "menuitem")
    assert react_view.state()["shared"] == "link"


def test_react_sees_one_enter_per_hover_and_none_while_the_pointer_stays(react_view):
    react_view.do("page_hover", "Counter", "button")
    react_view.do("page_hover", "Counter", "button")
    react_view.do("page_click", "Counter", "button")
    assert react_view.state()["enters"] == 1
    react_view.do("page_hover", "Opens the help center", "button")
    react_view.do("page_hover", "Counter", "button")
    assert react_view.state()["enters"] == 2


# -- leave the page tidy (SPEC A7) ------------------------------------------------------------


def test_a_multi_select_that_ignores_escape_is_closed_by_its_trigger_and_the_next_field_works(
    view,
):
    result = view.do("page_select", "Tags", "combobox", values=["Red", "Blue"])
    assert view.state()["tags"] == ["Red", "Blue"]
    assert view.embedded.page.is_hidden("#tag-list")
    assert outcome(result)["popupClosed"] is True and outcome(result)["closedWith"] == "trigger"
    AgentView(view.embedded).do("page_fill", "Counted", "textbox", value="next")
    assert view.state()["changes"]["counted"] == 1


# -- fill like a person (SPEC A3) -----------------------------------------------------------


def test_a_fill_sends_exactly_one_change_and_leaves_the_field(view):
    result = view.do("page_fill", "Counted", "textbox", value="forty two")
    state = view.state()
    assert state["changes"]["counted"] == 1 and state["blurs"]["counted"] == 1
    assert outcome(result)["value"] == "forty two"
    assert view.embedded.page.input_value("#counted") == "forty two"


def test_a_second_fill_of_the_same_value_sends_no_change(view):
    view.do("page_fill", "Counted", "textbox", value="same")
    AgentView(view.embedded).do("page_fill", "Counted", "textbox", value="same")
    assert view.state()["changes"]["counted"] == 1


def test_a_fill_answered_with_suggestions_keeps_them_open_and_lists_them(view):
    result = view.do("page_fill", "City", "combobox", value="Par")
    state = view.state()
    assert state["blurs"]["city"] == 0 and state["changes"]["city"] == 0
    assert state["focused"] == "city"
    assert outcome(result)["suggestions"]["texts"] == ["Paris", "Parma"]
    after = AgentView(view.embedded)
    after.do("page_click", "Parma", "option")
    assert view.state()["city"] == "Parma"


# -- drag between refs (SPEC A7) ----------------------------------------------------------------


def drag(view: AgentView, label: str, role: str | None, onto: str, onto_role: str | None):
    source = view.embedded.find(view.snapshot, label=label, role=role)
    destination = view.embedded.find(view.snapshot, label=onto, role=onto_role)
    result = view.embedded.call(
        "page_drag",
        snapshotId=view.snapshot["snapshotId"],
        elementId=source["elementId"],
        toElementId=destination["elementId"],
    )
    assert result["success"], failure(result)
    return outcome(result)


def test_html5_drag_and_drop_moves_a_card_to_the_other_list(view):
    done = drag(view, "Card A", None, "Card C", None)
    state = view.state()
    assert state["lists"] == {"todo": ["card-b"], "done": ["card-a", "card-c"]}
    assert state["events"] == ["dragstart:card-a", "drop:card-a>done", "dragend:move"]
    assert done["mode"] == "html5" and done["effect"] == "changed"


@pytest.fixture
def sortable_view(reusable_pages, mao_pages) -> AgentView:
    from frameworks import serve_vendor

    return AgentView(
        reusable_pages.open(
            "drag-sortable",
            fixture_body("drag_sortable.html"),
            head=serve_vendor(mao_pages, "sortablejs"),
            title="Sortable lists",
        )
    )


def test_sortablejs_native_mode_moves_an_item_to_the_other_list(sortable_view):
    done = drag(sortable_view, "Write spec", "link", "Ship spec", "link")
    state = sortable_view.state()
    assert state["lists"]["native-todo"] == ["n2"]
    assert sorted(state["lists"]["native-done"]) == ["n1", "n3"]
    assert state["ends"] and state["ends"][0].startswith("n1:native-todo>native-done")
    assert done["mode"] == "html5"


def test_sortablejs_pointer_mode_moves_an_item_to_the_other_list(sortable_view):
    done = drag(sortable_view, "Plan sprint", "link", "Close sprint", "link")
    state = sortable_view.state()
    assert state["lists"]["pointer-todo"] == ["p2"]
    assert sorted(state["lists"]["pointer-done"]) == ["p1", "p3"]
    assert state["ends"] and state["ends"][0].startswith("p1:pointer-todo>pointer-done")
    assert done["mode"] == "pointer"


def test_destroy_takes_the_hover_markers_and_the_sdks_sheets_away(reusable_pages):
    # SPEC A7: the twin rules live in sheets the SDK owns; nothing of them stays behind.
    embedded = reusable_pages.open(
        "input-model-destroyed", fixture_body("input_model.html"), title="Input model"
    )
    view = AgentView(embedded)
    view.do("page_hover", "Invoice 2", "link")
    page = embedded.page
    count = """() => [document.querySelectorAll('[data-mao-hover]').length,
        document.adoptedStyleSheets.length]"""
    marked, sheets = page.evaluate(count)
    assert marked > 0 and sheets == 1
    page.evaluate("() => MaoChat.destroy()")
    page.wait_for_function("() => !document.querySelector('[data-mao-hover]')")
    assert page.evaluate(count) == [0, 0]
    assert not page.is_visible("#row-2 .row-delete")
