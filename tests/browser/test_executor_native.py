"""The executor on native controls and page mechanics: every input type, keyboard, refusals
(obscured, disabled), batches that stop, dialogs, shadow DOM and same-origin iframes.

Through the agent's tools only. Assertions read the page's own state, kept by its event
listeners (``window.__state()``), so an action whose events the page never saw fails.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from frameworks import AgentView, failure, fixture_body

_pages = itertools.count(1)


@pytest.fixture
def open_page(mao_embed):
    def open_(body: str, **kwargs: Any) -> AgentView:
        embedded = mao_embed(body, **kwargs)
        embedded.page.wait_for_function("() => typeof window.__state === 'function'")
        return AgentView(embedded)

    return open_


@pytest.fixture
def controls(reusable_pages) -> AgentView:
    """The native controls page with a pristine form and state (see ReusablePages)."""
    return AgentView(
        reusable_pages.open("native", fixture_body("native_controls.html"), title="Native controls")
    )


# ---------------------------------------------------------------------------------------
# fill / select / check on every native control (SPEC A1, A3).
# ---------------------------------------------------------------------------------------

FILLS = [
    ("Name", "Ada Lovelace", "name", "Ada Lovelace"),
    ("Email", "ada@example.org", "email", "ada@example.org"),
    ("Quantity", "12", "quantity", "12"),
    ("Day", "2024-05-17", "day", "2024-05-17"),
    ("Time", "13:45", "time", "13:45"),
    ("Meeting", "2024-05-17T13:45", "meeting", "2024-05-17T13:45"),
    ("Volume", "30", "volume", "30"),
    ("Colour", "#ff8800", "colour", "#ff8800"),
    ("Comments", "line one\nline two", "comments", "line one\nline two"),
]


@pytest.mark.parametrize(("label", "value", "name", "expected"), FILLS, ids=[f[2] for f in FILLS])
def test_fill_reaches_the_page_through_input_and_change_events(
    controls, label, value, name, expected
):
    # SPEC A3: native setter, then input and change; the page's listeners see the value.
    controls.do("page_fill", label, value=value)
    state = controls.state()
    assert state["input"][name] == expected
    assert state["change"][name] == expected
    assert state["events"][name].index("input") < state["events"][name].index("change")


def test_fill_reports_the_value_read_back(controls):
    # SPEC A3: after acting, the value is read back into the step outcome.
    result = controls.do("page_fill", "Email", value="ada@example.org")
    assert result["result"]["steps"][0]["outcome"]["value"] == "ada@example.org"
    assert controls.state()["change"]["email"] == "ada@example.org"


def test_fill_contenteditable_inserts_text(controls):
    # SPEC A1: contenteditable through selection-aware insertion; the page's input listener sees it.
    controls.do("page_fill", "Message", "textbox", value="Hello there")
    assert controls.state()["input"]["message"] == "Hello there"


def test_fill_contenteditable_replaces_previous_text(controls):
    controls.do("page_fill", "Message", "textbox", value="first")
    controls.do("page_fill", "Message", "textbox", value="second")
    assert controls.state()["input"]["message"] == "second"


@pytest.mark.parametrize("choice", ["l", "Large"], ids=["by-value", "by-label"])
def test_select_single_by_value_or_label(controls, choice):
    controls.do("page_select", "Size", values=[choice])
    assert controls.state()["change"]["size"] == "l"


def test_select_multiple_by_values_and_labels(controls):
    controls.do("page_select", "Toppings", values=["Cheese", "olive"])
    assert controls.state()["change"]["toppings"] == ["cheese", "olive"]


def test_select_unknown_option_fails_and_leaves_the_page_unchanged(controls):
    # SPEC A6: a structured refusal; no change event reached the page.
    result = controls.call("page_select", "Size", values=["Gigantic"])
    assert result["success"] is False
    assert result["error"]["code"] in ("not_found", "invalid_request", "verification_failed")
    assert "size" not in controls.state()["change"]


def test_fill_longer_than_the_maxlength_is_refused_and_leaves_the_page_unchanged(controls):
    # SPEC A3, A6: typing stops at maxlength, the setter would not; the agent is told, and no
    # input event reached the page. A value that fits is filled.
    result = controls.call("page_fill", "Promo code", value="SPRING24")
    assert result["success"] is False and result["error"]["code"] == "invalid_request"
    assert result["error"]["details"]["maxLength"] == 6
    assert "promo" not in controls.state()["input"]
    controls.do("page_fill", "Promo code", value="SPRING")
    assert controls.state()["change"]["promo"] == "SPRING"


def test_check_and_uncheck_checkbox(controls):
    controls.do("page_check", "Gift wrap", "checkbox")
    assert controls.state()["change"]["gift"] is True
    controls.do("page_uncheck", "Gift wrap", "checkbox")
    assert controls.state()["change"]["gift"] is False


def test_check_radio_selects_it_in_its_group(controls):
    controls.do("page_check", "Express", "radio")
    assert controls.state()["change"]["delivery"] == "express"


def test_uncheck_radio_is_refused(controls):
    # A radio cannot be unchecked by itself; the agent must check another one.
    result = controls.call("page_uncheck", "Standard", "radio")
    assert result["success"] is False
    assert result["error"]["code"] in ("unsupported", "invalid_request")
    assert "delivery" not in controls.state()["change"]


def test_fill_on_a_checkbox_is_refused(controls):
    result = controls.call("page_fill", "Gift wrap", "checkbox", value="yes")
    assert result["success"] is False
    assert result["error"]["code"] in ("not_editable", "unsupported")
    assert "gift" not in controls.state()["change"]


# ---------------------------------------------------------------------------------------
# page_keyboard (SPEC A1): text, named keys, combos, and the default actions they imply.
# ---------------------------------------------------------------------------------------


def test_keyboard_types_text_into_the_referenced_input(controls):
    controls.do("page_keyboard", "Name", text="Ada")
    state = controls.state()
    assert state["input"]["name"] == "Ada"
    assert state["focus"] == "name"


def test_keyboard_control_a_then_text_replaces_input_value(controls):
    controls.do("page_fill", "Name", value="Ada")
    controls.do("page_keyboard", "Name", key="Control+a")
    controls.do("page_keyboard", "Name", text="Grace")
    assert controls.state()["input"]["name"] == "Grace"


def test_keyboard_backspace_deletes_in_input(controls):
    controls.do("page_fill", "Name", value="Ada")
    controls.do("page_keyboard", "Name", key="Backspace")
    assert controls.state()["input"]["name"] == "Ad"


def test_keyboard_control_a_then_text_replaces_contenteditable(controls):
    controls.do("page_fill", "Message", "textbox", value="old text")
    controls.do("page_keyboard", "Message", "textbox", key="Control+a")
    controls.do("page_keyboard", "Message", "textbox", text="new")
    assert controls.state()["input"]["message"] == "new"


def test_keyboard_backspace_deletes_in_contenteditable(controls):
    controls.do("page_keyboard", "Message", "textbox", text="abc")
    controls.do("page_keyboard", "Message", "textbox", key="Backspace")
    assert controls.state()["input"]["message"] == "ab"


def test_keyboard_enter_in_input_submits_the_form(controls):
    # HTML implicit submission, emulated because synthetic key events do not trigger it.
    controls.do("page_fill", "Name", value="Ada")
    controls.do("page_keyboard", "Name", key="Enter")
    state = controls.state()
    assert state["submits"] == 1
    assert state["submitted"]["name"] == "Ada"


def test_keyboard_enter_in_textarea_inserts_a_line_break_and_does_not_submit(controls):
    controls.do("page_fill", "Comments", value="one")
    controls.do("page_keyboard", "Comments", key="Enter")
    controls.do("page_keyboard", "Comments", text="two")
    state = controls.state()
    assert state["input"]["comments"] == "one\ntwo"
    assert state["submits"] == 0


def test_keyboard_tab_moves_focus_to_the_next_field(controls):
    controls.do("page_focus", "Name")
    controls.do("page_keyboard", "Name", key="Tab")
    assert controls.state()["focus"] == "email"


def test_keyboard_space_toggles_a_focused_checkbox(controls):
    controls.do("page_keyboard", "Gift wrap", "checkbox", key="Space")
    assert controls.state()["change"]["gift"] is True


def test_keyboard_arrow_down_moves_the_radio_group(controls):
    controls.do("page_keyboard", "Standard", "radio", key="ArrowDown")
    assert controls.state()["change"]["delivery"] == "express"


# ---------------------------------------------------------------------------------------
# Refusals before acting (SPEC A2, A6).
# ---------------------------------------------------------------------------------------

CLICK_LOG = """
<script>
  window.__clicks = {};
  window.__state = () => ({ clicks: window.__clicks });
  function clicked(name) { window.__clicks[name] = (window.__clicks[name] || 0) + 1; }
