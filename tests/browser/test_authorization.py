"""Authorization levels end to end in real Chromium (SPEC P1-P3, P5, E2):
what survives a reload, what is isolated, what the host can and cannot do, where the token
never goes, and which level releases sensitive values."""

from __future__ import annotations

import dataclasses
import json

from browser_helpers import ref
from panel_helpers import LEVEL_NAMES, AgentThread, answer, card
from playwright.sync_api import expect

ADD_ONE = (
    '<button type="button" id="add" onclick="window.added = (window.added || 0) + 1">'
    "Add one</button>"
)


def added(embedded) -> int:
    return embedded.page.evaluate("window.added || 0")


def level_shown(embedded, level: str) -> None:
    expect(
        embedded.page.get_by_role("radio", name=LEVEL_NAMES[level], exact=True)
    ).to_have_attribute("aria-checked", "true")


def reload(embedded, mao_agent):
    embedded.page.reload()
    embedded.page.evaluate("() => MaoChat.boot()")
    # SPEC B7: the reloaded page is the tab's next page and keeps its session.
    session = mao_agent.wait_for_session(url=embedded.url)
    assert session["sessionId"] == embedded.session_id
    return dataclasses.replace(embedded, session_id=session["sessionId"])


def click_is_confirmed(embedded) -> bool:
    """Ask for a click and report whether a card appeared (denied at once if it did)."""
    agent = AgentThread(embedded)
    try:
        pending = agent.call("page_click", **ref(embedded.inspect(), "Add one"))
        try:
            card(embedded.page).wait_for(timeout=5000)
        except Exception:  # noqa: BLE001 - Playwright's TimeoutError: no card came
            assert pending.result(timeout=30)["success"]
            return False
        answer(embedded.page, "Deny")
        assert pending.result(timeout=30)["error"]["code"] == "user_rejected"
        return True
    finally:
        agent.close()


def test_task_level_runs_without_cards_and_ends_with_a_reload(mao_embed, mao_agent):
    embedded = mao_embed(ADD_ONE, authorization="task")
    assert not click_is_confirmed(embedded)
    assert added(embedded) == 1
    embedded = reload(embedded, mao_agent)
    level_shown(embedded, "per_action")
    assert click_is_confirmed(embedded)


def test_full_level_survives_a_reload(mao_embed, mao_agent):
    embedded = mao_embed(ADD_ONE, authorization="full")
    assert not click_is_confirmed(embedded)
    embedded = reload(embedded, mao_agent)
    level_shown(embedded, "full")
    assert not click_is_confirmed(embedded)
    assert added(embedded) == 1  # the reload reset the page's counter; one click since


def test_revoking_full_is_remembered_across_a_reload(mao_embed, mao_agent):
    embedded = mao_embed(ADD_ONE, authorization="full")
    embedded.page.get_by_role("button", name="Revoke authorization").click()
    level_shown(embedded, "per_action")
    embedded = reload(embedded, mao_agent)
    level_shown(embedded, "per_action")
    assert (
        embedded.page.evaluate(
            "Object.keys(localStorage).filter(k => k.startsWith('mao-embed.')).length"
        )
        == 0
    )


def test_full_grants_are_isolated_by_user_agent_policy_version_and_scope(mao_embed):
    # SPEC P3. All pages share one browser context, so one origin's localStorage.
    mao_embed(ADD_ONE, user_id="alice", agent_id="agent-1", authorization="full")
    level_shown(mao_embed(ADD_ONE, user_id="alice", agent_id="agent-1", authorization=None), "full")
    level_shown(
        mao_embed(ADD_ONE, user_id="bob", agent_id="agent-1", authorization=None), "per_action"
    )
    level_shown(
        mao_embed(ADD_ONE, user_id="alice", agent_id="agent-2", authorization=None), "per_action"
    )
    level_shown(
        mao_embed(
            ADD_ONE,
            user_id="alice",
            agent_id="agent-1",
            authorization=None,
            init={"authorization": {"policyVersion": "2"}},
        ),
        "per_action",
    )
    level_shown(
        mao_embed(
            ADD_ONE,
            user_id="alice",
            agent_id="agent-1",
            authorization=None,
            init={"authorization": {"actions": ["click", "observe"]}},
        ),
        "per_action",
    )


def test_host_init_cannot_raise_the_level(mao_embed):
    # SPEC P2, E2: asking for full in init gives per_action until the user grants more.
    embedded = mao_embed(ADD_ONE, init={"authorization": {"level": "full"}}, authorization=None)
    level_shown(embedded, "per_action")
    assert click_is_confirmed(embedded)
    assert added(embedded) == 0


def test_host_init_can_lower_a_stored_full_grant(mao_embed):
    mao_embed(ADD_ONE, authorization="full")
    lowered = mao_embed(
        ADD_ONE, init={"authorization": {"level": "per_action"}}, authorization=None
    )
    level_shown(lowered, "per_action")
    assert click_is_confirmed(lowered)


def test_host_can_narrow_the_action_scope(mao_embed):
    embedded = mao_embed(
        ADD_ONE,
        init={"authorization": {"actions": ["scroll", "observe", "wait"]}},
        authorization="full",
    )
    result = embedded.call("page_click", **ref(embedded.inspect(), "Add one"))
    assert result["error"]["code"] == "permission_denied"
    assert added(embedded) == 0
    assert embedded.call("page_observe")["success"]


def test_a_malformed_authorization_option_rejects_init(mao_embed):
    embedded = mao_embed(ADD_ONE, init={"authorization": {"level": "admin"}}, wait_ready=False)
    message = embedded.page.evaluate(
        "() => MaoChat.boot().then(() => 'resolved', (e) => e.code + ': ' + e.message)"
    )
    assert message.startswith("invalid_options:") and "authorization.level" in message


