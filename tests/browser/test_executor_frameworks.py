"""The executor against real frameworks: React 18 and Vue 3 controlled forms, and the
Ant Design 5 and Element Plus 2 component libraries, installed from npm at pinned versions
(frameworks.py). Everything goes through the agent's tools (inspect, then act on refs), and
every assertion reads the framework's own state through the fixture's ``window.__state()``,
never the DOM value: a value React or Vue did not see is a failed fill (SPEC A3).

Each fixture page boots the SDK once per module and mounts a fresh app for every test
(frameworks.ReusablePages), so tests stay independent without paying for Pyodide each time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from frameworks import AgentView, failure, fixture_body, serve_vendor


@dataclass(frozen=True, slots=True)
class Fixture:
    framework: str  # key of frameworks.VENDOR
    file: str
    age_42: Any  # how the framework stores "42" typed into the Age field
    model: str | None = None  # the key of ``__state()`` holding the form model; None: all of it

    def __str__(self) -> str:
        return self.framework


REACT = Fixture("react", "react_form.html", age_42="42")  # useState keeps the string
VUE = Fixture("vue", "vue_form.html", age_42=42)  # v-model on type=number casts to a number
# The component libraries keep the form model under ``values``.
ANTD = Fixture("antd", "antd_form.html", age_42=42, model="values")  # InputNumber: a number
ELEMENT_PLUS = Fixture("element-plus", "element_plus_form.html", age_42=42, model="values")

PLAIN_FORMS = [pytest.param(REACT, id="react"), pytest.param(VUE, id="vue")]
COMPONENT_LIBRARIES = [pytest.param(ANTD, id="antd"), pytest.param(ELEMENT_PLUS, id="element-plus")]


class Form(AgentView):
    def __init__(self, embedded: Any, fixture: Fixture) -> None:
        super().__init__(embedded)
        self.fixture = fixture

    def values(self) -> dict[str, Any]:
        """The form model as the framework holds it."""
        state = self.state()
        return state if self.fixture.model is None else state[self.fixture.model]


def check_then_uncheck(form: Form, label: str, role: str, key: str) -> None:
    """page_check, then page_uncheck: the framework's model follows each (SPEC A1, A3)."""
    for tool, expected in (("page_check", True), ("page_uncheck", False)):
        form.do(tool, label, role)
        assert form.values()[key] is expected, f"{key} after {tool}"


@pytest.fixture
def open_form(reusable_pages, mao_pages):
    """The fixture's page with a freshly mounted app (see ReusablePages), and its snapshot."""

    def open_(fixture: Fixture) -> Form:
        embedded = reusable_pages.open(
            fixture.framework,
            fixture_body(fixture.file),
            head=serve_vendor(mao_pages, fixture.framework),
            title=f"{fixture} form",
        )
        return Form(embedded, fixture)

    return open_


# ---------------------------------------------------------------------------------------
# React 18 and Vue 3: plain controls bound to framework state.
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("fixture", PLAIN_FORMS)
def test_fill_text_input_updates_framework_state(open_form, fixture):
    # SPEC A3: the native value setter plus input/change events reach useState / v-model.
    form = open_form(fixture)
    result = form.do("page_fill", "Name", value="Ada Lovelace")
    assert form.state()["name"] == "Ada Lovelace"
    assert result["result"]["steps"][0]["outcome"]["value"] == "Ada Lovelace"


@pytest.mark.parametrize("fixture", PLAIN_FORMS)
def test_fill_replaces_the_previous_value(open_form, fixture):
    form = open_form(fixture)
    form.do("page_fill", "Name", value="Ada")
    form.do("page_fill", "Name", value="Grace")
    assert form.state()["name"] == "Grace"


def test_fill_reports_a_value_the_app_reformatted(open_form):
    # SPEC A3: read back after acting; the app upper-cased the code, and the agent is told.
    form = open_form(REACT)
    result = form.do("page_fill", "Promo code", value="spring24")
    assert form.state()["code"] == "SPRING24"
    outcome = result["result"]["steps"][0]["outcome"]
    assert outcome["status"] == "reformatted" and outcome["value"] == "SPRING24"


