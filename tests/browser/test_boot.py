"""Boot on first use (SPEC E6; CONTRACT "Boot on first use"): a page view registers its session
and costs the loader and the launcher only; the Python runtime boots when the user opens the
panel, when an agent's call arrives, or when the page calls ``MaoChat.boot()``."""

from __future__ import annotations

import os
import threading
import time

import pytest
from mao_embed.audit import AuditEvent

pytestmark = pytest.mark.browser

FIELD = '<label>City <input id="city" autofocus></label><button id="go">Go</button>'
# The product's default: no ``ui`` option, so the panel starts as its launcher.
LAUNCHER = {"ui": {}}
DEFAULT_MODE = "worker"  # init's `mode` when the page gives none (docs/embedding.md)
RUNTIME_FILES = ("pyodide.mjs", "pyodide.asm", "snapshot.bin", "site-packages.tar", "stdlib.zip")


def session_of(mao_agent, url):
    return mao_agent.wait_for_session(url=url, ready=None, timeout=30)


def fetched_runtime(page) -> list[str]:
    names = page.evaluate("performance.getEntriesByType('resource').map((e) => e.name)")
    return [name for name in names if any(part in name for part in RUNTIME_FILES)]


def marks(page, name: str) -> int:
    return page.evaluate(f"performance.getEntriesByName({name!r}, 'mark').length")


def boots(mao_backend, session_id: str):
    return mao_backend.app.state.audit.query(event=AuditEvent.PAGE_BOOT, session_id=session_id)


def test_a_page_view_registers_its_session_and_loads_no_runtime(mao_embed, mao_agent):
    embedded = mao_embed(FIELD, init=LAUNCHER, wait_ready=False)
    session = session_of(mao_agent, embedded.url)
    assert session["ready"] is False
    page = embedded.page
    page.wait_for_timeout(500)  # nothing starts later by itself either
    assert fetched_runtime(page) == []
    assert marks(page, "mao:boot-start") == 0
    # The launcher, not the panel; it says the assistant starts when needed.
    launcher = page.get_by_role("button", name="Open panel", exact=True)
    assert launcher.is_visible()
    assert not page.get_by_role("region", name="Mao Embed", exact=True).is_visible()
    assert "Starts when you need it" in launcher.inner_text()
    assert [s["ready"] for s in mao_agent.sessions() if s["sessionId"] == session["sessionId"]] == [
        False
    ]


def test_an_agent_call_boots_the_runtime_and_is_answered(mao_embed, mao_agent, mao_backend):
    embedded = mao_embed(FIELD, init=LAUNCHER, wait_ready=False)
    session = session_of(mao_agent, embedded.url)
    result = mao_agent.call(session["sessionId"], "page_inspect")
    assert result["success"], result
    labels = [element["label"] for element in result["result"]["elements"]]
    assert "City" in labels and "Go" in labels
    ready = embedded.page.evaluate("() => MaoChat.ready")
    assert (ready["sessionId"], ready["trigger"], ready["mode"]) == (
        session["sessionId"], "agent", os.environ.get("MAO_EMBED_TEST_MODE") or DEFAULT_MODE
    )
    assert mao_agent.wait_for_session(url=embedded.url)["sessionId"] == session["sessionId"]
    (record,) = boots(mao_backend, session["sessionId"])
    assert record.code == "agent" and record.duration_ms > 0
    # The SDK's work is named for the page owner's own tools (performance.measure "mao:...").
    measures = embedded.page.evaluate(
        "performance.getEntriesByType('measure').map((m) => m.name)"
    )
    assert "mao:boot" in measures and "mao:page_inspect" in measures
    # The boot is visible to the user: the panel's conversation says the tools are ready (the
    # panel is still closed: its log is read as the DOM holds it).
    conversation = embedded.page.locator("mao-embed-host [role=log][aria-label=Conversation]")
    assert conversation.text_content().count("Page tools are ready.") == 1


def test_opening_the_panel_boots_and_pointing_at_it_starts_the_downloads(
    mao_embed, mao_agent, mao_backend
):
    embedded = mao_embed(FIELD, init=LAUNCHER, wait_ready=False)
    session = session_of(mao_agent, embedded.url)
    page = embedded.page
    launcher = page.get_by_role("button", name="Open panel", exact=True)
    launcher.hover()
    page.wait_for_function("() => performance.getEntriesByName('mao:prefetch').length === 1")
    assert marks(page, "mao:boot-start") == 0
    launcher.click()
    ready = page.evaluate("() => MaoChat.ready")
    assert ready["trigger"] == "panel" and ready["sessionId"] == session["sessionId"]
    assert page.get_by_role("region", name="Mao Embed", exact=True).is_visible()
    assert [r.code for r in boots(mao_backend, session["sessionId"])] == ["panel"]
    # The panel works: the user picks a level with a real click.
    embedded.grant("task")


