"""Site tools end to end in real Chromium (SPEC B8, P1-P6, S8, E1; docs/site-tools.md): what a
page declares with the WebMCP draft's registerTool (current and earlier shapes) or a
`<form toolname>` reaches an agent, checked against its schema, under the user's
authorization, within the call's time."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from mao_embed.audit import AuditEvent
from panel_helpers import AgentThread, answer, card
from playwright.sync_api import expect

# Registered once the page has loaded: the loader (at the end of the body) comes first.
TOOLS = """
<p id="out">nothing yet</p>
<script>
window.calls = [];
window.addEventListener("load", () => {
  document.modelContext.registerTool({
    name: "add_to_cart",
    description: "Add an item to the cart",
    inputSchema: {type: "object", properties: {sku: {type: "string", pattern: "^[A-Z][0-9]+$"},
                  quantity: {type: "integer", minimum: 1, maximum: 9}},
                  required: ["sku"], additionalProperties: false},
    execute({sku, quantity}) {
      window.calls.push(sku);
      document.getElementById("out").textContent = `added ${quantity || 1} x ${sku}`;
      return {cart: [{sku, quantity: quantity || 1}]};
    },
  });
  document.modelContext.registerTool({
    name: "order_status",
    description: "Look up an order's status",
    inputSchema: {type: "object", properties: {order: {type: "string"}}, required: ["order"]},
    annotations: {readOnlyHint: true},
    async execute({order}) {
      await new Promise((r) => setTimeout(r, 20));
      return `order ${order}: shipped`;
    },
  });
  document.modelContext.registerTool({
    name: "broken", description: "Always fails",
    execute() { throw new Error("the warehouse is offline <b>"); },
  });
  document.modelContext.registerTool({
    name: "slow", description: "Never answers", annotations: {readOnlyHint: true},
    execute() { window.slowStarted = true; return new Promise(() => {}); },
  });
});
</script>
"""


def wait_for_tools(embedded: Any, *names: str, timeout: float = 10.0) -> list[dict[str, Any]]:
    """The site tools once the backend lists all of ``names`` (the page sends them when they
    change)."""
    deadline = time.monotonic() + timeout
    while True:
        tools = embedded.site_tools()
        if set(names) <= {t["name"] for t in tools}:
            return tools
        if time.monotonic() > deadline:
            raise AssertionError(f"site tools {names} not listed; got {tools}")
        time.sleep(0.05)


def wait_until_gone(embedded: Any, name: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while name in {t["name"] for t in embedded.site_tools()}:
        assert time.monotonic() < deadline, f"{name} still listed"
        time.sleep(0.05)


def test_script_tools_are_listed_as_the_page_declared_them(mao_embed):  # SPEC B8
    embedded = mao_embed(TOOLS)
    tools = {t["name"]: t for t in wait_for_tools(embedded, "add_to_cart", "order_status")}
    assert tools["add_to_cart"]["description"] == "Add an item to the cart"
    assert tools["add_to_cart"]["inputSchema"]["required"] == ["sku"]
    assert (tools["add_to_cart"]["readOnly"], tools["add_to_cart"]["source"]) == (False, "script")
    assert tools["order_status"]["readOnly"] is True


def test_sync_and_async_tools_answer_json_and_text_inside_the_untrusted_marking(mao_embed):
    embedded = mao_embed(TOOLS)
    wait_for_tools(embedded, "add_to_cart", "order_status")
    added = embedded.call_site_tool("add_to_cart", {"sku": "A1", "quantity": 2})
    assert added["success"], added
    assert added["untrusted"]["fields"] == ["result"]  # SPEC S8: the page wrote it
    assert added["result"]["output"] == {"cart": [{"sku": "A1", "quantity": 2}]}
    assert added["result"]["outputType"] == "json"
    assert embedded.page.text_content("#out") == "added 2 x A1"
    status = embedded.call_site_tool("order_status", {"order": "42"})
    assert status["result"]["output"] == "order 42: shipped"
    assert status["result"]["outputType"] == "text"


def test_arguments_outside_the_schema_are_refused_and_the_page_never_sees_them(mao_embed):
    embedded = mao_embed(TOOLS)
    wait_for_tools(embedded, "add_to_cart")
    for bad in ({"sku": "lowercase"}, {"quantity": 2}, {"sku": "A1", "quantity": 0},
                {"sku": "A1", "coupon": "FREE"}):
        refused = embedded.call_site_tool("add_to_cart", bad)
        assert refused["error"]["code"] == "invalid_request", refused
    assert embedded.page.evaluate("window.calls") == []


def test_a_tool_that_throws_answers_its_message_as_a_structured_error(mao_embed):
    embedded = mao_embed(TOOLS)
    wait_for_tools(embedded, "broken")
    failed = embedded.call_site_tool("broken")
    assert failed["error"]["code"] == "site_tool_failed"
    assert "the warehouse is offline" in failed["error"]["message"]
    assert failed["error"]["details"]["exception"] == "Error"
    assert "error.message" in failed["untrusted"]["fields"]


def test_a_tool_that_outlives_the_call_answers_timeout(mao_embed):  # SPEC W3
    embedded = mao_embed(TOOLS)
    wait_for_tools(embedded, "slow")
    began = time.monotonic()
    late = embedded.call_site_tool("slow", timeout_ms=1500)
    assert late["error"]["code"] == "timeout", late
    assert time.monotonic() - began < 5
    assert embedded.page.evaluate("window.slowStarted") is True


REMOVABLE = {
    # The current draft: the registration's signal removes the tool.
    "document": """
      const control = new AbortController();
      window.removeTool = () => control.abort();
      document.modelContext.registerTool({name: "pending", description: "Waits",
        annotations: {readOnlyHint: true},
        execute() { window.started = true; return new Promise(() => {}); }},
        {signal: control.signal}).catch(() => {});
    """,
    # The earlier shape: unregisterTool.
    "navigator": """
      window.removeTool = () => navigator.modelContext.unregisterTool("pending");
      navigator.modelContext.registerTool({name: "pending", description: "Waits",
        annotations: {readOnlyHint: true},
        execute() { window.started = true; return new Promise(() => {}); }});
    """,
}


@pytest.mark.parametrize("shape", sorted(REMOVABLE))
def test_a_tool_removed_while_it_runs_answers_not_found(mao_embed, shape):
    embedded = mao_embed("<p>shop</p>")
    embedded.page.evaluate(f"() => {{ {REMOVABLE[shape]} }}")
    wait_for_tools(embedded, "pending")
    agent = AgentThread(embedded)
    try:
        pending = agent._pool.submit(embedded.call_site_tool, "pending")
        embedded.page.wait_for_function("window.started === true")
        embedded.page.evaluate("window.removeTool()")
        answered = pending.result(timeout=20)
    finally:
        agent.close()
    assert answered["error"]["code"] == "not_found", answered
    wait_until_gone(embedded, "pending")


def test_a_read_only_tool_runs_without_a_card_under_per_action(mao_embed):  # SPEC P1, B8
    embedded = mao_embed(TOOLS, authorization="per_action")
    wait_for_tools(embedded, "order_status")
    status = embedded.call_site_tool("order_status", {"order": "7"})
    assert status["success"], status
    assert card(embedded.page).count() == 0


def test_a_writing_tool_waits_for_the_users_card_naming_tool_and_arguments(mao_embed):  # P1
    embedded = mao_embed(TOOLS, authorization="per_action")
    wait_for_tools(embedded, "add_to_cart")
    agent = AgentThread(embedded)
    try:
        pending = agent._pool.submit(embedded.call_site_tool, "add_to_cart", {"sku": "B7"})
        shown = card(embedded.page)
        expect(shown).to_contain_text("add_to_cart")
        expect(shown).to_contain_text('"sku": "B7"')
        assert embedded.page.evaluate("window.calls") == []
        # A page script pressing Allow approves nothing (SPEC U2).
        embedded.page.evaluate("""() => {
          const root = document.querySelector('mao-embed-host').shadowRoot;
          for (const b of root.querySelectorAll('button')) {
            if (b.textContent.includes('Allow once')) b.click();
          }
        }""")
        time.sleep(0.5)
        assert embedded.page.evaluate("window.calls") == []
        answer(embedded.page, "Allow once")  # a real click
        done = pending.result(timeout=20)
    finally:
        agent.close()
    assert done["success"], done
    assert embedded.page.evaluate("window.calls") == ["B7"]
    # SPEC P6: audited like a page action: the tool's name, outcome and time, no arguments.
    deadline = time.monotonic() + 10
    audit = embedded.backend.app.state.audit
    while not (records := [r for r in audit.query(
        event=AuditEvent.PAGE_ACTION, session_id=embedded.session_id
    ) if r.tool == "site_tool"]):
        assert time.monotonic() < deadline, "no page_action record of the site tool"
        time.sleep(0.1)
    (record,) = records
    assert (record.code, json.loads(record.detail)["target"]) == ("ok", "add_to_cart")
    assert record.duration_ms is not None
    everything = audit.query(session_id=embedded.session_id)
    assert not any("B7" in (r.detail or "") for r in everything)


def test_a_denied_card_runs_nothing(mao_embed):
    embedded = mao_embed(TOOLS, authorization="per_action")
    wait_for_tools(embedded, "add_to_cart")
    agent = AgentThread(embedded)
    try:
        pending = agent._pool.submit(embedded.call_site_tool, "add_to_cart", {"sku": "C3"})
        answer(embedded.page, "Deny")
        denied = pending.result(timeout=20)
    finally:
        agent.close()
    assert denied["error"]["code"] == "user_rejected"
    assert embedded.page.evaluate("window.calls") == []


def test_the_host_can_leave_site_tools_out_of_the_scope(mao_embed):  # SPEC P2, E2
    embedded = mao_embed(
        TOOLS, init={"authorization": {"actions": ["click", "observe", "wait"]}},
        authorization=None,
    )
    wait_for_tools(embedded, "order_status")
    refused = embedded.call_site_tool("order_status", {"order": "1"})
    assert refused["error"]["code"] == "permission_denied"


FORMS = """
<form id="search" toolname="search_flights" tooldescription="Search flights" toolautosubmit>
  <label>From <input name="from" required></label>
  <input name="to" toolparamdescription="Destination airport code" required>
  <select name="cabin">
    <option value="economy">Economy</option><option value="business">Business</option>
  </select>
  <button>Search</button>