def test_fill_that_the_app_reverts_is_a_verification_failure(open_form):
    # SPEC A3, A6: a controlled input whose onChange ignores edits snaps back; never "done".
    form = open_form(REACT)
    result = form.call("page_fill", "Account ID", value="B-200")
    assert form.state()["account"] == "A-100"
    assert result["success"] is False
    assert result["error"]["code"] == "verification_failed"
    assert result["error"]["details"]["status"] == "reverted"


@pytest.mark.parametrize("fixture", PLAIN_FORMS)
def test_fill_number_input_updates_framework_state(open_form, fixture):
    form = open_form(fixture)
    form.do("page_fill", "Age", value="42")
    assert form.state()["age"] == fixture.age_42


@pytest.mark.parametrize("fixture", PLAIN_FORMS)
def test_fill_date_input_uses_the_iso_value_format(open_form, fixture):
    # SPEC A1/A3: date inputs take their value format (yyyy-mm-dd).
    form = open_form(fixture)
    form.do("page_fill", "Start date", value="2024-05-17")
    assert form.state()["start"] == "2024-05-17"


@pytest.mark.parametrize("fixture", PLAIN_FORMS)
def test_fill_textarea_keeps_line_breaks(open_form, fixture):
    form = open_form(fixture)
    form.do("page_fill", "Notes", value="first line\nsecond line")
    assert form.state()["notes"] == "first line\nsecond line"


@pytest.mark.parametrize("fixture", PLAIN_FORMS)
@pytest.mark.parametrize("choice", ["de", "Germany"], ids=["by-value", "by-label"])
def test_select_native_option_by_value_or_label(open_form, fixture, choice):
    # SPEC A1: native select by option value or visible label (CONTRACT page_select `values`).
    form = open_form(fixture)
    form.do("page_select", "Country", values=[choice])
    assert form.state()["country"] == "de"


def test_select_native_multiple_updates_v_model_array(open_form):
    # SPEC A1: a native <select multiple> bound with v-model receives every chosen option.
    form = open_form(VUE)
    form.do("page_select", "Languages", values=["English", "ja"])
    assert form.state()["langs"] == ["en", "ja"]


@pytest.mark.parametrize("fixture", PLAIN_FORMS)
def test_check_and_uncheck_checkbox_update_framework_state(open_form, fixture):
    check_then_uncheck(open_form(fixture), "Subscribe", "checkbox", "subscribe")


@pytest.mark.parametrize("fixture", PLAIN_FORMS + COMPONENT_LIBRARIES)
def test_check_radio_moves_the_group_value(open_form, fixture):
    # A native radio group and the libraries' styled ones, all labelled "Pro".
    form = open_form(fixture)
    form.do("page_check", "Pro", "radio")
    assert form.values()["plan"] == "pro"


@pytest.mark.parametrize("fixture", PLAIN_FORMS)
def test_checking_an_already_checked_checkbox_changes_nothing(open_form, fixture):
    # check is idempotent: a second check must not toggle the box back off.
    form = open_form(fixture)
    form.do("page_check", "Subscribe", "checkbox")
    form.do("page_check", "Subscribe", "checkbox")
    assert form.state()["subscribe"] is True


@pytest.mark.parametrize("fixture", PLAIN_FORMS)
def test_batch_fills_the_whole_form_and_submits(open_form, fixture):
    # SPEC A5: one ordered batch; the submit handler sees every value the framework stored.
    form = open_form(fixture)
    step = form.step
    result = form.embedded.call(
        "page_fill",
        actions=[
            step("fill", "Name", value="Ada"),
            step("fill", "Age", value="42"),
            step("fill", "Start date", value="2024-05-17"),
            step("fill", "Notes", value="hello"),
            step("select", "Country", values=["Japan"]),
            step("check", "Subscribe", "checkbox"),
            step("check", "Pro", "radio"),
            step("click", "Save", "button"),
        ],
    )
    assert result["success"], failure(result)
    assert [s["success"] for s in result["result"]["steps"]] == [True] * 8
    assert result.get("stoppedAt") is None
    submitted = form.state()["submitted"]
    submitted.pop("langs", None)  # the Vue fixture also submits its untouched multi-select
    assert submitted == {
        "name": "Ada",
        "age": fixture.age_42,
        "start": "2024-05-17",
        "notes": "hello",
        "country": "jp",
        "subscribe": True,
        "plan": "pro",
    }


