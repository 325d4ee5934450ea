"""The on-page panel (SPEC U1-U3, E4, P1, P4): what the user sees and presses, driven
the way a user's own Playwright test would, by role and accessible name (README "Panel
controls"), with real clicks and keys."""

from __future__ import annotations

import json

from browser_helpers import COUNTER_BUTTON, clicks, ref
from panel_helpers import AgentThread, answer, card, panel, question
from playwright.sync_api import expect

NAME_FIELD = (
    '<label for="name">Name</label> <input id="name"> '
    '<label for="notes">Notes</label> <input id="notes">'
)
ADD_ONE = (
    '<button type="button" id="add" onclick="window.added = (window.added || 0) + 1">'
    "Add one</button>"
)


def shadow_count(page, selector: str) -> int:
    return page.locator("mao-embed-host").evaluate(
        f"h => h.shadowRoot.querySelectorAll({selector!r}).length"
    )


def test_panel_controls_are_reachable_by_role_and_name(mao_embed):
    # CONTRACT.md: a user's Playwright tests drive the panel by role and name.
    embedded = mao_embed(COUNTER_BUTTON, authorization=None)
    page = embedded.page
    expect(panel(page)).to_be_visible()
    for role, name in [
        ("radiogroup", "Authorization level"),
        ("radio", "Ask each time"),
        ("radio", "This task"),
        ("radio", "Full access"),
        ("button", "Revoke authorization"),
        ("button", "Stop"),
        ("button", "Pause"),
        ("button", "Close panel"),
        ("textbox", "Message"),
        ("button", "Send"),
        ("log", "Conversation"),
        ("log", "Action log"),
        ("status", "Status"),
    ]:
        expect(page.get_by_role(role, name=name, exact=True)).to_have_count(1)
    expect(page.get_by_role("radio", name="Ask each time")).to_have_attribute(
        "aria-checked", "true"
    )
    expect(page.get_by_role("status", name="Status")).to_have_text("Idle")


def test_panel_follows_the_page_language_in_chinese(mao_embed):
    embedded = mao_embed(
        "<script>document.documentElement.lang = 'zh-CN'</script>" + COUNTER_BUTTON,
        authorization=None,
    )
    page = embedded.page
    for role, name in [
        ("radiogroup", "授权级别"),
        ("radio", "每次确认"),
        ("radio", "本次任务"),
        ("radio", "完全授权"),
        ("button", "停止"),
        ("button", "关闭面板"),
        ("textbox", "消息"),
        ("button", "发送"),
    ]:
        expect(page.get_by_role(role, name=name, exact=True)).to_have_count(1)
    expect(page.get_by_role("status", name="状态")).to_have_text("空闲")


def test_init_locale_overrides_the_page_language(mao_embed):
    embedded = mao_embed(
        "<script>document.documentElement.lang = 'zh-CN'</script>" + COUNTER_BUTTON,
        init={"locale": "en"},
        authorization=None,
    )
    expect(embedded.page.get_by_role("button", name="Stop", exact=True)).to_have_count(1)


def test_per_action_click_waits_for_allow_once_and_highlights_the_target(mao_embed):
    # SPEC P1: by default every action waits for the user; the card names the element, which
    # is outlined in SDK UI while the card is open.
    embedded = mao_embed(COUNTER_BUTTON, authorization=None)
    page = embedded.page
    agent = AgentThread(embedded)
    try:
        snapshot = embedded.inspect()
        pending = agent.call("page_click", **ref(snapshot, "Count me"))
        expect(card(page)).to_contain_text("Count me")
        expect(card(page)).to_contain_text("Risk: low")
        assert shadow_count(page, ".hl[data-sticky]") == 1
        assert clicks(page) == 0
        expect(page.get_by_role("status", name="Status")).to_have_text("Waiting for you")
        answer(page, "Allow once")
        result = pending.result(timeout=30)
        assert result["success"], result
        assert clicks(page) == 1
        expect(page.get_by_role("log", name="Action log")).to_contain_text(
            "page_click · Count me · done"
        )
    finally:
        agent.close()


