"""Clicks, hovers and keys as a user's would land (SPEC A1, A3, A4), checked against the page's
own state and, where a real browser decides, against the same gesture sent as trusted input
through Playwright on the same page.

One page (fixtures/pointer_keys.html) serves every test; ``window.__mount()`` rebuilds it.
"""

from __future__ import annotations

from typing import Any

import pytest
from frameworks import AgentView, failure, fixture_body
from playwright.sync_api import expect


@pytest.fixture
def view(reusable_pages) -> AgentView:
    return AgentView(
        reusable_pages.open(
            "pointer-keys", fixture_body("pointer_keys.html"), title="Pointer and keys"
        )
    )


def resume(page: Any) -> None:
    """Trusted input through Playwright is the user's own: it pauses the agent's task (SPEC
    U3), and the user resumes it in the panel, so the next test's agent calls run."""
    button = page.get_by_role("button", name="Resume", exact=True)
    expect(button).to_be_visible()
    button.click()
    expect(page.get_by_role("status", name="Status")).not_to_have_text("Paused")


# -- clicks land where a user's would ----------------------------------------------------------


def test_a_click_on_a_tab_reaches_the_handler_on_the_link_inside_it(view):
    # SPEC A3: a real click at the tab's centre lands on its inner link, whose listener switches
    # the tab. Dispatching on the tab element alone answered success and switched nothing.
    result = view.do("page_click", "Beta", "tab")
    state = view.state()
    assert state["tab"] == "beta"
    assert view.embedded.page.get_attribute("#tab-beta", "aria-selected") == "true"
    assert view.embedded.page.is_visible("#panel-beta") and not view.embedded.page.is_visible(
        "#panel-alpha"
    )
    outcome = result["result"]["steps"][0]["outcome"]
    assert outcome["effect"] == "changed" and "dom" in outcome["effects"]


def test_a_click_that_changes_nothing_says_so_in_the_result_and_the_action_log(view):
    # SPEC A4: the click reached the button (its listener ran) but nothing observable changed:
    # a success that states effect "none", never a silent one.
    result = view.do("page_click", "Does nothing", "button")
    assert view.state()["noopClicks"] == 1
    assert result["result"]["steps"][0]["outcome"]["effect"] == "none"
    log = view.embedded.page.get_by_role("log", name="Action log")
    expect(log).to_contain_text("page_click · Does nothing · done, nothing changed")


def test_a_click_sends_the_pointer_events_a_real_click_sends_in_the_same_order(view):
    # SPEC A3: boundary events reach every element entered (enter events on each ancestor),
    # in Chromium's order; compared with a trusted click through Playwright on the same page.
    page = view.embedded.page
    view.do("page_click", "Probe", "button")
    ours = view.state()["pointer"]
    page.mouse.move(2, 2)
    page.evaluate("() => window.__mount()")
    box = page.locator("#probe-button").bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    real = view.state()["pointer"]
    resume(page)
    assert "mouseenter:probe-outer" in real  # the probe sees what it should
    assert ours == real


# -- page_hover ---------------------------------------------------------------------------------


def test_hover_opens_a_menu_listening_on_a_wrapper_and_its_items_can_be_clicked(view):
    # CONTRACT page_hover: mouseenter reaches the trigger's wrapper, the menu opens, its items
    # are in the next snapshot, and clicking one works.
    assert view.state()["menuOpen"] is False
    result = view.do("page_hover", "Account", "button")
    assert view.state()["menuOpen"] is True
    assert result["result"]["steps"][0]["outcome"]["effect"] == "changed"
    after = AgentView(view.embedded)
    after.do("page_click", "Profile", "menuitem")
    assert view.state()["chosen"] == "profile"


def test_hover_runs_in_a_batch(view):
    result = view.batch(
        "page_hover",
        view.step("hover", "Account", "button"),
        {"action": "wait", "text": "Sign out"},
    )
    assert result["success"], failure(result)
    assert view.state()["menuOpen"] is True