@pytest.mark.parametrize("fixture", PLAIN_FORMS)
def test_keyboard_text_types_into_the_focused_input(open_form, fixture):
    # SPEC A1: page_keyboard with a ref focuses it first, then types; the framework sees
    # the typed text and each key's keydown.
    form = open_form(fixture)
    form.do("page_keyboard", "Name", text="Bob")
    state = form.state()
    assert state["name"] == "Bob"
    # Character keys in order (a Shift keydown before "B" is what a real keyboard sends too).
    assert [key for key in state["keys"] if len(key) == 1] == ["B", "o", "b"]


@pytest.mark.parametrize("fixture", PLAIN_FORMS)
def test_keyboard_control_a_then_text_replaces_the_value(open_form, fixture):
    form = open_form(fixture)
    form.do("page_fill", "Name", value="Ada")
    form.do("page_keyboard", "Name", key="Control+a")
    form.do("page_keyboard", "Name", text="Grace")
    assert form.state()["name"] == "Grace"


@pytest.mark.parametrize("fixture", PLAIN_FORMS)
def test_keyboard_backspace_deletes_the_last_character(open_form, fixture):
    form = open_form(fixture)
    form.do("page_fill", "Name", value="Ada")
    form.do("page_keyboard", "Name", key="Backspace")
    assert form.state()["name"] == "Ad"


@pytest.mark.parametrize("fixture", PLAIN_FORMS)
def test_keyboard_enter_in_a_text_input_submits_the_form(open_form, fixture):
    # Implicit submission: Enter in a text field submits its form (HTML "implicit
    # submission"); synthetic key events do not do this by themselves, the executor must.
    form = open_form(fixture)
    form.do("page_fill", "Name", value="Ada")
    form.do("page_keyboard", "Name", key="Enter")
    state = form.state()
    assert "Enter" in state["keys"]
    assert state["submitted"] is not None and state["submitted"]["name"] == "Ada"


# ---------------------------------------------------------------------------------------
# Ant Design 5 and Element Plus 2: component libraries with portals and hidden inputs.
# Both fixtures use the same labels and keep the form model under ``values``.
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("fixture", COMPONENT_LIBRARIES)
def test_library_input_fill_updates_form_model(open_form, fixture):
    form = open_form(fixture)
    form.do("page_fill", "Name", "textbox", value="Ada Lovelace")
    assert form.values()["name"] == "Ada Lovelace"


@pytest.mark.parametrize("fixture", COMPONENT_LIBRARIES)
def test_library_input_number_fill_stores_a_number(open_form, fixture):
    form = open_form(fixture)
    form.do("page_fill", "Age", "spinbutton", value="42")
    assert form.values()["age"] == 42


@pytest.mark.parametrize("fixture", COMPONENT_LIBRARIES)
def test_library_select_in_a_portal_by_visible_label(open_form, fixture):
    # SPEC A1: an ARIA combobox whose listbox renders in a body-level portal; the executor
    # opens it, finds the option through aria-controls/aria-owns, chooses it, verifies.
    form = open_form(fixture)
    form.do("page_select", "City", "combobox", values=["Berlin"])
    assert form.values()["city"] == "berlin"


@pytest.mark.parametrize("fixture", COMPONENT_LIBRARIES)
def test_library_select_can_change_its_choice(open_form, fixture):
    form = open_form(fixture)
    form.do("page_select", "City", "combobox", values=["Berlin"])
    form.do("page_select", "City", "combobox", values=["Tokyo"])
    assert form.values()["city"] == "tokyo"


@pytest.mark.parametrize("fixture", COMPONENT_LIBRARIES)
def test_library_multiple_select_chooses_every_value(open_form, fixture):
    form = open_form(fixture)
    form.do("page_select", "Tags", "combobox", values=["Red", "Blue"])
    assert sorted(form.values()["tags"]) == ["blue", "red"]


@pytest.mark.parametrize("fixture", COMPONENT_LIBRARIES)
def test_library_select_with_an_unknown_option_fails_and_keeps_the_model(open_form, fixture):
    # SPEC A6: no such option is a structured failure, and the framework state is untouched.
    form = open_form(fixture)
    result = form.call("page_select", "City", "combobox", values=["Atlantis"])
    assert result["success"] is False
    assert result["error"]["code"] in ("not_found", "verification_failed")
    assert form.values().get("city") in (None, "")