def test_deny_ends_as_user_rejected_and_nothing_happens(mao_embed):
    embedded = mao_embed(COUNTER_BUTTON, authorization=None)
    agent = AgentThread(embedded)
    try:
        pending = agent.call("page_click", **ref(embedded.inspect(), "Count me"))
        answer(embedded.page, "Deny")
        result = pending.result(timeout=30)
        assert result["error"]["code"] == "user_rejected"
        assert clicks(embedded.page) == 0
        expect(card(embedded.page)).to_have_count(0)
    finally:
        agent.close()


def test_unanswered_card_ends_as_confirmation_timeout(mao_embed):
    embedded = mao_embed(
        COUNTER_BUTTON, init={"authorization": {"confirmationTimeoutMs": 1500}}, authorization=None
    )
    result = embedded.call("page_click", **ref(embedded.inspect(), "Count me"))
    assert result["error"]["code"] == "confirmation_timeout"
    assert clicks(embedded.page) == 0
    expect(card(embedded.page)).to_have_count(0)


def test_a_page_script_clicking_allow_approves_nothing(mao_embed):
    # SPEC U2: only isTrusted input counts. The shadow root is open, so a script can find the
    # button; its click() and dispatched events are not trusted and change nothing.
    embedded = mao_embed(COUNTER_BUTTON, authorization=None)
    page = embedded.page
    agent = AgentThread(embedded)
    try:
        pending = agent.call("page_click", **ref(embedded.inspect(), "Count me"))
        expect(card(page).get_by_role("button", name="Allow once")).to_be_enabled()
        page.evaluate("""() => {
            const root = document.querySelector('mao-embed-host').shadowRoot;
            const allow = [...root.querySelectorAll('button')]
              .find(b => b.textContent === 'Allow once');
            allow.click();
            allow.dispatchEvent(new MouseEvent('click', {bubbles: true, composed: true}));
            const full = root.querySelector('[data-level=full]');
            full.click();
        }""")
        page.wait_for_timeout(500)
        assert not pending.done()
        expect(card(page)).to_have_count(1)
        expect(page.get_by_role("radio", name="Full access")).to_have_attribute(
            "aria-checked", "false"
        )
        assert clicks(page) == 0
        answer(page, "Deny")
        assert pending.result(timeout=30)["error"]["code"] == "user_rejected"
    finally:
        agent.close()


def test_sensitive_value_is_masked_on_the_card_and_marked_high_risk(mao_embed):
    embedded = mao_embed(
        '<label>Password <input type="password" id="pw"></label>', authorization=None
    )
    page = embedded.page
    agent = AgentThread(embedded)
    try:
        pending = agent.call("page_fill", **ref(embedded.inspect(), "Password"), value="hunter2")
        expect(card(page)).to_contain_text("Risk: HIGH")
        expect(card(page)).to_contain_text("••••••")
        assert "hunter2" not in card(page).inner_text()
        answer(page, "Allow once")
        result = pending.result(timeout=30)
        assert result["success"], result  # the failure's code, if it ever fails
    finally:
        agent.close()


def test_submit_button_is_high_risk_on_the_card(mao_embed):
    embedded = mao_embed(
        '<form onsubmit="event.preventDefault()"><button>提交订单</button></form>',
        authorization=None,
    )
    page = embedded.page
    agent = AgentThread(embedded)
    try:
        pending = agent.call("page_click", **ref(embedded.inspect(), "提交订单"))
        expect(card(page)).to_contain_text("submits a form")
        expect(card(page)).to_contain_text("pays or transfers money")
        answer(page, "Deny")
        pending.result(timeout=30)
    finally:
        agent.close()


