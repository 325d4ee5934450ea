"""Start-up behaviour the business page relies on (SPEC E1, E4; CONTRACT `MaoChat.ready`)."""

from __future__ import annotations

from browser_helpers import COUNTER_BUTTON, clicks


def test_sdk_host_shows_at_once_and_input_during_boot_is_not_lost(
    mao_context, mao_pages, mao_backend, mao_agent
):
    # SPEC E4: the SDK host is in the page synchronously after init(), before Python runs;
    # the business page keeps working while Python boots. Interpreter start-up is one
    # synchronous block of wasm (docs/embedding.md "Start-up"), so input arriving during it is
    # queued and handled, never dropped.
    from mao_embed.testing import embed_snippet, page_html

    token = mao_backend.issue_token("boot-user", "test-agent", origin=mao_pages.origin)
    snippet = embed_snippet(
        mao_backend.url, agent_id="test-agent", user_id="boot-user", token=token,
        extra={"boot": "eager"},
    )
    probe = (
        "<script>window.__hostAtInit = document.querySelectorAll('mao-embed-host').length; "
        "window.__readyAtInit = 'pending'; "
        "MaoChat.ready.then(() => { window.__readyAtInit = 'ready'; });</script>"
    )
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
    url = mao_pages.add(
        "/bad-options.html", f'<script src="{mao_backend.url}/sdk/mao-chat.js"></script>'
    )
    page.goto(url)
    message = page.evaluate(
        "() => MaoChat.init({ serverUrl: 'nope' }).then(() => 'resolved', (e) => e.message)"
    )
    assert (
        "serverUrl" in message
        and "agentId" in message
        and "user.id" in message
        and "token" in message
    )
    assert page.evaluate("document.querySelectorAll('mao-embed-host').length") == 0


def test_ready_resolves_with_the_session_id(mao_embed):
    embedded = mao_embed(COUNTER_BUTTON)
    info = embedded.page.evaluate("() => MaoChat.boot()")
    assert info["sessionId"] == embedded.session_id


def test_token_function_is_called_and_never_put_in_the_url(mao_embed, mao_backend, mao_pages):
    # SPEC B5: token in the first message only; a function provider is supported.
    token = mao_backend.issue_token("fn-user", "test-agent", origin=mao_pages.origin)
    body = (
        f"<script>window.__tokenCalls = 0; window.__token = () => {{ window.__tokenCalls++; return "
        f"Promise.resolve({token!r}); }};</script>" + COUNTER_BUTTON
    )
    embedded = mao_embed(body, user_id="fn-user", wait_ready=False)
    # Re-init with the function provider instead of the string the fixture passed.
    embedded.page.evaluate(
        "async (url) => { MaoChat.destroy(); MaoChat.init({serverUrl: url, agentId: "
        "'test-agent', user: {id: 'fn-user'}, token: window.__token}); await MaoChat.boot(); }",
        mao_backend.url,
    )
    assert embedded.page.evaluate("window.__tokenCalls") >= 1
    sockets = embedded.page.evaluate("performance.getEntriesByType('resource').map(e => e.name)")
    assert all(token not in name for name in sockets)


def test_reinit_after_destroy_starts_a_fresh_session_with_the_new_options(
    mao_embed, mao_backend, mao_pages, mao_agent
):
    # SPEC E2: destroy() then init() again gives a new session for the new user, not the old.
    embedded = mao_embed(COUNTER_BUTTON, user_id="first-user")
    token = mao_backend.issue_token("second-user", "test-agent", origin=mao_pages.origin)
    info = embedded.page.evaluate(
        "async ([url, token]) => { MaoChat.destroy(); return await MaoChat.init({serverUrl: url, "
        "agentId: 'test-agent', user: {id: 'second-user'}, token, boot: 'eager'}); }",
        [mao_backend.url, token],
    )
    assert info["sessionId"] != embedded.session_id
    sessions = {s["sessionId"]: s for s in mao_agent.sessions()}
    assert sessions[info["sessionId"]]["userId"] == "second-user"
    assert embedded.page.evaluate("document.querySelectorAll('mao-embed-host').length") == 1


# --- The booted-runtime image (docs/startup.md): SPEC E3 start-up, restored from the build's
# memory snapshot; every other browser test runs on this path too, since it is the default.

FALLBACK_LINE = "[mao-embed] memory snapshot not used"


def _restored(page) -> bool:
    return page.evaluate("performance.getEntriesByName('mao:snapshot-restored').length") == 1


def _watch_console(context) -> list[str]:
    lines: list[str] = []
    context.on("console", lambda message: lines.append(message.text))
    return lines