</form>
<form id="contact" toolname="contact_us" tooldescription="Send us a message">
  <label>Message <textarea name="message" required></textarea></label>
  <button>Send</button>
</form>
<script>
document.getElementById("search").addEventListener("submit", (event) => {
  event.preventDefault();
  window.searched = new FormData(event.target).get("to");
  const response = {flights: 3, agent: event.agentInvoked};
  if (event.respondWith) event.respondWith(Promise.resolve(response));
});
document.getElementById("contact").addEventListener("submit", (event) => {
  event.preventDefault();
  window.sent = new FormData(event.target).get("message");
});
</script>
"""


def test_forms_are_tools_with_parameters_from_their_fields(mao_embed):  # SPEC B8
    embedded = mao_embed(FORMS)
    tools = {t["name"]: t for t in wait_for_tools(embedded, "search_flights", "contact_us")}
    search = tools["search_flights"]
    assert search["source"] == "form"
    properties = search["inputSchema"]["properties"]
    assert properties["from"]["description"] == "From"  # the label
    assert properties["to"]["description"] == "Destination airport code"
    assert properties["cabin"]["enum"] == ["economy", "business"]
    assert set(search["inputSchema"]["required"]) == {"from", "to"}
    # A script tool of the same name takes it from the form.
    embedded.page.evaluate("""() => document.modelContext.registerTool({name: "contact_us",
      description: "Write to us from script", execute: () => "sent"})""")
    deadline = time.monotonic() + 10
    while {t["name"]: t for t in embedded.site_tools()}["contact_us"]["source"] != "script":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    # A non-object schema is refused at registration, as the draft's IDL does.
    refused = embedded.page.evaluate("""() => document.modelContext.registerTool({name: "odd",
      description: "d", inputSchema: "string", execute: () => 1})
      .then(() => "ok", (e) => e.name)""")
    assert refused == "TypeError"


def test_an_autosubmit_form_is_filled_submitted_and_answers_with_the_pages_response(mao_embed):
    embedded = mao_embed(FORMS)
    wait_for_tools(embedded, "search_flights")
    done = embedded.call_site_tool("search_flights", {"from": "PEK", "to": "SHA"})
    assert done["success"], done
    output = done["result"]["output"]
    assert (output["submitted"], output["by"]) == (True, "agent")
    assert output["response"] == {"flights": 3, "agent": True}
    assert embedded.page.evaluate("window.searched") == "SHA"
    assert embedded.page.input_value("input[name=from]") == "PEK"


def test_a_form_without_autosubmit_waits_for_the_users_own_submit(mao_embed):
    embedded = mao_embed(FORMS)
    wait_for_tools(embedded, "contact_us")
    agent = AgentThread(embedded)
    try:
        pending = agent._pool.submit(embedded.call_site_tool, "contact_us", {"message": "Hi"})
        expect(embedded.page.locator("textarea[name=message]")).to_have_value("Hi")
        time.sleep(0.3)
        assert not pending.done()  # filled in place, not sent
        assert embedded.page.evaluate("window.sent") is None
        embedded.page.locator("#contact button").click()  # the user's own submit
        done = pending.result(timeout=20)
    finally:
        agent.close()
    assert done["success"], done
    assert (done["result"]["output"]["submitted"], done["result"]["output"]["by"]) == (True, "user")
    assert embedded.page.evaluate("window.sent") == "Hi"
    # The user's click was the step the tool asked for, not a takeover (SPEC U3).
    assert embedded.call("page_observe")["success"]


FRAME_PAGE = """
<form toolname="frame_note" tooldescription="Note in a frame" toolautosubmit
      onsubmit="event.preventDefault(); window.noted = this.note.value">
  <input name="note">