</script>
"""

MODAL_OVER_BUTTON = (
    CLICK_LOG
    + """
<button type="button" onclick="clicked('delete')">Delete account</button>
<div style="position: fixed; inset: 0; background: rgba(0, 0, 0, 0.4); z-index: 10">
  <div role="dialog" aria-label="Cookies"
    style="background: white; margin: 40vh auto 0; width: 300px; padding: 16px">
    <button type="button" onclick="clicked('accept')">Accept cookies</button>
  </div>
</div>
"""
)


def test_click_on_a_button_covered_by_a_modal_overlay_is_refused_as_obscured(open_page):
    # SPEC A2: the hit test at the target point lands on the overlay, not the button.
    page = open_page(MODAL_OVER_BUTTON)
    result = page.call("page_click", "Delete account", "button")
    assert result["success"] is False
    assert result["error"]["code"] == "obscured"
    assert page.state()["clicks"] == {}


def test_click_on_the_modal_itself_works(open_page):
    page = open_page(MODAL_OVER_BUTTON)
    page.do("page_click", "Accept cookies", "button")
    assert page.state()["clicks"] == {"accept": 1}


def test_overlay_appearing_after_the_snapshot_is_detected(open_page):
    # SPEC A2: actionability is checked when acting, not when inspecting.
    page = open_page(
        CLICK_LOG + """<button type="button" onclick="clicked('save')">Save</button>"""
    )
    page.embedded.page.evaluate("""() => {
        const overlay = document.createElement('div');
        overlay.style.cssText =
          'position: fixed; inset: 0; z-index: 10; background: rgba(0,0,0,.3)';
        document.body.appendChild(overlay);
    }""")
    result = page.call("page_click", "Save", "button")
    assert result["success"] is False
    assert result["error"]["code"] == "obscured"
    assert page.state()["clicks"] == {}


def test_click_on_a_disabled_button_is_refused_as_not_enabled(open_page):
    page = open_page(
        CLICK_LOG + """<button type="button" disabled onclick="clicked('pay')">Pay now</button>"""
    )
    result = page.call("page_click", "Pay now", "button")
    assert result["success"] is False
    assert result["error"]["code"] == "not_enabled"
    assert page.state()["clicks"] == {}


def test_fill_on_a_readonly_input_is_refused_as_not_editable(open_page):
    page = open_page("""
      <label>Reference <input readonly value="R-1" oninput="window.__typed = this.value"></label>
      <script>window.__state = () => ({ typed: window.__typed || null });</script>""")
    result = page.call("page_fill", "Reference", value="R-2")
    assert result["success"] is False
    assert result["error"]["code"] == "not_editable"
    assert page.state()["typed"] is None


# ---------------------------------------------------------------------------------------
# Batches (SPEC A5): ordered, stop at the first failure or navigation.
# ---------------------------------------------------------------------------------------

BATCH_PAGE = (
    CLICK_LOG
    + """
