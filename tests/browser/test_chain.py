"""The whole chain in real Chromium: loader -> Pyodide -> Python SDK -> WebSocket -> backend
-> agent HTTP API, and the refusals that must leave the page untouched."""

from __future__ import annotations

import concurrent.futures
import json
import uuid

import pytest
from browser_helpers import COUNTER_BUTTON, clicks, ref

FORM = (
    """
<form id="f"
  onsubmit="event.preventDefault();
    document.getElementById('out').textContent = new FormData(this).get('name')">
  <label>Name <input id="name" name="name"></label>
  <button type="submit">Save</button>
</form>
<p id="out"></p>
"""
    + COUNTER_BUTTON
)


def test_round_trip_inspect_fill_click_observe(mao_embed):
    # SPEC W1, S2, A3: the agent sees the form, fills it, submits, and the page reacts.
    embedded = mao_embed(FORM)
    snapshot = embedded.inspect()
    assert {e["label"] for e in snapshot["elements"]} == {"Name", "Save", "Count me"}
    assert snapshot["pageVersion"] and snapshot["url"] == embedded.url

    filled = embedded.call("page_fill", **ref(snapshot, "Name"), value="Ada Lovelace")
    assert filled["success"], filled
    assert filled["result"]["steps"][0]["outcome"]["value"] == "Ada Lovelace"
    assert embedded.page.input_value("#name") == "Ada Lovelace"

    clicked = embedded.call("page_click", **ref(snapshot, "Save"))
    assert clicked["success"], clicked
    assert embedded.page.text_content("#out") == "Ada Lovelace"

    observed = embedded.call("page_observe")
    assert observed["success"]
    changes = observed["result"]["steps"][0]["outcome"]
    assert changes["pageVersionChanged"] is True and changes["navigated"] is False


def test_snapshot_refs_are_opaque_and_exclude_the_sdk_host(mao_embed):
    # SPEC S5, R1, U2: no selectors or markup, and the SDK's own UI never appears.
    embedded = mao_embed(FORM)
    snapshot = embedded.inspect()
    dumped = json.dumps(snapshot)
    for leak in ("#name", "outerHTML", "xpath", "mao-embed-host", "Mao Embed"):
        assert leak not in dumped
    assert all(not e["elementId"].isdigit() for e in snapshot["elements"])


def test_unknown_tool_is_refused(mao_embed, mao_agent):
    # SPEC W1, N: only the twelve page tools exist.
    embedded = mao_embed(COUNTER_BUTTON)
    response = mao_agent.call_raw(embedded.session_id, "page_eval", b"{}")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "unknown_tool"


def test_malformed_json_is_refused_and_the_session_keeps_working(mao_embed, mao_agent):
    embedded = mao_embed(COUNTER_BUTTON)
    response = mao_agent.call_raw(embedded.session_id, "page_click", b'{"snapshotId": "s1", ')
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_request"
    assert embedded.call("page_inspect")["success"]


@pytest.mark.parametrize(
    "smuggled",
    [{"selector": "#counter"}, {"script": "document.body.remove()"}, {"xpath": "//button"}],
)
def test_extra_fields_are_refused_by_the_backend_and_nothing_runs(mao_embed, smuggled):
    # SPEC W1, S5, N: no selector, script or xpath can be smuggled through a tool call.
    embedded = mao_embed(COUNTER_BUTTON)
    snapshot = embedded.inspect()
    result = embedded.call("page_click", **ref(snapshot, "Count me"), **smuggled)
    assert result["success"] is False
    assert result["error"]["code"] == "invalid_request"
    assert clicks(embedded.page) == 0


def test_extra_fields_sent_straight_to_the_page_are_refused_there(mao_embed, mao_backend):
    # Defence in depth (SPEC W1): the page validates every frame itself, whatever the relay did.
    embedded = mao_embed(COUNTER_BUTTON)
    snapshot = embedded.inspect()
    target = ref(snapshot, "Count me")
    request_id = "raw-" + uuid.uuid4().hex[:10]
    mao_backend.send_raw(
        embedded.session_id,
        {
            "type": "page_tool_request",
            "requestId": request_id,
            "sessionId": embedded.session_id,
            "tool": "page_click",
            "actions": [{"action": "click", **target, "script": "alert(1)"}],
        },
    )
    [result] = mao_backend.raw_results(embedded.session_id, request_id)
    assert result.success is False and result.error.code == "invalid_request"
    assert "script" in result.error.message
    assert clicks(embedded.page) == 0


def test_repeated_request_id_over_http_is_executed_once(mao_embed):
    # SPEC W2: the same requestId twice gives the first result and one click.
    embedded = mao_embed(COUNTER_BUTTON)
    snapshot = embedded.inspect()
    first = embedded.call("page_click", request_id="click-once-1", **ref(snapshot, "Count me"))
    second = embedded.call("page_click", request_id="click-once-1", **ref(snapshot, "Count me"))
    assert first["success"] and first == second
    assert clicks(embedded.page) == 1


