"""Worker mode (SPEC E6, E4): the page's Python runs in a module Web Worker and the main thread
runs only the JavaScript primitives; a page whose CSP forbids blob workers gets the main-thread
mode; destroy() ends the worker; a worker that dies answers what it was running. The rest of
the browser suite runs in either mode (MAO_EMBED_TEST_MODE, .ci/run)."""

from __future__ import annotations

import threading

import pytest

pytestmark = pytest.mark.browser

WORKER = {"mode": "worker"}
FORM = (
    '<label>City <input id="city"></label>'
    '<label><input type="checkbox" id="agree"> Agree</label>'
    '<button id="go" onclick="this.textContent = \'Sent \' + city.value">Send</button>'
)


def refs(result: dict) -> dict[str, str]:
    return {e["label"]: e["elementId"] for e in result["result"]["elements"]}


def runtime_workers(page) -> list:
    return [w for w in page.workers if "mao-worker" in w.url or w.url.startswith("blob:")]


def test_the_runtime_runs_in_a_worker_and_acts_on_the_page(mao_embed, mao_agent):
    embedded = mao_embed(FORM, init=WORKER)
    page = embedded.page
    ready = page.evaluate("() => MaoChat.ready")
    assert ready["mode"] == "worker" and ready["sessionId"] == embedded.session_id
    assert len(runtime_workers(page)) == 1
    # No interpreter on the page's own thread: the loader never imported Pyodide there.
    assert page.evaluate("() => typeof globalThis.loadPyodide") == "undefined"
    inspected = embedded.call("page_inspect")
    assert inspected["success"], inspected["error"]
    ids = refs(inspected)
    snapshot = inspected["result"]["snapshotId"]
    batch = embedded.call(
        "page_fill",
        actions=[
            {"action": "fill", "snapshotId": snapshot, "elementId": ids["City"], "value": "Lyon"},
            {"action": "check", "snapshotId": snapshot, "elementId": ids["Agree"]},
            {"action": "click", "snapshotId": snapshot, "elementId": ids["Send"]},
        ],
    )
    assert batch["success"], batch["error"]
    assert page.input_value("#city") == "Lyon"
    assert page.is_checked("#agree")
    assert page.text_content("#go") == "Sent Lyon"
    # Each tool is a measure on the page's own timeline, with the calls it cost the bridge.
    measures = page.evaluate(
        "performance.getEntriesByType('measure').filter((m) => m.name === 'mao:page_fill')"
        ".map((m) => m.detail)"
    )
    assert measures and measures[-1]["mode"] == "worker" and measures[-1]["bridgeCalls"] > 0


def test_a_csp_forbidding_blob_workers_gets_the_main_thread_mode(mao_embed, mao_backend):
    backend = mao_backend.url
    csp = (
        f"script-src 'self' 'unsafe-inline' 'wasm-unsafe-eval' {backend}; "
        f"connect-src {backend} ws://127.0.0.1:{mao_backend.port}; worker-src 'none'"
    )
    lines: list[str] = []
    embedded = mao_embed(
        FORM, init=WORKER, headers={"Content-Security-Policy": csp}, wait_ready=False
    )
    embedded.page.on("console", lambda message: lines.append(message.text))
    ready = embedded.page.evaluate("() => MaoChat.boot()")
    assert ready["mode"] == "main-thread"
    named = [line for line in lines if line.startswith("[mao-embed]") and "worker-src" in line]
    assert len(named) == 1 and "main thread" in named[0]
    session = embedded.agent.wait_for_session(url=embedded.url)
    inspected = embedded.agent.call(session["sessionId"], "page_inspect")
    assert inspected["success"] and "City" in refs(inspected)


def test_destroy_ends_the_worker(mao_embed):
    embedded = mao_embed(FORM, init=WORKER)
    page = embedded.page
    (worker,) = runtime_workers(page)
    closed = threading.Event()
    worker.on("close", lambda _worker: closed.set())
    page.evaluate("() => MaoChat.destroy()")
    page.wait_for_timeout(300)
    assert closed.is_set()
    assert runtime_workers(page) == []
    assert page.locator("mao-embed-host").count() == 0


def test_a_worker_that_dies_answers_the_call_it_ran_and_every_later_one(mao_embed):
    # The page waits on a confirmation card under per_action, so the call is in flight in the
    # worker when the worker dies.
    embedded = mao_embed(FORM, init=WORKER, authorization=None)
    page = embedded.page
    inspected = embedded.call("page_inspect")
    ids = refs(inspected)
    answers: dict[str, dict] = {}

    def click() -> None:
        answers["click"] = embedded.call(
            "page_click", snapshotId=inspected["result"]["snapshotId"], elementId=ids["Send"]
        )

    thread = threading.Thread(target=click)
    thread.start()
    page.get_by_role("button", name="Allow once").wait_for()
    (worker,) = runtime_workers(page)
    worker.evaluate("() => { setTimeout(() => { throw new Error('the runtime broke'); }); }")
    while thread.is_alive():
        page.wait_for_timeout(100)
    assert answers["click"]["success"] is False
    assert answers["click"]["error"]["code"] == "runtime_crashed"
    assert page.text_content("#go") == "Send"  # the card was never answered: nothing clicked
    assert page.get_by_role("button", name="Allow once").count() == 0  # nor can it be now
    later = embedded.call("page_inspect")
    assert later["success"] is False and later["error"]["code"] == "runtime_crashed"


# 2,500 order rows of four controls each: 10,000 interactive elements, built by the page itself.
TEN_THOUSAND = """
<table><tbody id="orders"></tbody></table>
<script>
  const rows = [];
  for (let i = 0; i < 2500; i++) {
    rows.push(`<tr><td>Order ${i}</td><td><input type="checkbox" aria-label="Select ${i}"></td>` +
      `<td><input aria-label="Note ${i}"></td><td><select aria-label="Status ${i}">` +
      `<option>new</option><option>paid</option><option>sent</option></select></td>` +
      `<td><button>Open ${i}</button></td></tr>`);
  }
  document.getElementById("orders").innerHTML = rows.join("");
</script>
"""

OBSERVE_LONG_TASKS = """() => {
  window.longTasks = [];
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) window.longTasks.push(Math.round(entry.duration));
  }).observe({ type: "longtask" });
}"""


def test_a_whole_page_inspect_of_10k_elements_leaves_no_long_task_on_the_page(mao_embed):
    # SPEC E4, E6: the snapshot's Python (names, roles, rendering) runs in the worker; the walk
    # and its encoding on the page's thread come in slices of 8 ms that yield. On the main
    # thread the same call is one task of a second or more. The observer also counts what is
    # not ours (a garbage collection of the page's heap, the page's own style work: one task
    # of 52-62 ms in 2 of 4 runs here), so the bound is 100 ms; the 50 ms goal is measured by
    # `nox -s bench -- page_cost` (agent work on the 10k page).
    embedded = mao_embed(TEN_THOUSAND, init=WORKER)
    page = embedded.page
    page.evaluate(OBSERVE_LONG_TASKS)
    result = embedded.call("page_inspect", includeOffscreen=True, maxTokens=50000)
    assert result["success"], result
    snapshot = result["result"]
    assert len(snapshot["elements"]) + snapshot["truncated"] >= 10_000
    page.evaluate("() => new Promise((resolve) => setTimeout(resolve, 50))")
    assert [ms for ms in page.evaluate("() => window.longTasks") if ms >= 100] == []
