"""The on-page panel (issue 6; SPEC U1-U3, E4): what the user sees and presses, driven the way
a user's own Playwright test would, by role and accessible name (README "Panel controls")."""

from __future__ import annotations

from browser_helpers import COUNTER_BUTTON, clicks, ref
from panel_helpers import AgentThread, answer, card, grant, panel, status_text


def test_panel_controls_are_reachable_by_role_and_name(mao_embed):
    embedded = mao_embed(COUNTER_BUTTON, authorization=None)
    page = embedded.page
    assert panel(page).is_visible()
    for role, name in [("radiogroup", "Authorization level"), ("radio", "Ask each time"), ("radio", "This task"),
                       ("radio", "Full access"), ("button", "Revoke authorization"), ("button", "Stop"),
                       ("button", "Pause"), ("button", "Close panel"), ("textbox", "Message"), ("button", "Send"),
                       ("log", "Conversation"), ("log", "Action log"), ("status", "Status")]:
        assert page.get_by_role(role, name=name, exact=True).count() == 1, (role, name)
    assert page.get_by_role("radio", name="Ask each time").get_attribute("aria-checked") == "true"


def test_per_action_click_waits_for_allow_once(mao_embed):
    embedded = mao_embed(COUNTER_BUTTON, authorization=None)
    page = embedded.page
    agent = AgentThread(embedded)
    try:
        snapshot = embedded.inspect()
        pending = agent.call("page_click", **ref(snapshot, "Count me"))
        card(page).wait_for()
        assert clicks(page) == 0
        answer(page, "Allow once")
        result = pending.result(timeout=30)
        assert result["success"], result
        assert clicks(page) == 1
        assert status_text(page)
    finally:
        agent.close()