</form>
"""


def test_tools_in_a_same_origin_frame_reach_the_agent(mao_embed, mao_pages):  # SPEC S6, B8
    frame_url = mao_pages.add("/site-tools-frame.html", f"<!doctype html><body>{FRAME_PAGE}</body>")
    embedded = mao_embed(f'<iframe src="{frame_url}" width="400" height="200"></iframe>')
    wait_for_tools(embedded, "frame_note")
    # The frame's script tool, registered on the model context the SDK gave the frame.
    embedded.page.frames[1].evaluate("""() => document.modelContext.registerTool({
      name: "frame_echo2", description: "Echo", annotations: {readOnlyHint: true},
      execute: ({text}) => "frame says " + text})""")
    wait_for_tools(embedded, "frame_echo2")
    echoed = embedded.call_site_tool("frame_echo2", {"text": "hi"})
    assert echoed["result"]["output"] == "frame says hi"
    noted = embedded.call_site_tool("frame_note", {"note": "remember"})
    assert noted["success"], noted
    assert embedded.page.frames[1].evaluate("window.noted") == "remember"


NATIVE_STUB = """
<script>
// A browser's (or an extension's) model context, there before the SDK.
window.nativeTools = new Map();
const nativeContext = {
  registerTool(tool, options) {
    if (window.nativeTools.has(tool.name)) {
      return Promise.reject(new DOMException("dup", "InvalidStateError"));
    }
    window.nativeTools.set(tool.name, tool);
    const forget = () => window.nativeTools.delete(tool.name);
    if (options && options.signal) options.signal.addEventListener("abort", forget);
    return Promise.resolve();
  },
  callForTheBrowser(name, input) { return window.nativeTools.get(name).execute(input); },
};
Object.defineProperty(document, "modelContext", {value: nativeContext, configurable: true});
</script>
"""


def test_a_native_model_context_keeps_working_for_the_pages_own_callers(mao_embed):
    embedded = mao_embed("<p>native</p>", head=NATIVE_STUB)
    answer_ = embedded.page.evaluate("""async () => {
      const control = new AbortController();
      await document.modelContext.registerTool({name: "greet", description: "Greets",
        annotations: {readOnlyHint: true}, execute: ({who}) => "hello " + who},
        {signal: control.signal});
      window.dropGreet = () => control.abort();
      return document.modelContext.callForTheBrowser("greet", {who: "browser"});
    }""")
    assert answer_ == "hello browser"  # the browser's side still has it
    wait_for_tools(embedded, "greet")
    greeted = embedded.call_site_tool("greet", {"who": "agent"})
    assert greeted["result"]["output"] == "hello agent"  # and so do agents
    embedded.page.evaluate("window.dropGreet()")
    wait_until_gone(embedded, "greet")
    assert embedded.page.evaluate("window.nativeTools.size") == 0


def test_toolchange_fires_when_a_tool_comes_and_goes(mao_embed):  # the draft's event
    embedded = mao_embed("<p>events</p>")
    count = embedded.page.evaluate("""async () => {
      let changes = 0;
      document.modelContext.ontoolchange = () => { changes += 1; };
      const control = new AbortController();
      await document.modelContext.registerTool({name: "t1", description: "d",
        execute: () => 1}, {signal: control.signal});
      control.abort();
      await new Promise((r) => setTimeout(r, 50));
      return changes;
    }""")
    assert count == 2


def test_instructions_reach_agents_as_the_sites_words(mao_embed):  # CONTRACT init
    embedded = mao_embed(
        "<p>shop</p>", init={"instructions": "Prefer add_to_cart over clicking. <b>"}
    )
    deadline = time.monotonic() + 10
    while "instructions" not in (session := embedded.agent.session(embedded.session_id)):
        assert time.monotonic() < deadline, session
        time.sleep(0.05)
    assert session["instructions"]["source"] == "site"
    assert session["instructions"]["text"] == "Prefer add_to_cart over clicking. <b>"


def test_a_frame_that_loads_the_sdk_registers_before_its_own_load(  # SPEC B8
    mao_embed, mao_pages, mao_backend
):
    # The frame's scripts run before its parent sees it loaded; with the loader first in the
    # frame, its document.modelContext is the page's registry from the start.
    frame_url = mao_pages.add("/site-tools-early-frame.html", (
        f'<!doctype html><body><script src="{mao_backend.url}/sdk/mao-chat.js"></script>'
        "<script>document.modelContext.registerTool({name: 'early_frame_tool', "
        "description: 'Registered while the frame parsed', annotations: {readOnlyHint: true}, "
        "execute: () => ({from: 'frame'})});</script></body>"
    ))
    embedded = mao_embed(f'<iframe src="{frame_url}"></iframe>')
    wait_for_tools(embedded, "early_frame_tool")
    ran = embedded.call_site_tool("early_frame_tool")
    assert ran["result"]["output"] == {"from": "frame"}


def test_the_earlier_shapes_request_user_interaction_opens_the_panel(mao_embed):
    # Draft versions that gave execute a client: requestUserInteraction shows the user.
    embedded = mao_embed("<p>shop</p>")
    embedded.page.get_by_role("button", name="Close panel").click()
    opener = embedded.page.get_by_role("button", name="Open panel", exact=True)
    expect(opener).to_be_visible()
    embedded.page.evaluate("""() => navigator.modelContext.provideContext({tools: [{
      name: "ask_first", description: "Asks the user first", annotations: {readOnlyHint: true},
      async execute(input, client) {
        return client.requestUserInteraction(async () => "the user saw it");
      }}]})""")
    wait_for_tools(embedded, "ask_first")
    asked = embedded.call_site_tool("ask_first")
    assert asked["result"]["output"] == "the user saw it"
    expect(opener).to_be_hidden()
    # provideContext replaces the tools it gave; clearContext removes them.
    embedded.page.evaluate("() => navigator.modelContext.clearContext()")
    wait_until_gone(embedded, "ask_first")


EARLIER_NATIVE_STUB = """
<script>
// A polyfill or trial build of the earlier shape, there before the SDK.
window.polyfillTools = new Map();
Object.defineProperty(navigator, "modelContext", {configurable: true, value: {
  registerTool(tool) { window.polyfillTools.set(tool.name, tool); },
  unregisterTool(name) { window.polyfillTools.delete(name); },
  provideContext({tools}) { window.polyfillTools = new Map(tools.map((t) => [t.name, t])); },
  clearContext() { window.polyfillTools.clear(); },
}});
</script>
"""


def test_an_earlier_shape_model_context_keeps_working_and_agents_see_its_tools(mao_embed):
    embedded = mao_embed("<p>polyfill</p>", head=EARLIER_NATIVE_STUB)
    embedded.page.evaluate("""() => navigator.modelContext.registerTool({name: "stock",
      description: "Units in stock", annotations: {readOnlyHint: true},
      execute: ({sku}) => ({sku, units: 4})})""")
    assert embedded.page.evaluate("window.polyfillTools.has('stock')")  # the polyfill has it
    wait_for_tools(embedded, "stock")
    assert embedded.call_site_tool("stock", {"sku": "A1"})["result"]["output"] == {
        "sku": "A1", "units": 4,
    }
    embedded.page.evaluate("() => navigator.modelContext.unregisterTool('stock')")
    wait_until_gone(embedded, "stock")
    assert not embedded.page.evaluate("window.polyfillTools.has('stock')")