@pytest.mark.parametrize("fixture", COMPONENT_LIBRARIES)
def test_library_date_picker_fill_commits_the_date(open_form, fixture):
    # SPEC A1/A3: typing a date into the picker's input and leaving it commits the value.
    form = open_form(fixture)
    form.do("page_fill", "Start date", value="2024-05-17")
    assert form.values()["start"] == "2024-05-17"


@pytest.mark.parametrize("fixture", COMPONENT_LIBRARIES)
def test_library_controls_work_while_the_user_is_in_another_tab(open_form, reusable_pages, fixture):
    # SPEC A3/A4: with another tab in front, the page gets animation frames at ~1 Hz while its
    # timers run on. antd's picker commits three frames after blur and its option list renders
    # on frames: the executor must wait for frames, not only for a quiet DOM, before verifying.
    form = open_form(fixture)
    with reusable_pages.covered():
        form.do("page_fill", "Start date", value="2024-05-17")
        form.do("page_select", "Tags", "combobox", values=["Red", "Blue"])
        values = form.values()
    assert values["start"] == "2024-05-17"
    assert sorted(values["tags"]) == ["blue", "red"]


@pytest.mark.parametrize("fixture", COMPONENT_LIBRARIES)
def test_library_date_picker_commits_while_the_window_has_no_focus(
    open_form, reusable_pages, fixture
):
    # SPEC A3: the user types in another application. Chromium then fires no focus or blur
    # events for focus() and blur(); pickers that commit on blur would never commit unless the
    # executor dispatches the focus events the browser withheld.
    form = open_form(fixture)
    with reusable_pages.covered(window_focused=False):
        assert form.embedded.page.evaluate("() => document.hasFocus()") is False
        form.do("page_fill", "Start date", value="2024-05-17")
        values = form.values()
    assert values["start"] == "2024-05-17"


@pytest.mark.parametrize("fixture", COMPONENT_LIBRARIES)
def test_library_checkbox_check_and_uncheck(open_form, fixture):
    # SPEC A1: a styled checkbox backed by an invisible native input.
    check_then_uncheck(open_form(fixture), "I agree", "checkbox", "agree")


@pytest.mark.parametrize("fixture", COMPONENT_LIBRARIES)
def test_library_switch_check_and_uncheck(open_form, fixture):
    # SPEC A1: role=switch (antd: a <button aria-checked>, Element Plus: a hidden checkbox).
    check_then_uncheck(open_form(fixture), "Notifications", "switch", "notify")


@pytest.mark.parametrize("fixture", COMPONENT_LIBRARIES)
def test_library_form_submit_records_the_filled_values(open_form, fixture):
    # The library's submit path (antd onFinish, Element Plus validate) sees what was filled.
    form = open_form(fixture)
    form.do("page_fill", "Name", "textbox", value="Ada")
    form.do("page_click", "Submit", "button")
    assert form.state()["submitted"]["name"] == "Ada"


@pytest.mark.parametrize("fixture", COMPONENT_LIBRARIES)
def test_library_batch_fills_every_control_then_submits(open_form, fixture):
    # SPEC A5: one batch over every control, portals included; the submit handler receives it all.
    form = open_form(fixture)
    step = form.step
    result = form.embedded.call(
        "page_fill",
        actions=[
            step("fill", "Name", "textbox", value="Ada"),
            step("fill", "Age", "spinbutton", value="42"),
            step("select", "City", "combobox", values=["Paris"]),
            step("select", "Tags", "combobox", values=["Green"]),
            step("fill", "Start date", value="2024-05-17"),
            step("check", "I agree", "checkbox"),
            step("check", "Pro", "radio"),
            step("check", "Notifications", "switch"),
            step("click", "Submit", "button"),
        ],
    )
    assert result["success"], failure(result)
    assert result.get("stoppedAt") is None
    assert form.state()["submitted"] == {
        "name": "Ada",
        "age": 42,
        "city": "paris",
        "tags": ["green"],
        "start": "2024-05-17",
        "agree": True,
        "plan": "pro",
        "notify": True,
    }