def test_boot_is_idempotent_and_an_agent_call_racing_the_panel_boots_once(
    mao_embed, mao_agent, mao_backend
):
    embedded = mao_embed(FIELD, init=LAUNCHER, wait_ready=False)
    session = session_of(mao_agent, embedded.url)
    answers = {}

    def call(name):
        answers[name] = mao_agent.call(session["sessionId"], "page_observe")

    threads = [threading.Thread(target=call, args=(f"call-{i}",)) for i in range(3)]
    for thread in threads:
        thread.start()
    page = embedded.page
    page.get_by_role("button", name="Open panel", exact=True).click()
    first, second = page.evaluate("() => Promise.all([MaoChat.boot(), MaoChat.boot()])")
    for thread in threads:
        thread.join(60)
    assert all(answer["success"] for answer in answers.values()), answers
    assert len(answers) == 3
    assert first == second and first["sessionId"] == session["sessionId"]
    assert marks(page, "mao:boot-start") == 1 and marks(page, "mao:python-ready") == 1
    assert len(boots(mao_backend, session["sessionId"])) == 1


def test_calls_that_waited_for_the_boot_run_once_each(mao_embed, mao_agent):
    # Frames that arrive before the runtime wait in order and none is lost or run twice (W2):
    # a repeated requestId answers the first result without running again.
    embedded = mao_embed(FIELD, init=LAUNCHER, wait_ready=False)
    session = session_of(mao_agent, embedded.url)
    answers = {}

    def call(request_id):
        answers[request_id] = mao_agent.call(
            session["sessionId"], "page_inspect", request_id=request_id
        )

    threads = [threading.Thread(target=call, args=(f"boot-q-{i}",)) for i in range(3)]
    for thread in threads:
        thread.start()
        time.sleep(0.05)
    for thread in threads:
        thread.join(60)
    snapshots = {rid: answer["result"]["snapshotId"] for rid, answer in answers.items()}
    assert len(set(snapshots.values())) == 3, answers  # each ran, once
    again = mao_agent.call(session["sessionId"], "page_inspect", request_id="boot-q-0")
    assert again["result"]["snapshotId"] == snapshots["boot-q-0"]


def test_a_runtime_that_cannot_start_answers_waiting_calls_at_once(
    mao_embed, mao_agent, mao_context
):
    # A boot that fails is a structured error for the call that waited for it, never a hang
    # until its timeout.
    mao_context.route("**/pyodide.mjs", lambda route: route.fulfill(status=500, body="broken"))
    try:
        embedded = mao_embed(FIELD, init=LAUNCHER, wait_ready=False)
        session = session_of(mao_agent, embedded.url)
        answers = []
        began = time.monotonic()
        caller = threading.Thread(
            target=lambda: answers.append(mao_agent.call(session["sessionId"], "page_inspect"))
        )
        caller.start()
        while caller.is_alive():  # Playwright serves the route only while its loop runs
            embedded.page.wait_for_timeout(100)
        assert time.monotonic() - began < 25  # the call's timeout is 30 s
        (result,) = answers
        assert result["success"] is False and result["error"]["code"] == "startup_failed", result
        outcome = embedded.page.evaluate("() => MaoChat.ready.then(() => 'ready', (e) => e.code)")
        assert outcome == "startup_failed"
        again = mao_agent.call(session["sessionId"], "page_observe")
        assert again["error"]["code"] == "startup_failed"
    finally:
        mao_context.unroute("**/pyodide.mjs")


def test_destroy_during_boot_ends_the_session_and_a_new_init_works(
    mao_embed, mao_agent, mao_backend, mao_pages
):
    embedded = mao_embed(FIELD, init=LAUNCHER, wait_ready=False)
    session = session_of(mao_agent, embedded.url)
    page = embedded.page
    outcome = page.evaluate(
        "() => { const ready = MaoChat.boot(); MaoChat.destroy(); "
        "return ready.then(() => 'ready', (e) => e.code); }"
    )
    assert outcome == "destroyed"
    assert page.evaluate("document.querySelectorAll('mao-embed-host').length") == 0
    deadline = time.monotonic() + 10
    while any(s["sessionId"] == session["sessionId"] for s in mao_agent.sessions()):
        assert time.monotonic() < deadline, "the destroyed page's session is still listed"
        time.sleep(0.1)
    page.wait_for_timeout(1000)  # the boot that was under way finishes into nothing
    assert page.evaluate("document.querySelectorAll('mao-embed-host').length") == 0
    token = mao_backend.issue_token("test-user", "test-agent", origin=mao_pages.origin)
    info = page.evaluate(
        "([url, token]) => MaoChat.init({serverUrl: url, agentId: 'test-agent', "
        "user: {id: 'test-user'}, token, boot: 'eager'})",
        [mao_backend.url, token],
    )
    assert info["trigger"] == "eager" and info["sessionId"] != session["sessionId"]
    assert mao_agent.call(info["sessionId"], "page_observe")["success"]