def test_repeated_request_id_reaching_the_page_is_executed_once(mao_embed, mao_backend):
    # SPEC W2 on the page side: even if a relay delivered the request twice.
    embedded = mao_embed(COUNTER_BUTTON)
    snapshot = embedded.inspect()
    request = {
        "type": "page_tool_request",
        "requestId": "dup-" + uuid.uuid4().hex[:8],
        "sessionId": embedded.session_id,
        "tool": "page_click",
        "actions": [{"action": "click", **ref(snapshot, "Count me")}],
    }
    mao_backend.send_raw(embedded.session_id, request)
    [first] = mao_backend.raw_results(embedded.session_id, request["requestId"])
    mao_backend.send_raw(embedded.session_id, request)
    [second] = mao_backend.raw_results(embedded.session_id, request["requestId"])
    assert first.success and first == second
    assert clicks(embedded.page) == 1


def test_request_times_out_cleanly_when_the_page_never_answers(mao_embed, mao_backend):
    # SPEC W3: the page's main thread is blocked, so the SDK cannot answer; the agent gets
    # `timeout`, and the session still works once the page is free again.
    embedded = mao_embed(COUNTER_BUTTON)
    embedded.page.evaluate(
        "setTimeout(() => { const end = Date.now() + 3000; while (Date.now() < end) {} }, 50)"
    )
    embedded.page.wait_for_timeout(100)
    result = mao_backend.call_tool(embedded.session_id, "page_inspect", {}, timeout_ms=800)
    assert result.success is False
    assert result.error.code == "timeout"
    embedded.page.wait_for_timeout(3200)
    assert embedded.call("page_inspect")["success"]


def test_stale_ref_after_rerender_is_refused_and_nothing_is_clicked(mao_embed):
    # SPEC R2: a React-style replace of the subtree makes old refs stale; never act on a guess.
    embedded = mao_embed(f"<div id='app'>{COUNTER_BUTTON}</div>")
    snapshot = embedded.inspect()
    old = ref(snapshot, "Count me")
    embedded.page.evaluate(
        "document.getElementById('app').innerHTML = document.getElementById('app').innerHTML"
    )
    result = embedded.call("page_click", **old)
    assert result["success"] is False
    assert result["error"]["code"] == "stale_ref"
    assert clicks(embedded.page) == 0
    suggestion = result["error"]["details"]["suggestion"]
    assert suggestion["label"] == "Count me"  # offered, never used by the SDK itself (R3)


def test_ref_from_an_unknown_snapshot_is_stale(mao_embed):
    embedded = mao_embed(COUNTER_BUTTON)
    embedded.inspect()
    result = embedded.call("page_click", snapshotId="s000000", elementId="e000000")
    assert result["error"]["code"] == "stale_ref"
    assert clicks(embedded.page) == 0


def test_tools_not_yet_available_answer_unsupported(mao_embed):
    embedded = mao_embed(COUNTER_BUTTON)
    snapshot = embedded.inspect()
    result = embedded.call("page_check", **ref(snapshot, "Count me"))
    assert result["success"] is False and result["error"]["code"] == "unsupported"
    assert clicks(embedded.page) == 0


def test_wrong_token_is_refused_and_ready_rejects(mao_embed, mao_agent):
    # SPEC B5: a token signed with another secret opens no session.
    before = {s["sessionId"] for s in mao_agent.sessions()}
    embedded = mao_embed(
        COUNTER_BUTTON,
        init={"token": "mao1.eyJzdWIiOiJ4In0.AAAA", "startupTimeoutMs": 30000},
        wait_ready=False,
    )
    error = embedded.page.evaluate(
        "() => MaoChat.boot().then(() => 'resolved', (e) => e.code + ': ' + e.message)"
    )
    assert error.startswith("unauthorized"), error
    # No new session; an earlier test's page may still be leaving, so compare new ids only.
    assert {s["sessionId"] for s in mao_agent.sessions()} - before == set()


def test_page_on_a_disallowed_origin_gets_no_session(
    mao_context, mao_agent, mao_pages, mao_backend
):
    # SPEC B5: `localhost` and `127.0.0.1` are different origins; only the latter is allowed,
    # so the same page opened as localhost must not get a session.
    from mao_embed.testing import embed_snippet, page_html

    token = mao_backend.issue_token("test-user", "test-agent")
    snippet = embed_snippet(
        mao_backend.url,
        agent_id="test-agent",
        user_id="test-user",
        token=token,
        extra={"startupTimeoutMs": 15000},
    )
    url = mao_pages.add("/disallowed.html", page_html(COUNTER_BUTTON, snippet))
    before = {s["sessionId"] for s in mao_agent.sessions()}
    page = mao_context.new_page()
    page.goto(url.replace("127.0.0.1", "localhost"))
    outcome = page.evaluate("() => MaoChat.boot().then(() => 'resolved', (e) => e.code)")
    assert outcome in ("startup_failed", "startup_timeout", "origin_not_allowed", "unauthorized"), (
        outcome
    )
    # No new session; an earlier test's page may still be leaving, so compare new ids only.
    assert {s["sessionId"] for s in mao_agent.sessions()} - before == set()