def test_stop_mid_batch_stops_the_remaining_steps(mao_embed):
    # SPEC U3, A5: the user presses Stop while the second step of a batch waits for them.
    embedded = mao_embed(ADD_ONE, authorization=None)
    page = embedded.page
    added = lambda: page.evaluate("window.added || 0")  # noqa: E731
    agent = AgentThread(embedded)
    try:
        target = ref(embedded.inspect(), "Add one")
        step = {"action": "click", **target}
        pending = agent.call("page_click", actions=[step, step, step])
        answer(page, "Allow once")
        expect(page.get_by_role("log", name="Action log")).to_contain_text(
            "page_click · Add one · done"
        )
        card(page).wait_for()
        page.get_by_role("button", name="Stop", exact=True).click()
        result = pending.result(timeout=30)
        assert result["success"] is False and result["stoppedAt"] == 1
        assert result["error"]["code"] == "user_stopped"
        assert added() == 1
        expect(page.get_by_role("status", name="Status")).to_have_text("Stopped")
        # Stopped means stopped: the agent's next call is refused until the user resumes.
        assert embedded.call("page_click", **target)["error"]["code"] == "user_stopped"
        page.get_by_role("button", name="Resume", exact=True).click()
        embedded.grant("full")
        assert embedded.call("page_click", **target)["success"]
        assert added() == 2
    finally:
        agent.close()


def test_closing_the_panel_leaves_an_indicator_and_does_not_stop_the_task(mao_embed):
    # Close the panel: the agent keeps working; operating · pause · stop remain.
    embedded = mao_embed(COUNTER_BUTTON)
    page = embedded.page
    target = ref(embedded.inspect(), "Count me")
    page.get_by_role("button", name="Close panel").click()
    expect(panel(page)).to_be_hidden()
    indicator = page.get_by_role("region", name="Mao Embed indicator")
    expect(indicator).to_be_visible()
    expect(indicator.get_by_role("button", name="Pause")).to_be_visible()
    expect(indicator.get_by_role("button", name="Stop")).to_be_visible()
    assert embedded.call("page_click", **target)["success"]
    assert clicks(page) == 1
    expect(indicator).to_contain_text("Operating")
    indicator.get_by_role("button", name="Open panel").click()
    expect(panel(page)).to_be_visible()


def test_user_typing_on_the_page_mid_task_pauses_it_and_tells_the_agent(mao_embed):
    # SPEC U3: real input outside the SDK UI pauses the task; the next result says so.
    embedded = mao_embed(NAME_FIELD)
    page = embedded.page
    snapshot = embedded.inspect()
    result = embedded.call("page_fill", **ref(snapshot, "Name"), value="Ada")
    assert result["success"], result  # the failure's code, if it ever fails
    page.click("#notes")
    page.keyboard.type("mine")
    result = embedded.call("page_fill", **ref(snapshot, "Name"), value="Grace")
    assert result["error"]["code"] == "user_takeover"
    assert page.input_value("#name") == "Ada"
    expect(page.get_by_role("status", name="Status")).to_have_text("Paused")
    page.get_by_role("button", name="Resume", exact=True).click()
    second = embedded.call("page_fill", **ref(snapshot, "Name"), value="Grace")
    assert second["success"], json.dumps(second)


def test_synthetic_events_from_scripts_do_not_pause_the_task(mao_embed):
    embedded = mao_embed(NAME_FIELD)
    snapshot = embedded.inspect()
    result = embedded.call("page_fill", **ref(snapshot, "Name"), value="Ada")
    assert result["success"], result  # the failure's code, if it ever fails
    embedded.page.evaluate("""() => {
        const notes = document.getElementById('notes');
        notes.dispatchEvent(new PointerEvent('pointerdown', {bubbles: true}));
        notes.dispatchEvent(new KeyboardEvent('keydown', {key: 'a', bubbles: true}));
    }""")
    second = embedded.call("page_fill", **ref(snapshot, "Name"), value="Grace")
    assert second["success"], json.dumps(second)


