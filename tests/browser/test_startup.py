"""Start-up behaviour the business page relies on (SPEC E1, E4; CONTRACT `MaoChat.ready`)."""

from __future__ import annotations

from browser_helpers import COUNTER_BUTTON, clicks


def test_sdk_host_shows_at_once_and_input_during_boot_is_not_lost(mao_context, mao_pages, mao_backend, mao_agent):
    # SPEC E4: the SDK host is in the page synchronously after init(), before Python runs;
    # the business page keeps working while Python boots. Interpreter start-up is one
    # synchronous block of wasm (README "Start-up"), so input arriving during it is queued
    # and handled, never dropped.
    from mao_embed.testing import embed_snippet, page_html

    token = mao_backend.issue_token("boot-user", "test-agent", origin=mao_pages.origin)
    snippet = embed_snippet(mao_backend.url, agent_id="test-agent", user_id="boot-user", token=token)
    probe = "<script>window.__hostAtInit = document.querySelectorAll('mao-embed-host').length; window.__readyAtInit = 'pending'; MaoChat.ready.then(() => { window.__readyAtInit = 'ready'; });</script>"
    url = mao_pages.add("/boot.html", page_html(COUNTER_BUTTON, snippet + probe))
    page = mao_context.new_page()
    page.goto(url, wait_until="domcontentloaded")
    assert page.evaluate("window.__hostAtInit") == 1
    for _ in range(3):
        page.click("#counter")
    assert clicks(page) == 3
    page.evaluate("() => MaoChat.ready")
    assert page.evaluate("window.__readyAtInit") == "ready"
    assert clicks(page) == 3


def test_init_with_missing_options_rejects_with_the_reasons(mao_context, mao_pages, mao_backend):
    page = mao_context.new_page()
    url = mao_pages.add("/bad-options.html", f'<script src="{mao_backend.url}/sdk/mao-chat.js"></script>')
    page.goto(url)
    message = page.evaluate("() => MaoChat.init({ serverUrl: 'nope' }).then(() => 'resolved', (e) => e.message)")
    assert "serverUrl" in message and "agentId" in message and "user.id" in message and "token" in message
    assert page.evaluate("document.querySelectorAll('mao-embed-host').length") == 0


def test_ready_resolves_with_the_session_id(mao_embed):
    embedded = mao_embed(COUNTER_BUTTON)
    info = embedded.page.evaluate("() => MaoChat.ready")
    assert info["sessionId"] == embedded.session_id


def test_token_function_is_called_and_never_put_in_the_url(mao_embed, mao_backend, mao_pages):
    # SPEC B5: token in the first message only; a function provider is supported.
    token = mao_backend.issue_token("fn-user", "test-agent", origin=mao_pages.origin)
    body = f"<script>window.__tokenCalls = 0; window.__token = () => {{ window.__tokenCalls++; return Promise.resolve({token!r}); }};</script>" + COUNTER_BUTTON
    embedded = mao_embed(body, user_id="fn-user", wait_ready=False)
    # Re-init with the function provider instead of the string the fixture passed.
    embedded.page.evaluate(
        "async (url) => { MaoChat.destroy(); await MaoChat.init({serverUrl: url, agentId: 'test-agent', user: {id: 'fn-user'}, token: window.__token}); }",
        mao_backend.url,
    )
    assert embedded.page.evaluate("window.__tokenCalls") >= 1
    sockets = embedded.page.evaluate("performance.getEntriesByType('resource').map(e => e.name)")
    assert all(token not in name for name in sockets)


def test_reinit_after_destroy_starts_a_fresh_session_with_the_new_options(mao_embed, mao_backend, mao_pages, mao_agent):
    # SPEC E2: destroy() then init() again gives a new session for the new user, not the old.
    embedded = mao_embed(COUNTER_BUTTON, user_id="first-user")
    token = mao_backend.issue_token("second-user", "test-agent", origin=mao_pages.origin)
    info = embedded.page.evaluate(
        "async ([url, token]) => { MaoChat.destroy(); return await MaoChat.init({serverUrl: url, agentId: 'test-agent', user: {id: 'second-user'}, token}); }",
        [mao_backend.url, token],
    )
    assert info["sessionId"] != embedded.session_id
    sessions = {s["sessionId"]: s for s in mao_agent.sessions()}
    assert sessions[info["sessionId"]]["userId"] == "second-user"
    assert embedded.page.evaluate("document.querySelectorAll('mao-embed-host').length") == 1