def test_csp_without_wasm_unsafe_eval_fails_with_a_readable_error(mao_embed, mao_backend):
    # Under such a CSP loadPyodide never settles; ready must reject and say why.
    csp = f"script-src 'self' 'unsafe-inline' {mao_backend.url}; connect-src {mao_backend.url} ws://127.0.0.1:{mao_backend.port}"
    embedded = mao_embed(
        COUNTER_BUTTON,
        init={"startupTimeoutMs": 15000},
        headers={"Content-Security-Policy": csp},
        wait_ready=False,
    )
    message = embedded.page.evaluate(
        "() => MaoChat.boot().then(() => 'resolved', (e) => e.message)"
    )
    assert "wasm-unsafe-eval" in message


def test_csp_with_wasm_unsafe_eval_works(mao_embed, mao_backend):
    csp = (
        f"script-src 'self' 'unsafe-inline' 'wasm-unsafe-eval' {mao_backend.url}; "
        f"connect-src {mao_backend.url} ws://127.0.0.1:{mao_backend.port}"
    )
    embedded = mao_embed(COUNTER_BUTTON, headers={"Content-Security-Policy": csp})
    assert embedded.call("page_inspect")["success"]
    # The read tools work too; a regex needs a blob: worker, which this policy (worker-src
    # falls back to script-src) refuses: a clear refusal, and plain text still works (SPEC T2).
    assert embedded.call("page_find", query="count me")["result"]["total"] == 1
    refused = embedded.call("page_find", query="count", regex=True)
    assert refused["success"] is False and refused["error"]["code"] == "unsupported"
    assert "Content-Security-Policy" in refused["error"]["message"]


def test_destroy_removes_the_sdk_and_ends_the_session(mao_embed, mao_agent):
    # SPEC E2: destroy removes every SDK element and stops the session.
    embedded = mao_embed(COUNTER_BUTTON)
    assert embedded.page.evaluate("document.querySelectorAll('mao-embed-host').length") == 1
    embedded.page.evaluate("MaoChat.destroy()")
    assert embedded.page.evaluate("document.querySelectorAll('mao-embed-host').length") == 0
    embedded.page.wait_for_function("() => true")
    for _ in range(50):
        sessions = {s["sessionId"]: s for s in mao_agent.sessions()}
        if embedded.session_id not in sessions or not sessions[embedded.session_id].get(
            "ready", True
        ):
            break
        embedded.page.wait_for_timeout(100)
    result = embedded.call("page_inspect")
    assert result["success"] is False


TWO_BUTTONS = """
<script>window.__clicks = {first: 0, second: 0};</script>
<button type="button" onclick="window.__clicks.first += 1">First</button>
<button type="button" onclick="window.__clicks.second += 1">Second</button>
"""


def test_socket_dropped_mid_batch_answers_may_have_applied_and_nothing_replays(
    mao_embed, mao_backend
):
    # SPEC W3, chaos: the backend's socket to a real page dies while a batch is
    # between two writes. The agent is told the write may have applied; the page stops the
    # batch, reconnects and resumes its session; nothing is ever run again, also when the
    # agent retries the same requestId afterwards.
    embedded = mao_embed(TWO_BUTTONS)
    snapshot = embedded.inspect()
    request_id = "drop-" + uuid.uuid4().hex[:8]
    batch = [
        {"action": "click", **ref(snapshot, "First")},
        {"action": "wait", "timeMs": 3000},
        {"action": "click", **ref(snapshot, "Second")},
    ]
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        call = pool.submit(embedded.call, "page_click", request_id=request_id, actions=batch)
        embedded.page.wait_for_function("() => window.__clicks.first === 1")
        mao_backend.drop_connection(embedded.session_id)
        result = call.result(timeout=10)
    assert result["success"] is False
    assert result["error"]["code"] == "disconnected"
    assert result["error"]["details"]["mayHaveApplied"] is True
    # The page comes back on the same session (resume), and the rest of the batch never ran:
    # waited out well past the end of the wait step.
    resumed = embedded.agent.wait_for_session(url=embedded.url, timeout=30)
    assert resumed["sessionId"] == embedded.session_id
    embedded.page.wait_for_timeout(3500)
    assert embedded.page.evaluate("window.__clicks") == {"first": 1, "second": 0}
    # A retry of the same requestId answers the first result; the page sees nothing.
    retry = embedded.call("page_click", request_id=request_id, actions=batch)
    assert retry["error"] == result["error"]
    assert embedded.page.evaluate("window.__clicks") == {"first": 1, "second": 0}