# -- keys: default actions as a real press has them --------------------------------------------

# (accessible name, role, key, what a real press does there, in the page's event log)
KEY_CASES = [
    ("Solo field", "textbox", "Enter", ["submit:kf1"]),
    ("Pair first", "textbox", "Enter", []),
    ("Buttoned first", "textbox", "Enter", ["click:kf3s", "submit:kf3<kf3s"]),
    ("Blocked field", "textbox", "Enter", []),
    ("Beside a checkbox", "textbox", "Enter", ["submit:kf5"]),
    ("Lone checkbox", "checkbox", "Enter", []),
    ("Agree", "checkbox", "Enter", ["click:kf6s", "submit:kf6<kf6s"]),
    ("Before a plain button", "textbox", "Enter", ["click:kf7s", "submit:kf7<kf7s"]),
    ("Send three", "button", "Enter", ["click:kf3s", "submit:kf3<kf3s"]),
    ("Send three", "button", "Space", ["click:kf3s", "submit:kf3<kf3s"]),
    ("Plain button", "button", "Enter", ["click:kb"]),
    ("Plain button", "button", "Space", ["click:kb"]),
    ("Plain checkbox", "checkbox", "Enter", []),
    ("Plain checkbox", "checkbox", "Space", ["click:kc", "input:kc", "change:kc"]),
    ("Plain link", "link", "Enter", ["click:kl"]),
    ("Plain link", "link", "Space", []),
    ("Role button", "button", "Enter", []),
    ("Role button", "button", "Space", []),
]
SELECTORS = {
    "Solo field": "#kf1a",
    "Pair first": "#kf2a",
    "Buttoned first": "#kf3a",
    "Blocked field": "#kf4a",
    "Beside a checkbox": "#kf5a",
    "Lone checkbox": "#kf5c",
    "Agree": "#kf6c",
    "Before a plain button": "#kf7a",
    "Send three": "#kf3s",
    "Plain button": "#kb",
    "Plain checkbox": "#kc",
    "Plain link": "#kl",
    "Role button": "#krb",
}


def _effects(state: dict[str, Any]) -> list[str]:
    """The events of the log besides the key events themselves."""
    return [
        entry for entry in state["log"] if not entry.startswith(("keydown", "keypress", "keyup"))
    ]


@pytest.mark.parametrize(
    ("label", "role", "key", "expected"),
    KEY_CASES,
    ids=[f"{c[0]}-{c[2]}".replace(" ", "_") for c in KEY_CASES],
)
def test_a_key_does_what_a_real_press_does(view, label, role, key, expected):
    # SPEC A1, A3; HTML §4.10.21.2 implicit submission: the default button if there is one (a
    # disabled one: nothing), else a submit only with at most one blocking field; Enter on
    # buttons and links, Space on buttons and checkboxes, nothing for a role alone.
    view.do("page_keyboard", label, role, key=key)
    ours = view.state()
    page = view.embedded.page
    page.evaluate("() => window.__mount()")
    page.focus(SELECTORS[label])
    page.keyboard.press(key)
    page.wait_for_timeout(150)
    real = view.state()
    resume(page)
    assert _effects(real) == expected  # the rule itself, as the browser applies it
    for field in ("log", "checked", "detailsOpen", "focused", "hash", "scrollY"):
        assert ours[field] == real[field], field


def test_enter_in_a_form_with_several_fields_and_no_submit_button_keeps_what_was_typed(view):
    # The reported bug: Enter submitted (and reloaded) such a form. Nothing happens, and the
    # result says why.
    view.do("page_fill", "Pair first", "textbox", value="Ada")
    typed = len(view.state()["log"])
    result = view.do("page_keyboard", "Pair first", "textbox", key="Enter")
    assert result["result"]["steps"][0]["outcome"]["emulated"] == ["noSubmit(severalFields)"]
    assert _effects({"log": view.state()["log"][typed:]}) == []
    assert view.embedded.page.input_value("#kf2a") == "Ada"