<form onsubmit="return false">
  <label>First <input name="first" oninput="window.__clicks.first = this.value"></label>
  <label>Second <input name="second" oninput="window.__clicks.second = this.value"></label>
  <button type="button" disabled onclick="clicked('locked')">Locked</button>
  <button type="button" onclick="clicked('hash'); location.hash = '#details'">Show details</button>
  <button type="button"
    onclick="clicked('push'); history.pushState({}, '', '/checkout/step-2')">Next step</button>
  <a href="/landing.html" onclick="sessionStorage.setItem('left', '1')">Leave</a>
  <button type="button"
    onclick="clicked('counter'); sessionStorage.setItem('counter', '1')">Count</button>
</form>
"""
)


def test_batch_runs_steps_in_order_and_reports_each(open_page):
    page = open_page(BATCH_PAGE)
    result = page.batch(
        "page_fill",
        page.step("fill", "First", value="one"),
        page.step("fill", "Second", value="two"),
    )
    assert result["success"], failure(result)
    steps = result["result"]["steps"]
    assert [(s["index"], s["action"], s["success"]) for s in steps] == [
        (0, "fill", True),
        (1, "fill", True),
    ]
    assert result.get("stoppedAt") is None
    assert page.state()["clicks"] == {"first": "one", "second": "two"}


def test_batch_stops_at_the_first_failure_and_runs_nothing_after_it(open_page):
    page = open_page(BATCH_PAGE)
    result = page.batch(
        "page_fill",
        page.step("fill", "First", value="one"),
        page.step("click", "Locked", "button"),
        page.step("fill", "Second", value="two"),
    )
    assert result["success"] is False
    assert result["stoppedAt"] == 1
    assert result["error"]["code"] == "not_enabled"
    steps = result["result"]["steps"]
    assert len(steps) == 2
    assert steps[0]["success"] is True
    assert steps[1]["success"] is False and steps[1]["error"]["code"] == "not_enabled"
    assert page.state()["clicks"] == {"first": "one"}  # "Second" was never filled


@pytest.mark.parametrize("button", ["Show details", "Next step"], ids=["hashchange", "pushState"])
def test_batch_stops_after_an_spa_navigation(open_page, button):
    # SPEC A5, R2: a route change ends the batch; the remaining steps are not run and the
    # agent is told the page navigated.
    page = open_page(BATCH_PAGE)
    result = page.batch(
        "page_click",
        page.step("click", button, "button"),
        page.step("fill", "First", value="too late"),
    )
    assert result["success"] is False
    assert result["error"]["code"] == "navigated"
    assert result["stoppedAt"] == 1  # the first step not run
    steps = result["result"]["steps"]
    assert len(steps) == 1 and steps[0]["success"] is True
    assert "first" not in page.state()["clicks"]
    assert result["result"]["changes"]["navigated"] is True


def test_refs_from_before_an_spa_navigation_are_stale(open_page):
    # SPEC R2: after pushState the old snapshot's refs are refused, nothing is filled.
    page = open_page(BATCH_PAGE)
    page.do("page_click", "Next step", "button")
    result = page.call("page_fill", "First", value="stale")
    assert result["success"] is False
    assert result["error"]["code"] == "stale_ref"
    assert "first" not in page.state()["clicks"]


def test_batch_cancelled_by_a_full_navigation_runs_nothing_after_it(open_page, mao_pages):
    # A full page load unloads the SDK mid-batch. Either the SDK answers `navigated` while
    # the page unloads, or the relay reports the lost connection; in both cases the step
    # after the navigation never ran (sessionStorage survives the load and would show it).
    mao_pages.add("/landing.html", "<!doctype html><title>Landing</title><h1>Landing</h1>")
    page = open_page(BATCH_PAGE, path=f"/batch-full-nav-{next(_pages)}.html")
    result = page.batch(
        "page_click",
        page.step("click", "Leave", "link"),
        page.step("click", "Count", "button"),
    )
    page.embedded.page.wait_for_url("**/landing.html")
    assert result["success"] is False
    assert result["error"]["code"] in ("navigated", "disconnected")
    storage = page.embedded.page.evaluate(
        "() => ({ left: sessionStorage.getItem('left'), counter: sessionStorage.getItem('counter') "
        "})"
    )
    assert storage == {"left": "1", "counter": None}


def test_batch_stops_when_the_form_is_rerendered_under_it(open_page):
    # SPEC A5, R2: a step that replaces the form makes later refs stale; nothing is guessed.
    page = open_page(
        CLICK_LOG
        + """
      <div id="app">
        <label>Title <input oninput="window.__clicks.title = this.value"></label>
        <button type="button"
          onclick="clicked('reset'); const a = document.getElementById('app');
            a.innerHTML = a.innerHTML">Reset</button>
      </div>"""
    )
    result = page.batch(
        "page_click",
        page.step("click", "Reset", "button"),
        page.step("fill", "Title", value="late"),
    )
    assert result["success"] is False
    assert result["stoppedAt"] == 1
    assert result["error"]["code"] in ("stale_ref", "structure_changed")
    assert page.state()["clicks"] == {"reset": 1}


# ---------------------------------------------------------------------------------------
# Page dialogs (SPEC A6): intercepted, reported, answered, restored.
# ---------------------------------------------------------------------------------------

DIALOG_PAGE = """
<script>
  window.__native = { alert: window.alert, confirm: window.confirm, prompt: window.prompt };
  window.__log = [];
  window.__state = () => ({
    log: window.__log,
    restored: window.alert === window.__native.alert && window.confirm === window.__native.confirm
      && window.prompt === window.__native.prompt,
  });