def test_agent_never_clicks_the_panel_it_moves_aside_for_the_page(mao_embed):
    # SPEC U2, U4: a hit test landing on SDK UI never clicks the panel: the panel moves off
    # the page's button, which then gets the click.
    body = (
        '<button id="under" style="position: fixed; right: 60px; bottom: 60px" '
        "onclick=\"this.textContent = 'hit'\">Under</button>"
    )
    embedded = mao_embed(body)
    page = embedded.page
    levels = [
        page.get_by_role("radio", name=name, exact=True).get_attribute("aria-checked")
        for name in ("Ask each time", "This task", "Full access")
    ]
    result = embedded.call("page_click", **ref(embedded.inspect(), "Under"))
    assert result["success"], json.dumps(result)
    assert result["result"]["steps"][0]["outcome"]["panelMovedAside"] == "bottom-left"
    assert page.text_content("#under") == "hit"
    assert levels == [
        page.get_by_role("radio", name=name, exact=True).get_attribute("aria-checked")
        for name in ("Ask each time", "This task", "Full access")
    ]
    expect(page.get_by_role("status", name="Status")).not_to_have_text("Paused")


def test_chat_without_a_model_says_so(mao_embed):
    embedded = mao_embed(COUNTER_BUTTON)
    page = embedded.page
    page.get_by_role("textbox", name="Message").fill("Please click the button")
    page.get_by_role("textbox", name="Message").press("Enter")
    conversation = page.get_by_role("log", name="Conversation")
    expect(conversation).to_contain_text("Please click the button")
    expect(conversation).to_contain_text("No model is configured")


def test_grants_and_actions_are_sdk_audit_events(mao_embed):
    # SPEC P6: the page hears every grant and action through MaoChat.on("audit").
    embedded = mao_embed(
        "<script>window.__audit = []; addEventListener('load', () => MaoChat.on('audit', e => "
        "__audit.push(e)));</script>" + COUNTER_BUTTON,
        authorization=None,
    )
    embedded.grant("full")
    assert embedded.call("page_click", **ref(embedded.inspect(), "Count me"))["success"]
    embedded.page.get_by_role("button", name="Revoke authorization").click()
    # In worker mode the event comes back from the worker a moment after the click.
    embedded.page.wait_for_function("() => window.__audit.length >= 3")
    events = embedded.page.evaluate("window.__audit")
    kinds = [e["kind"] for e in events]
    assert kinds == ["grant", "action", "revoke"], events
    assert events[0]["level"] == "full" and events[0]["previousLevel"] == "per_action"
    assert (
        events[1]["action"] == "click"
        and events[1]["target"] == "Count me"
        and events[1]["outcome"] == "ok"
    )
    assert "token" not in json.dumps(events).lower()


FAR_BUTTON = """<script>
  // What the user sees at the moment of the click: the highlight's box and the button's.
  window.recordHighlight = (button) => {
    const box = document.querySelector('mao-embed-host').shadowRoot.querySelector('.hl');
    const rect = (el) => { const r = el.getBoundingClientRect(); return {x: r.x, y: r.y,
      width: r.width, height: r.height}; };
    window.seen = {button: rect(button), highlight: box && rect(box),
      label: box && box.textContent};
  };
</script>
<div style="height: 2400px">Top of a long page</div>
<button type="button" onclick="recordHighlight(this)">Far away</button>
<div style="height: 800px"></div>"""


def overlap(a, b) -> float:
    """The share of ``a``'s area that ``b`` covers."""
    width = min(a["x"] + a["width"], b["x"] + b["width"]) - max(a["x"], b["x"])
    height = min(a["y"] + a["height"], b["y"] + b["height"]) - max(a["y"], b["y"])
    return max(0.0, width) * max(0.0, height) / (a["width"] * a["height"])