def test_a_tampered_stored_grant_is_ignored_and_removed(mao_embed, mao_agent):
    embedded = mao_embed(ADD_ONE, authorization="full")
    embedded.page.evaluate("""() => {
        const key = Object.keys(localStorage).find(k => k.startsWith('mao-embed.grant.'));
        const record = JSON.parse(localStorage.getItem(key));
        record.scope = ['click'];  // copied from another scope, or edited by hand
        localStorage.setItem(key, JSON.stringify(record));
    }""")
    embedded = reload(embedded, mao_agent)
    level_shown(embedded, "per_action")
    assert (
        embedded.page.evaluate(
            "Object.keys(localStorage).filter(k => k.startsWith('mao-embed.')).length"
        )
        == 0
    )


RECORD_BROADCASTS = """<script>
  window.__broadcasts = [];
  const post = BroadcastChannel.prototype.postMessage;
  BroadcastChannel.prototype.postMessage = function (message) {
    window.__broadcasts.push(JSON.stringify(message));
    return post.call(this, message);
  };
</script>"""

EVERYWHERE_A_TOKEN_MUST_NOT_BE = """async () => {
  const dump = (storage) => Object.keys(storage).map(k => k + '=' + storage.getItem(k));
  const databases = indexedDB.databases ? (await indexedDB.databases()).map(d => d.name) : [];
  return {
    localStorage: dump(localStorage), sessionStorage: dump(sessionStorage), cookie: document.cookie,
    url: location.href, history: JSON.stringify(history.state), broadcasts: window.__broadcasts,
    resources: performance.getEntriesByType('resource').map(e => e.name), databases,
  };
}"""


def test_storage_urls_and_broadcast_channel_never_hold_the_token(mao_embed, mao_agent):
    # SPEC P3: after a session with grants, actions, chat and a reload.
    embedded = mao_embed(
        '<label for="n">Name</label><input id="n">' + ADD_ONE, head=RECORD_BROADCASTS
    )
    # The token the page gave MaoChat.init (the snippet is the page's own HTML).
    token = embedded.page.evaluate(
        "() => JSON.parse([...document.scripts].map(s => s.textContent).find(t => "
        "t.includes('MaoChat.init')).match(/MaoChat.init\\((.*)\\);/)[1]).token"
    )
    assert len(token) > 20
    snapshot = embedded.inspect()
    assert embedded.call("page_fill", **ref(snapshot, "Name"), value="Ada")["success"]
    assert embedded.call("page_click", **ref(snapshot, "Add one"))["success"]
    embedded.page.get_by_role("textbox", name="Message").fill("hello")
    embedded.page.get_by_role("textbox", name="Message").press("Enter")
    embedded = reload(embedded, mao_agent)
    places = embedded.page.evaluate(EVERYWHERE_A_TOKEN_MUST_NOT_BE)
    assert places["localStorage"], "the full grant should be stored"
    for where, found in places.items():
        assert token not in str(found), where
        # Nor any recognisable piece of it (a JWT-like token's parts).
        for part in (p for p in token.split(".") if len(p) >= 16):
            assert part not in str(found), where


SECRETS = (
    '<form aria-label="Payment">'
    '<label>Password <input type="password" value="hunter2"></label>'
    '<label>Card number <input autocomplete="cc-number" value="4242424242424242"></label>'
    '<label>Notes <input data-mao-private value="private note"></label>'
    '<span data-mao-private><label>PIN <input type="password" value="9931"></label></span>'
    '<label>Nickname <input value="ada"></label>'
    "</form>"
)


def values(snapshot) -> dict[str, object]:
    return {e["label"]: e.get("value") for e in snapshot["elements"]}


def test_sensitive_values_reach_a_snapshot_only_when_asked_under_task_or_full(
    mao_embed,
):  # SPEC P5, X3
    embedded = mao_embed(SECRETS, authorization=None)
    # per_action: asking changes nothing, and no card interrupts the user for a read.
    asked = embedded.inspect(maskSensitive=False, format="text")
    assert asked["sensitiveValues"] == "masked"
    assert values(asked) == {
        "Password": None,
        "Card number": None,
        "Notes": None,
        "PIN": None,
        "Nickname": "ada",
    }
    for secret in ("hunter2", "4242424242424242", "private note", "9931"):
        assert secret not in json.dumps(asked), secret
    expect(card(embedded.page)).to_have_count(0)

    embedded.grant("full")
    assert values(embedded.inspect())["Password"] is None  # not asked: masked under full too
    released = embedded.inspect(maskSensitive=False, format="text")
    assert released["sensitiveValues"] == "released"
    assert values(released) == {
        "Password": "hunter2",
        "Card number": "4242424242424242",
        "Notes": None,
        "PIN": None,
        "Nickname": "ada",
    }
    assert 'value="hunter2"' in released["text"]
    # Page-owner private fields are never released, whatever the level
    # (README "Page-owner controls").
    assert "private note" not in json.dumps(released) and "9931" not in json.dumps(released)
    # page_observe compares with this snapshot; released values are not "changes".
    assert embedded.call("page_observe")["result"]["steps"][0]["outcome"]["updated"] == 0

    embedded.page.get_by_role("button", name="Revoke authorization").click()
    assert values(embedded.inspect(maskSensitive=False))["Password"] is None


def test_a_malformed_mask_sensitive_argument_is_refused(mao_embed):
    embedded = mao_embed(SECRETS)
    result = embedded.call("page_inspect", maskSensitive="maybe")
    assert (
        result["error"]["code"] == "invalid_request"
        and "maskSensitive" in result["error"]["message"]
    ), result