</script>
<button type="button"
  onclick="__log.push(['confirm', confirm('Delete the draft?')])">Delete draft</button>
<button type="button"
  onclick="alert('Draft saved'); __log.push(['after-alert', true])">Save draft</button>
<button type="button" onclick="__log.push(['prompt', prompt('Your name?', 'x')])">Rename</button>
"""


def _dialogs_reported(result: dict[str, Any]) -> list[dict[str, Any]]:
    reported = list(result["result"]["changes"].get("dialogs") or [])
    for step in result["result"]["steps"]:
        reported += (step.get("outcome") or {}).get("dialogs") or []
    return reported


@pytest.fixture
def native_dialogs(mao_context):
    """Records any dialog that reached the browser, accepting it, so a dialog the SDK
    failed to intercept shows up here (and a confirm would then return true)."""
    seen: list[tuple[str, str]] = []

    def on_dialog(dialog: Any) -> None:
        seen.append((dialog.type, dialog.message))
        dialog.accept()

    mao_context.on("dialog", on_dialog)
    return seen


def test_confirm_during_a_click_is_answered_false_and_reported(open_page, native_dialogs):
    page = open_page(DIALOG_PAGE)
    result = page.do("page_click", "Delete draft", "button")
    state = page.state()
    assert state["log"] == [["confirm", False]]
    assert native_dialogs == []
    assert any(
        d["type"] == "confirm" and d["message"] == "Delete the draft?"
        for d in _dialogs_reported(result)
    )
    assert state["restored"] is True


def test_alert_during_a_click_is_reported_and_the_page_continues(open_page, native_dialogs):
    page = open_page(DIALOG_PAGE)
    result = page.do("page_click", "Save draft", "button")
    state = page.state()
    assert state["log"] == [["after-alert", True]]
    assert native_dialogs == []
    assert any(
        d["type"] == "alert" and d["message"] == "Draft saved" for d in _dialogs_reported(result)
    )
    assert state["restored"] is True


def test_prompt_during_a_click_is_answered_null(open_page, native_dialogs):
    page = open_page(DIALOG_PAGE)
    result = page.do("page_click", "Rename", "button")
    assert page.state()["log"] == [["prompt", None]]
    assert native_dialogs == []
    assert any(d["type"] == "prompt" for d in _dialogs_reported(result))


def test_dialogs_outside_an_action_reach_the_user_again(open_page, native_dialogs):
    # Restored means restored: after the action the page's own alert is the browser's.
    page = open_page(DIALOG_PAGE)
    page.do("page_click", "Save draft", "button")
    page.embedded.page.evaluate("() => alert('from the page itself')")
    assert native_dialogs == [("alert", "from the page itself")]


# ---------------------------------------------------------------------------------------
# Shadow DOM and same-origin iframes (SPEC S6, A1, A2).
# ---------------------------------------------------------------------------------------

SHADOW_PAGE = """
<coupon-box></coupon-box>
<script>
  window.__shadow = { code: null, applied: 0 };
  window.__state = () => window.__shadow;
  customElements.define("coupon-box", class extends HTMLElement {
    connectedCallback() {
      const root = this.attachShadow({ mode: "open" });
      root.innerHTML =
        '<label>Coupon code <input></label> <button type="button">Apply coupon</button>';
      root.querySelector("input").addEventListener("input", (e) => {
        window.__shadow.code = e.target.value; });
      root.querySelector("button").addEventListener("click", () => { window.__shadow.applied += 1;
        });
    }
  });