def test_the_target_highlight_is_drawn_where_an_offscreen_target_is_after_scrolling(mao_embed):
    # SPEC U1: the executor scrolls the target into view, then the highlight
    # is drawn on it (not where it was before scrolling, below the viewport).
    embedded = mao_embed(FAR_BUTTON)
    page = embedded.page
    snapshot = embedded.inspect(includeOffscreen=True)
    assert embedded.find(snapshot, label="Far away")["inViewport"] is False
    assert embedded.call("page_click", **ref(snapshot, "Far away"))["success"]
    seen = page.evaluate("window.seen")
    assert seen["highlight"] is not None, "no highlight while the click happened"
    assert seen["label"] == "Far away"
    assert (
        0 <= seen["button"]["y"] and seen["button"]["y"] + seen["button"]["height"] <= 800
    )  # scrolled into view
    assert overlap(seen["button"], seen["highlight"]) > 0.9, seen


SEARCH_FORM = (
    '<form onsubmit="event.preventDefault(); window.submitted = (window.submitted || 0) + 1">'
    '<label>Search <input id="q" name="q"></label> <button>Go</button></form>'
)


def risk_line(page) -> str:
    return card(page).locator(".risk").inner_text()


def test_enter_in_the_focused_form_field_is_confirmed_like_a_submit_button(mao_embed):
    # SPEC P4, P1: page_keyboard without a ref goes to the focused element; Enter there submits
    # the form, so under per_action its card names that field and the same risk as a click on
    # the form's submit button would.
    embedded = mao_embed(SEARCH_FORM, authorization=None)
    page = embedded.page
    submitted = lambda: page.evaluate("window.submitted || 0")  # noqa: E731
    page.focus("#q")
    agent = AgentThread(embedded)
    try:
        pending = agent.call("page_click", **ref(embedded.inspect(), "Go"))
        click_risk = risk_line(page)
        answer(page, "Deny")
        assert pending.result(timeout=30)["error"]["code"] == "user_rejected"

        pending = agent.call("page_keyboard", key="Enter")
        expect(card(page)).to_contain_text("\u201cSearch\u201d")
        assert risk_line(page) == click_risk and "submits a form" in click_risk
        answer(page, "Deny")
        assert pending.result(timeout=30)["error"]["code"] == "user_rejected"
        assert submitted() == 0

        # Answering moved focus to the card; it comes back to the field, so once allowed the
        # key goes where the card said.
        pending = agent.call("page_keyboard", key="Enter")
        expect(card(page)).to_contain_text("\u201cSearch\u201d")
        answer(page, "Allow once")
        result = pending.result(timeout=30)
        assert result["success"], result
        assert submitted() == 1
    finally:
        agent.close()


def test_keys_without_a_ref_never_reach_the_panel(mao_embed):
    # The user is typing in the panel's message box; the agent's keys go to
    # the page, never into SDK UI.
    embedded = mao_embed(COUNTER_BUTTON)
    message = embedded.page.get_by_role("textbox", name="Message")
    message.click()
    embedded.page.keyboard.type("draft")
    result = embedded.call("page_keyboard", text="xyz")
    assert result["success"], result
    assert message.input_value() == "draft"


FOOTER_UNDER_PANEL = """
<main style="height: 300px">
  <button type="button" id="more" onclick="window.lines = (window.lines || 0) + 1">Add line</button>
</main>
<footer style="position: fixed; left: 0; right: 0; bottom: 0; height: 160px; background: #eee">
  <button type="button" id="save" style="position: absolute; right: 60px; bottom: 40px;
    width: 120px; height: 32px" onclick="document.getElementById('saved').textContent =
    String(Number(document.getElementById('saved').textContent) + 1)">Save draft</button>
  <span>Saved <output id="saved">0</output> times</span>
</footer>
"""


def _box(locator) -> tuple[float, float, float, float]:
    box = locator.bounding_box()
    return box["x"], box["y"], box["x"] + box["width"], box["y"] + box["height"]


def _overlap(a, b) -> bool:
    return a[0] < b[2] and a[2] > b[0] and a[1] < b[3] and a[3] > b[1]