def test_boot_before_init_boots_at_init(mao_embed, mao_agent, mao_backend, mao_pages):
    embedded = mao_embed(FIELD, init=LAUNCHER, wait_ready=False)
    page = embedded.page
    token = mao_backend.issue_token("test-user", "test-agent", origin=mao_pages.origin)
    info = page.evaluate(
        "([url, token]) => { MaoChat.destroy(); const ready = MaoChat.boot(); "
        "MaoChat.init({serverUrl: url, agentId: 'test-agent', user: {id: 'test-user'}, token}); "
        "return ready; }",
        [mao_backend.url, token],
    )
    assert info["trigger"] == "api"
    assert mao_agent.call(info["sessionId"], "page_observe")["success"]


def test_an_unknown_boot_option_is_refused_at_init(mao_embed):
    embedded = mao_embed(FIELD, init={"boot": "later"}, wait_ready=False)
    message = embedded.page.evaluate("() => MaoChat.ready.then(() => 'ready', (e) => e.message)")
    assert "boot must be" in message


def test_before_boot_a_dropped_connection_resumes_the_same_session(
    mao_embed, mao_agent, mao_backend
):
    # SPEC W4 before boot: the loader's transport reconnects with backoff and resumes the id;
    # the page is still not booted, and a call then boots it on the resumed connection.
    embedded = mao_embed(FIELD, init=LAUNCHER, wait_ready=False)
    session = session_of(mao_agent, embedded.url)
    mao_backend.drop_connection(session["sessionId"])
    deadline = time.monotonic() + 20
    while True:
        listed = [s for s in mao_agent.sessions() if s["url"] == embedded.url]
        if listed and listed[0]["connectedAt"] != session["connectedAt"]:
            break
        assert time.monotonic() < deadline, "the page did not reconnect"
        time.sleep(0.1)
    assert [(s["sessionId"], s["ready"]) for s in listed] == [(session["sessionId"], False)]
    assert marks(embedded.page, "mao:boot-start") == 0
    assert mao_agent.call(session["sessionId"], "page_observe")["success"]


def test_before_boot_the_page_answers_heartbeats(mao_pages, mao_context, tmp_path):
    # SPEC W4: a backend that pings every 200 ms drops a page silent for three of them; the
    # loader's transport answers them while Python has not booted.
    from mao_embed.config import ServerConfig
    from mao_embed.server import start_in_thread
    from mao_embed.testing import AgentClient, embed_snippet, page_html, random_secret

    config = ServerConfig(
        host="127.0.0.1", port=0, secret=random_secret(), allowed_origins=(mao_pages.origin,),
        db_path=tmp_path / "audit.db", heartbeat_interval_ms=200,
    )
    server = start_in_thread(config)
    agent = AgentClient(server.url)
    try:
        token = server.issue_token("hb-user", "test-agent", origin=mao_pages.origin)
        snippet = embed_snippet(server.url, agent_id="test-agent", user_id="hb-user", token=token)
        url = mao_pages.add("/heartbeat-before-boot.html", page_html(FIELD, snippet))
        page = mao_context.new_page()
        page.goto(url)
        session = agent.wait_for_session(url=url, ready=None, timeout=30)
        page.wait_for_timeout(2000)  # ten heartbeats
        (still,) = [s for s in agent.sessions() if s["url"] == url]
        assert (still["sessionId"], still["connectedAt"], still["ready"]) == (
            session["sessionId"], session["connectedAt"], False
        )
        assert not server.app.state.audit.query(
            event=AuditEvent.SESSION_DISCONNECTED, session_id=session["sessionId"]
        )
        page.close()
    finally:
        agent.close()
        server.stop()


def test_writes_that_waited_for_the_boot_run_in_the_order_they_came(mao_embed, mao_agent):
    # SPEC E6, W1: requests that arrive before the runtime wait in order. The user granted full
    # access on an earlier view of this page (remembered in this browser, SPEC P1), so the
    # reloaded, not yet booted view runs writes without cards: typed in arrival order.
    embedded = mao_embed(FIELD, init=LAUNCHER)  # booted and granted "full" by the fixture
    page = embedded.page
    page.reload()
    # SPEC B7: the reloaded view is the tab's next page, so it keeps the session, not booted.
    session = mao_agent.wait_for_session(url=embedded.url, ready=False, timeout=30)
    assert session["sessionId"] == embedded.session_id
    assert marks(page, "mao:boot-start") == 0
    answers = {}

    def type_text(text):
        answers[text] = mao_agent.call(session["sessionId"], "page_keyboard", {"text": text})

    threads = [threading.Thread(target=type_text, args=(text,)) for text in ("Han", "gzhou")]
    for thread in threads:
        thread.start()
        time.sleep(0.3)  # the second request reaches the page after the first
    for thread in threads:
        thread.join(60)
    assert all(answer["success"] for answer in answers.values()), answers
    assert page.input_value("#city") == "Hangzhou"