</script>
"""


def test_fill_and_click_inside_an_open_shadow_root(open_page):
    page = open_page(SHADOW_PAGE)
    page.do("page_fill", "Coupon code", value="SPRING")
    page.do("page_click", "Apply coupon", "button")
    assert page.state() == {"code": "SPRING", "applied": 1}


IFRAME_DOC = """<!doctype html><html><body>
<form onsubmit="return false">
  <label>Card holder <input oninput="parent.__frame.holder = this.value"></label>
  <label><input type="checkbox" onchange="parent.__frame.terms = this.checked"> Accept terms</label>
  <button type="button" onclick="parent.__frame.paid += 1">Pay</button>
</form></body></html>"""


def test_fill_check_and_click_inside_a_same_origin_iframe(open_page, mao_pages):
    frame_url = mao_pages.add(f"/frame-{next(_pages)}.html", IFRAME_DOC)
    page = open_page(f"""
      <script>window.__frame = {{ holder: null, terms: false, paid: 0 }};
        window.__state = () => window.__frame;</script>
      <iframe src="{frame_url}" title="Payment" style="width: 600px; height: 200px"></iframe>""")
    page.embedded.page.frame_locator("iframe").get_by_role("button", name="Pay").wait_for()
    page.snapshot = page.embedded.inspect()
    page.do("page_fill", "Card holder", value="Ada Lovelace")
    page.do("page_check", "Accept terms", "checkbox")
    page.do("page_click", "Pay", "button")
    assert page.state() == {"holder": "Ada Lovelace", "terms": True, "paid": 1}


# ---------------------------------------------------------------------------------------
# Widgets that commit only through what a user does (SPEC A3, P5: no false success).
# ---------------------------------------------------------------------------------------

# A picker-like field: focusing it mounts a panel a microtask later, its `change` handler
# commits only with the panel mounted, and leaving the field shows the committed model. A
# radio drawn as a label over a transparent input whose library listens on the label only
# and re-renders the input from its model a frame later.
COMMIT_ON_CHANGE_AND_LABEL_RADIO = """
  <label>Start date <input id="day"></label>
  <style>
    .radio { position: relative; display: inline-block; padding: 4px 12px; }
    .radio input { position: absolute; inset: 0; margin: 0; opacity: 0; z-index: -1; }
    .radio span { position: relative; }
  </style>
  <label class="radio"><input type="radio" name="plan" value="basic"
    checked><span>Basic</span></label>
  <label class="radio"><input type="radio" name="plan" value="pro"><span>Pro</span></label>
  <script>
    const model = { day: "", plan: "basic" };
    let panel = null;
    const day = document.getElementById("day");
    day.addEventListener("focus", () => { Promise.resolve().then(() => { panel = {}; }); });
    day.addEventListener("change", () => { panel.value = day.value; model.day = day.value; });
    day.addEventListener("blur", () => { panel = null; day.value = model.day; });
    for (const label of document.querySelectorAll(".radio")) {
      const input = label.querySelector("input");
      label.addEventListener("click", (event) => {
        if (event.target !== input) model.plan = input.value;
        requestAnimationFrame(() => {
          for (const r of document.querySelectorAll("input[name=plan]")) {
            r.checked = r.value === model.plan;
          }
        });
      });
    }
    window.__state = () => ({ ...model });
  </script>"""


def test_fill_and_check_commit_widgets_that_listen_as_for_a_user(open_page):
    # SPEC A3, P5: success only when the page's own model took the value.
    page = open_page(COMMIT_ON_CHANGE_AND_LABEL_RADIO)
    result = page.do("page_fill", "Start date", value="2024-05-17")
    assert result["result"]["steps"][0]["outcome"]["value"] == "2024-05-17"
    assert page.state()["day"] == "2024-05-17"
    page.do("page_check", "Pro", role="radio")
    assert page.state()["plan"] == "pro"