def test_a_long_action_log_keeps_the_panel_size_and_a_target_under_it_is_clicked(mao_embed):
    # SPEC U4: the panel has a bounded size with its own scrolling, and moves aside for an
    # action on what it covers (reported in the step) instead of failing it as obscured.
    embedded = mao_embed(FOOTER_UNDER_PANEL)
    page = embedded.page
    region = panel(page)
    expect(region).to_be_visible()
    before = _box(region)
    snapshot = embedded.inspect()
    more = embedded.find(snapshot, label="Add line")
    steps = [
        {"action": "click", "snapshotId": snapshot["snapshotId"], "elementId": more["elementId"]}
    ] * 10
    result = embedded.call("page_click", actions=steps)
    assert result["success"], result
    assert page.evaluate("() => window.lines") == 10
    assert shadow_count(page, ".log li") >= 10
    after = _box(region)
    assert after == before, (before, after)  # ten more log lines, the same box
    assert after[3] - after[1] <= 400
    # The footer's button is under the panel: a real pointer there would hit the panel.
    save = page.locator("#save")
    assert _overlap(_box(save), after)
    assert page.evaluate(
        "() => { const r = document.getElementById('save').getBoundingClientRect();"
        " return document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2).localName; }"
    ) == "mao-embed-host"
    snapshot = embedded.inspect()
    target = embedded.find(snapshot, label="Save draft")
    result = embedded.call(
        "page_click", snapshotId=snapshot["snapshotId"], elementId=target["elementId"]
    )
    assert result["success"], result
    step = result["result"]["steps"][0]
    assert step["outcome"]["panelMovedAside"] == "bottom-left", step
    assert page.text_content("#saved") == "1"
    # The panel moved off the button, kept its size and its accessible name.
    moved = _box(region)
    assert not _overlap(_box(save), moved)
    assert moved[2] - moved[0] == after[2] - after[0] and moved[3] - moved[1] == after[3] - after[1]
    expect(region).to_be_visible()


CHOICES_UNDER_PANEL = """
<button type="button" id="city" role="combobox" aria-expanded="false" aria-controls="cities"
  aria-label="City" style="position: fixed; right: 420px; bottom: 60px; width: 120px"
  >Choose</button>
<ul id="cities" role="listbox" hidden style="position: fixed; right: 60px; bottom: 60px;
  width: 200px; margin: 0; padding: 4px; list-style: none; background: #fff;
  border: 1px solid #999">
  <li role="option" aria-selected="false">Paris</li>
  <li role="option" aria-selected="false">Lyon</li>
</ul>
<script>
  const city = document.getElementById('city');
  const list = document.getElementById('cities');
  city.addEventListener('click', () => {
    list.hidden = !list.hidden;
    city.setAttribute('aria-expanded', String(!list.hidden));
  });
  list.addEventListener('click', (event) => {
    const option = event.target.closest('[role=option]');
    if (!option) return;
    city.textContent = option.textContent;
    for (const o of list.children) o.setAttribute('aria-selected', String(o === option));
    list.hidden = true;
    city.setAttribute('aria-expanded', 'false');
  });
</script>
"""


def test_a_choice_that_opens_under_the_panel_is_chosen(mao_embed):
    # SPEC U4: the options a select opens under the panel are reached the same way.
    embedded = mao_embed(CHOICES_UNDER_PANEL)
    page = embedded.page
    result = embedded.call("page_select", **ref(embedded.inspect(), "City"), values=["Lyon"])
    assert result["success"], json.dumps(result)
    assert result["result"]["steps"][0]["outcome"]["panelMovedAside"] == "bottom-left"
    assert page.text_content("#city") == "Lyon"
    assert _box(panel(page))[0] < 100  # in the bottom-left corner now


# --------------------------------------------------------------------------- page_ask_user (U5)


def test_the_agent_asks_and_the_user_answers_with_a_real_click(mao_embed):
    embedded = mao_embed(COUNTER_BUTTON, authorization=None)
    page = embedded.page
    agent = AgentThread(embedded)
    try:
        pending = agent.call(
            "page_ask_user", question="Which colour should the label be?",
            choices=["Red", "Blue"],
        )
        asked = question(page)
        expect(asked).to_contain_text("Which colour should the label be?")
        expect(page.get_by_role("status", name="Status")).to_have_text("Waiting for you")
        asked.get_by_role("button", name="Blue", exact=True).click()
        result = pending.result(timeout=30)
        assert result["success"], result
        assert result["result"] == {"answer": "Blue", "choiceIndex": 1}
        expect(asked).to_have_count(0)
        conversation = page.get_by_role("log", name="Conversation")
        expect(conversation).to_contain_text("Which colour should the label be?")
        expect(conversation).to_contain_text("Blue")
    finally:
        agent.close()


