"""Choosing in a popup never guesses between two places showing the wanted choice (SPEC A1, A6):
two open portal menus, or the same text twice outside the widget's popup, are refused with
nothing clicked; a choice shown once where a click lands is chosen, copies no user could click
(covered, faded out, display:none) aside.

One page (fixtures/popup_choices.html) serves every test; ``window.__mount()`` rebuilds it, and
``window.__state()`` is kept by the page's own listeners.
"""

from __future__ import annotations

import pytest
from frameworks import AgentView, failure, fixture_body


@pytest.fixture
def view(reusable_pages) -> AgentView:
    return AgentView(
        reusable_pages.open("popup-choices", fixture_body("popup_choices.html"), title="Popups")
    )


@pytest.mark.parametrize(
    ("widget", "label"),
    [("twin", "Twin actions"), ("inline", "Inline actions")],
    ids=["two-portal-menus", "a-menu-and-the-same-text-elsewhere"],
)
def test_a_choice_shown_in_two_places_at_once_is_refused_and_nothing_is_clicked(
    view, widget, label
):  # SPEC A1, A2, A6
    before = view.state()
    result = view.call("page_select", label, "combobox", values=["Archive"])
    assert result["success"] is False, failure(result)
    error = result["error"]
    assert error["code"] == "invalid_request", failure(result)
    assert error["details"]["matches"] == ["Archive", "Archive"]
    after = view.state()
    # The widget did open (the refusal is about what its open showed), then closed again:
    # no item was clicked, and the page is as it was.
    assert after["opened"] == {widget: 1}
    assert after["picked"] == [] and after["shown"][widget] == "Choose"
    # The virtual pointer still rests on the widget it clicked: its hover markers (SPEC A7)
    # are the SDK's, not a change of the page.
    unmarked = after["app"].replace(' data-mao-hover=""', "")
    assert after["portals"] == [] and unmarked == before["app"]


def test_a_choice_shown_once_where_a_click_lands_is_chosen_in_the_freshest_popup(
    view,
):  # SPEC A1, A2, A4
    # The open also left copies no click reaches (one covered by the fresh menu, one faded
    # out, one display:none); the paragraph's "Archive" is outside the popup the open produced.
    result = view.do("page_select", "Single actions", "combobox", values=["Archive"])
    state = view.state()
    assert state["picked"] == ["single:fresh"] and state["shown"]["single"] == "Archive"
    outcome = result["result"]["steps"][0]["outcome"]
    assert outcome["selected"] == ["Archive"] and outcome["via"] == ["popup"]