def test_pages_restored_from_one_snapshot_are_each_their_own(mao_context, mao_embed):
    # Two pages from the same snapshot must not share what the build process left in the heap:
    # random generators (snapshot and element ids) are reseeded from the page's entropy, and
    # one page's snapshots mean nothing to the other.
    console = _watch_console(mao_context)
    first = mao_embed(COUNTER_BUTTON, user_id="image-first")
    second = mao_embed(COUNTER_BUTTON, user_id="image-second")
    assert _restored(first.page) and _restored(second.page), console
    assert not [line for line in console if FALLBACK_LINE in line]
    a, b = first.inspect(), second.inspect()
    assert a["snapshotId"] != b["snapshotId"]
    assert {e["elementId"] for e in a["elements"]}.isdisjoint(e["elementId"] for e in b["elements"])
    button = first.find(a, label="Count me")
    foreign = second.call("page_click", snapshotId=a["snapshotId"], elementId=button["elementId"])
    assert foreign["success"] is False and foreign["error"]["code"] in ("stale_ref", "not_found"), (
        foreign
    )
    assert clicks(second.page) == 0
    clicked = first.call("page_click", snapshotId=a["snapshotId"], elementId=button["elementId"])
    assert clicked["success"], clicked
    assert clicks(first.page) == 1


def _serve_modified(context, pattern: str, change) -> None:
    """Serve the real asset through ``change(bytes) -> bytes``.

    The body is served decoded, so the encoding header goes."""

    def handle(route):
        response = route.fetch()
        headers = {
            k: v
            for k, v in response.headers.items()
            if k.lower() not in ("content-encoding", "content-length")
        }
        route.fulfill(status=response.status, headers=headers, body=change(response.body()))

    context.route(pattern, handle)


def test_a_corrupted_snapshot_falls_back_to_a_fresh_boot_and_says_why(mao_context, mao_embed):
    # A snapshot of the announced size that Pyodide itself rejects (no snapshot header): the
    # restore fails inside loadPyodide, after the runtime was created; the page boots afresh.
    import json

    size = 1 << 16

    def announce(body: bytes) -> bytes:
        return json.dumps({**json.loads(body), "bytes": size}).encode()

    console = _watch_console(mao_context)
    _serve_modified(mao_context, "**/snapshot.json", announce)
    _serve_modified(mao_context, "**/snapshot.bin", lambda body: bytes(size))
    embedded = mao_embed(COUNTER_BUTTON, user_id="image-corrupt", wait_ready=False)
    outcome = embedded.page.evaluate("() => MaoChat.boot().then(() => 'ready', (e) => e.message)")
    assert outcome == "ready", console
    assert not _restored(embedded.page)
    warnings = [line for line in console if FALLBACK_LINE in line]
    assert len(warnings) == 1 and "corrupt" in warnings[0], console
    embedded = type(embedded)(
        embedded.page,
        embedded.url,
        embedded.agent.wait_for_session(url=embedded.url)["sessionId"],
        embedded.agent,
        embedded.backend,
    )
    embedded.grant("full")
    snapshot = embedded.inspect()
    button = embedded.find(snapshot, label="Count me")
    assert embedded.call(
        "page_click", snapshotId=snapshot["snapshotId"], elementId=button["elementId"]
    )["success"]
    assert clicks(embedded.page) == 1


def test_a_snapshot_of_another_build_is_not_restored(mao_context, mao_embed):
    import json

    def other_build(body: bytes) -> bytes:
        meta = json.loads(body)
        meta["buildId"] = "0000000000000000"
        return json.dumps(meta).encode()

    console = _watch_console(mao_context)
    _serve_modified(mao_context, "**/snapshot.json", other_build)
    embedded = mao_embed(COUNTER_BUTTON, user_id="image-stale")
    assert not _restored(embedded.page)
    warnings = [line for line in console if FALLBACK_LINE in line]
    assert len(warnings) == 1 and "0000000000000000" in warnings[0], console
    assert embedded.call("page_inspect")["success"]


def test_the_snapshot_path_works_under_a_csp_with_wasm_unsafe_eval(
    mao_context, mao_embed, mao_backend
):
    # The snapshot, site-packages and dynamic libraries are fetched and compiled by the loader
    # itself: connect-src for the backend and 'wasm-unsafe-eval' are all they need.
    csp = (
        f"script-src 'self' 'unsafe-inline' 'wasm-unsafe-eval' {mao_backend.url}; "
        f"connect-src {mao_backend.url} ws://127.0.0.1:{mao_backend.port}"
    )
    console = _watch_console(mao_context)
    embedded = mao_embed(
        COUNTER_BUTTON, user_id="image-csp", headers={"Content-Security-Policy": csp}
    )
    assert _restored(embedded.page), console
    assert embedded.call("page_inspect")["success"]