def test_the_user_answers_the_agents_question_by_typing(mao_embed):
    embedded = mao_embed(COUNTER_BUTTON, authorization=None)
    page = embedded.page
    agent = AgentThread(embedded)
    try:
        pending = agent.call("page_ask_user", question="What is the order number?")
        field = question(page).get_by_role("textbox", name="Your answer")
        expect(question(page).get_by_role("button", name="Answer")).to_be_enabled()
        field.press_sequentially("A-4711")
        field.press("Enter")
        result = pending.result(timeout=30)
        assert result["result"] == {"answer": "A-4711"}
    finally:
        agent.close()


def test_a_page_script_cannot_answer_the_agents_question(mao_embed):
    # SPEC U2, U5: the shadow root is open, so a script finds the controls; its clicks, its
    # events and text it writes into the answer field are not the user's and answer nothing.
    embedded = mao_embed(COUNTER_BUTTON, authorization=None)
    page = embedded.page
    agent = AgentThread(embedded)
    try:
        pending = agent.call(
            "page_ask_user", question="Transfer the money?", choices=["Yes", "No"]
        )
        asked = question(page)
        expect(asked.get_by_role("button", name="Yes")).to_be_enabled()
        page.evaluate("""() => {
            const root = document.querySelector('mao-embed-host').shadowRoot;
            const dialog = root.querySelector('[role=dialog]');
            const yes = [...dialog.querySelectorAll('button')].find(b => b.textContent === 'Yes');
            yes.click();
            yes.dispatchEvent(new MouseEvent('click', {bubbles: true, composed: true}));
            const field = dialog.querySelector('textarea');
            field.value = 'Yes, all of it';
            field.dispatchEvent(new InputEvent('input', {bubbles: true, data: 'x'}));
            field.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter', bubbles: true}));
            const chat = root.querySelector('form textarea');
            chat.value = 'Yes';
            chat.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter', bubbles: true}));
        }""")
        page.wait_for_timeout(500)
        assert not pending.done()
        # A real click on Answer still does not send what the script wrote there.
        asked.get_by_role("button", name="Answer").click()
        page.wait_for_timeout(300)
        assert not pending.done()
        expect(asked).to_have_count(1)
        asked.get_by_role("button", name="No", exact=True).click()
        assert pending.result(timeout=30)["result"] == {"answer": "No", "choiceIndex": 1}
    finally:
        agent.close()


def test_an_unanswered_question_times_out_and_the_closed_panel_shows_a_badge(mao_embed):
    embedded = mao_embed(COUNTER_BUTTON, authorization=None)
    page = embedded.page
    page.get_by_role("button", name="Close panel").click()
    indicator = page.get_by_role("region", name="Mao Embed indicator")
    badge = indicator.get_by_role("status", name="The assistant is asking you something")
    expect(badge).to_be_hidden()
    agent = AgentThread(embedded)
    try:
        pending = agent.call("page_ask_user", question="Still there?", timeoutMs=5000)
        # The question does not open the panel; the indicator says one waits.
        expect(badge).to_be_visible()
        expect(panel(page)).to_be_hidden()
        result = pending.result(timeout=30)
        assert result["success"] is False
        assert result["error"]["code"] == "timeout"
        expect(badge).to_be_hidden()
        indicator.get_by_role("button", name="Open panel").click()
        expect(question(page)).to_have_count(0)
        expect(page.get_by_role("log", name="Conversation")).to_contain_text(
            "The question went unanswered"
        )
    finally:
        agent.close()
