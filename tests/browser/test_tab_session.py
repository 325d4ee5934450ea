"""A tab is one session through full navigations, and a task goes on where its own action led
(SPEC B7, P1, U1, U3, W3; docs/panel.md "Navigations"). Real Chromium, real documents: a form
page posts to a result page the test's server renders."""

from __future__ import annotations

import html
import itertools
import json
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_helpers import ref
from mao_embed.config import ServerConfig
from mao_embed.server import start_in_thread
from mao_embed.testing import AgentClient, embed_snippet, page_html, random_secret
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

_numbers = itertools.count(1)


class Journey:
    """Pages of one origin, each with the SDK as a site embeds it, in one tab."""

    def __init__(self, mao_context, mao_pages, mao_backend, mao_agent) -> None:
        self.context = mao_context
        self.pages = mao_pages
        self.backend = mao_backend
        self.agent = mao_agent
        self.prefix = f"/tab-{next(_numbers)}"
        token = mao_backend.issue_token("tab-user", "tab-agent", origin=mao_pages.origin)
        self.snippet = embed_snippet(
            mao_backend.url, agent_id="tab-agent", user_id="tab-user", token=token
        )

    def add(self, name: str, body: Any, title: str) -> str:
        """A page; ``body`` may be a function of the submitted form (server-rendered)."""
        if callable(body):
            render = body
            return self.pages.add(
                f"{self.prefix}/{name}",
                lambda form: page_html(render(form), self.snippet, title=title),
            )
        return self.pages.add(f"{self.prefix}/{name}", page_html(body, self.snippet, title=title))

    def open(self, url: str, page: Any = None) -> tuple[Any, str]:
        known = {s["sessionId"] for s in self.agent.sessions()}
        page = page or self.context.new_page()
        page.goto(url)
        session = self.agent.wait_for_session(url=url, exclude=known, ready=None, timeout=30)
        return page, session["sessionId"]

    def form_and_result(self) -> tuple[str, str]:
        result = self.add(
            "result.html",
            lambda form: (
                f"<h1>Saved {html.escape(form.get('city', ''))}</h1>"
                '<button type="button" id="again" '
                "onclick=\"this.textContent='Done'\">Again</button>"
            ),
            "Result",
        )
        form = self.add(
            "form.html",
            f'<form method="post" action="{self.prefix}/result.html">'
            '<label>City <input name="city"></label><button id="save">Save</button></form>'
            '<a id="away" href="result.html">Elsewhere</a>',
            "Form",
        )
        return form, result


@pytest.fixture
def journey(mao_context, mao_pages, mao_backend, mao_agent) -> Journey:
    return Journey(mao_context, mao_pages, mao_backend, mao_agent)


def grant(page: Any, name: str) -> None:
    """The user picks a level in the panel with a real click."""
    opener = page.get_by_role("button", name="Open panel", exact=True)
    if opener.is_visible():
        opener.click()
    radio = page.get_by_role("radio", name=name, exact=True)
    radio.click()
    expect(radio).to_have_attribute("aria-checked", "true")


def submit_form(agent, session_id: str, city: str) -> dict[str, Any]:
    """The agent fills the form and clicks Save: the click posts the form and the next
    document loads. Returns the click's answer."""
    snapshot = agent.call(session_id, "page_inspect")
    assert snapshot["success"], snapshot
    fill = agent.call(session_id, "page_fill", {**ref(snapshot["result"], "City"), "value": city})
    assert fill["success"], fill
    return agent.call(session_id, "page_click", ref(snapshot["result"], "Save"))


def conversation(page: Any) -> str:
    return page.locator("mao-embed-host [role=log][aria-label=Conversation]").text_content() or ""


def test_the_tab_keeps_its_session_on_the_next_page_and_old_refs_are_stale(journey, mao_agent):
    # SPEC B7: the same sessionId after a full navigation; the next call runs on the new page;
    # GET /api/sessions shows its url and title; a ref from the form page is stale (navigated).
    form, result = journey.form_and_result()
    page, session_id = journey.open(form)
    grant(page, "Full access")
    snapshot = mao_agent.call(session_id, "page_inspect")["result"]
    clicked = submit_form(mao_agent, session_id, "Paris")
    # The click either answered before the page unloaded, or answers navigated (a write that
    # may have applied: never replayed).
    if not clicked["success"]:
        assert clicked["error"]["code"] == "navigated", clicked
        assert clicked["error"]["details"]["mayHaveApplied"] is True
    page.wait_for_url(result)
    after = mao_agent.call(session_id, "page_inspect")
    assert after["success"], after
    assert "Again" in [e["label"] for e in after["result"]["elements"]]
    assert page.locator("h1").inner_text() == "Saved Paris"
    listed = [s for s in mao_agent.sessions() if s["sessionId"] == session_id]
    assert [(s["url"], s["title"]) for s in listed] == [(result, "Result")]
    stale = mao_agent.call(session_id, "page_click", ref(snapshot, "Save"))
    assert stale["error"]["code"] == "stale_ref", stale
    assert stale["error"]["details"]["reason"] == "navigated"


def test_a_call_in_flight_answers_navigated_and_one_made_meanwhile_runs_on_the_next_page(
    journey, mao_agent
):
    # SPEC W3, B7: the call running when the page unloads answers navigated; a call made while
    # the next page starts waits for it and runs there.
    form, result = journey.form_and_result()
    page, session_id = journey.open(form)
    assert mao_agent.call(session_id, "page_observe")["success"]
    answers: dict[str, Any] = {}
    waiting = threading.Thread(
        target=lambda: answers.update(
            wait=mao_agent.call(session_id, "page_wait", {"timeMs": 8000})
        )
    )
    waiting.start()
    time.sleep(0.5)
    page.evaluate(f"location.href = {result!r}")
    waiting.join(30)
    assert answers["wait"]["error"]["code"] == "navigated", answers
    assert answers["wait"]["error"]["details"]["mayHaveApplied"] is False
    meanwhile = mao_agent.call(session_id, "page_observe")
    assert meanwhile["success"], meanwhile
    listed = [s for s in mao_agent.sessions() if s["sessionId"] == session_id]
    assert listed and listed[0]["url"] == result


def test_a_second_tab_and_a_duplicated_tab_are_sessions_of_their_own(journey, mao_agent):
    # SPEC B7: sessionStorage is per tab; a duplicate copies it while the original page holds
    # the session, and must not take it over.
    form, result = journey.form_and_result()
    first, first_id = journey.open(form)
    second, second_id = journey.open(form)
    assert second_id != first_id
    copied = first.evaluate(
        "() => Object.fromEntries(Object.keys(sessionStorage).map((k) => [k, sessionStorage[k]]))"
    )
    assert any(first_id in value for value in copied.values())
    duplicate = journey.context.new_page()
    duplicate.add_init_script(
        f"for (const [k, v] of Object.entries({json.dumps(copied)})) "
        "if (!sessionStorage.getItem(k)) sessionStorage.setItem(k, v);"
    )
    _, duplicate_id = journey.open(form, duplicate)
    assert duplicate_id not in (first_id, second_id)
    # The original keeps its session and still answers on it.
    assert mao_agent.call(first_id, "page_observe")["success"]
    assert {first_id, second_id, duplicate_id} <= {s["sessionId"] for s in mao_agent.sessions()}


def test_a_task_continues_on_the_page_its_own_submit_opened(journey, mao_agent, mao_backend):
    # SPEC B7, P1: the task's own action led here within seconds: the task, its `task` level
    # and its log go on; the panel says so; the next page acts without a card.
    form, result = journey.form_and_result()
    page, session_id = journey.open(form)
    grant(page, "This task")
    submit_form(mao_agent, session_id, "Oslo")
    page.wait_for_url(result)
    # The runtime boots for the continued task (its log shows at once); the user opens the
    # panel to look.
    page.wait_for_function("() => performance.getEntriesByName('mao:session-ready').length === 1")
    page.get_by_role("button", name="Open panel", exact=True).click()
    expect(page.get_by_role("radio", name="This task", exact=True)).to_have_attribute(
        "aria-checked", "true", timeout=30_000
    )
    assert "The task continues on this page" in conversation(page)
    log = page.locator("mao-embed-host [aria-label='Action log']").text_content() or ""
    assert "page_fill" in log and "page_click" in log
    snapshot = mao_agent.call(session_id, "page_inspect")["result"]
    again = mao_agent.call(session_id, "page_click", ref(snapshot, "Again"))
    assert again["success"], again  # no card: under `per_action` this would wait for the user
    assert page.locator("#again").inner_text() == "Done"
    ready = page.evaluate("() => MaoChat.ready")
    assert ready["trigger"] == "navigation"


def test_a_reload_by_the_user_ends_the_task(journey, mao_agent):
    # Seed 004 §4.3, SPEC P1: a refresh ends the task and its `task` level; the panel says so.
    form, result = journey.form_and_result()
    page, session_id = journey.open(form)
    grant(page, "This task")
    snapshot = mao_agent.call(session_id, "page_inspect")["result"]
    filled = mao_agent.call(session_id, "page_fill", {**ref(snapshot, "City"), "value": "Rome"})
    assert filled["success"], filled
    page.reload()
    assert mao_agent.wait_for_session(url=form, ready=None)["sessionId"] == session_id
    assert "The page was reloaded" in conversation(page)
    page.get_by_role("button", name="Open panel", exact=True).click()
    expect(page.get_by_role("radio", name="Ask each time", exact=True)).to_have_attribute(
        "aria-checked", "true"
    )


def test_a_link_the_user_clicks_ends_the_task(journey, mao_agent):
    # The user's own navigation (a trusted click on a link) ends the task, even right after
    # the task's last action.
    form, result = journey.form_and_result()
    page, session_id = journey.open(form)
    grant(page, "This task")
    snapshot = mao_agent.call(session_id, "page_inspect")["result"]
    assert mao_agent.call(session_id, "page_fill", {**ref(snapshot, "City"), "value": "Kyiv"})[
        "success"
    ]
    page.click("#away")
    page.wait_for_url(result)
    page.wait_for_function("() => document.querySelector('mao-embed-host')")
    assert "You left the page" in conversation(page)
    page.get_by_role("button", name="Open panel", exact=True).click()
    expect(page.get_by_role("radio", name="Ask each time", exact=True)).to_have_attribute(
        "aria-checked", "true"
    )


def test_going_back_ends_the_task_that_went_on(journey, mao_agent):
    # The user's back button (a new load, or the page restored from the back/forward cache)
    # ends the task its own submit had carried to the result page.
    form, result = journey.form_and_result()
    page, session_id = journey.open(form)
    grant(page, "This task")
    submit_form(mao_agent, session_id, "Bern")
    page.wait_for_url(result)
    page.wait_for_function("() => performance.getEntriesByName('mao:session-ready').length === 1")
    page.go_back()
    page.wait_for_url(form)
    opener = page.get_by_role("button", name="Open panel", exact=True)
    if opener.is_visible():
        opener.click()
    expect(page.locator("mao-embed-host [role=log][aria-label=Conversation]")).to_contain_text(
        "You went back or forward, so the assistant's task ended."
    )
    expect(page.get_by_role("radio", name="Ask each time", exact=True)).to_have_attribute(
        "aria-checked", "true"
    )
    assert mao_agent.call(session_id, "page_observe")["success"]


def test_a_three_page_journey_by_an_agent_over_http_keeps_one_session_under_task_level(
    journey, mao_agent
):
    # Held-out style check (SPEC B7): list -> edit form -> confirmation, one session id, the
    # `task` level granted once on the first page, no stale_ref but the ones navigation
    # explains (none here: the agent inspects each new page).
    confirmation = journey.add(
        "done.html",
        lambda form: f"<h1>Saved {html.escape(form.get('name', ''))}</h1><p>All done.</p>",
        "Confirmation",
    )
    edit = journey.add(
        "edit.html",
        f'<form method="post" action="{journey.prefix}/done.html">'
        '<label>Name <input name="name" value="Ada"></label><button>Save changes</button></form>',
        "Edit",
    )
    listing = journey.add(
        "list.html", '<ul><li>Ada <a href="edit.html">Edit Ada</a></li></ul>', "List"
    )
    page, session_id = journey.open(listing)
    grant(page, "This task")
    codes: list[str] = []

    def call(tool: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        answer = mao_agent.call(session_id, tool, args or {})
        if not answer["success"]:
            codes.append(answer["error"]["code"])
        return answer

    snapshot = call("page_inspect")["result"]
    call("page_click", ref(snapshot, "Edit Ada"))
    page.wait_for_url(edit)
    snapshot = call("page_inspect")["result"]
    assert call("page_fill", {**ref(snapshot, "Name"), "value": "Ada Lovelace"})["success"]
    call("page_click", ref(snapshot, "Save changes"))
    page.wait_for_url(confirmation)
    final = call("page_inspect")
    assert final["success"], final
    assert page.locator("h1").inner_text() == "Saved Ada Lovelace"
    assert set(codes) <= {"navigated"}, codes  # a click that loaded the next page, at most
    listed = [s for s in mao_agent.sessions() if s["sessionId"] == session_id]
    assert [(s["url"], s["title"]) for s in listed] == [(confirmation, "Confirmation")]
    page.get_by_role("button", name="Open panel", exact=True).click()
    expect(page.get_by_role("radio", name="This task", exact=True)).to_have_attribute(
        "aria-checked", "true"
    )


# The real servers of the backend tests: redis-server, the scripted chat model.
sys.path.insert(0, str(Path(__file__).parents[1] / "backend"))


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory) -> Iterator[str]:
    from cluster_servers import RedisServer

    server = RedisServer(tmp_path_factory.mktemp("redis")).start()
    yield server.url
    server.stop()


@pytest.fixture
def two_instances(redis_url, mao_pages, mao_sdk_assets, tmp_path) -> Iterator[list[Any]]:
    """Two instances of one cluster (real Redis), as a load balancer would spread a tab's
    pages: each page names the instance it reaches in its serverUrl."""
    secret = random_secret()
    started = [
        start_in_thread(ServerConfig(
            host="127.0.0.1", port=0, secret=secret, allowed_origins=(mao_pages.origin,),
            db_path=tmp_path / f"audit-{name}.db", redis_url=redis_url, instance_name=name,
        ))
        for name in ("tab-a", "tab-b")
    ]
    yield started
    for running in started:
        running.stop()


def test_in_a_cluster_the_next_page_lands_on_another_instance_and_the_session_follows(
    two_instances, mao_context, mao_pages
):
    # SPEC B6, B7: the form page's socket is on instance A, the result page's on B; the agent
    # keeps calling A with the same sessionId; the task and its `task` level go on.
    first, second = two_instances
    agent = AgentClient(first.url)
    token = first.issue_token("tab-user", "tab-agent", origin=mao_pages.origin)
    prefix = f"/tab-cluster-{next(_numbers)}"

    def snippet(instance) -> str:
        return embed_snippet(instance.url, agent_id="tab-agent", user_id="tab-user", token=token)

    result = mao_pages.add(
        f"{prefix}/result.html",
        lambda form: page_html(
            f"<h1>Saved {html.escape(form.get('city', ''))}</h1>"
            '<button type="button" id="again" onclick="this.textContent=1">Again</button>',
            snippet(second), title="Result",
        ),
    )
    form = mao_pages.add(
        f"{prefix}/form.html",
        page_html(
            f'<form method="post" action="{prefix}/result.html">'
            '<label>City <input name="city"></label><button id="save">Save</button></form>',
            snippet(first), title="Form",
        ),
    )
    try:
        page = mao_context.new_page()
        page.goto(form)
        session_id = agent.wait_for_session(url=form, ready=None, timeout=30)["sessionId"]
        grant(page, "This task")
        snapshot = agent.call(session_id, "page_inspect")["result"]
        submit_form(agent, session_id, "Lima")
        page.wait_for_url(result)
        after = agent.call(session_id, "page_inspect")
        assert after["success"], after
        listed = [s for s in agent.sessions() if s["sessionId"] == session_id]
        assert [(s["url"], s["instance"]) for s in listed] == [(result, "tab-b")]
        stale = agent.call(session_id, "page_click", ref(snapshot, "Save"))
        assert stale["error"]["code"] == "stale_ref"
        assert stale["error"]["details"]["reason"] == "navigated"
        again = agent.call(session_id, "page_click", ref(after["result"], "Again"))
        assert again["success"], again  # the task's `task` level went on: no card
        assert page.locator("#again").inner_text() == "1"
    finally:
        agent.close()


def test_a_chat_turn_goes_on_across_the_navigation_its_own_tool_call_caused(
    mao_context, mao_pages, mao_sdk_assets, tmp_path
):
    # SPEC B7, U1: the panel's chat loop fills and submits the form; its turn, its tool steps
    # and its answer reach the next page, and the task ends there when the turn is done.
    from chat_standin import ChatCompletionsStandIn, call, last_tool_result, say
    from mao_embed.config import LlmConfig

    def element(label: str):
        def arguments(body):
            snapshot = last_tool_result(body)["result"]
            return {**ref(snapshot, label), **({"value": "Quito"} if label == "City" else {})}

        return arguments

    model = ChatCompletionsStandIn([
        call("page_inspect", {}),
        call("page_fill", element("City")),
        lambda body: call("page_click", {
            **ref(_first_snapshot(body), "Save")
        })(body),
        call("page_inspect", {}),
        say("Saved Quito for you."),
    ]).start()
    backend = start_in_thread(ServerConfig(
        host="127.0.0.1", port=0, secret=random_secret(), allowed_origins=(mao_pages.origin,),
        db_path=tmp_path / "audit.db",
        llm=LlmConfig(base_url=model.base_url, model="stand-in-1", api_key="sk-test"),
    ))
    try:
        journey = Journey(mao_context, mao_pages, backend, AgentClient(backend.url))
        form, result = journey.form_and_result()
        page, session_id = journey.open(form)
        grant(page, "This task")
        page.get_by_role("textbox", name="Message", exact=True).fill("Save Quito as the city")
        page.get_by_role("button", name="Send", exact=True).click()
        page.wait_for_url(result, timeout=30_000)
        page.wait_for_function(
            "() => performance.getEntriesByName('mao:session-ready').length === 1"
        )
        page.get_by_role("button", name="Open panel", exact=True).click()
        expect(page.locator("mao-embed-host [role=log][aria-label=Conversation]")).to_contain_text(
            "Saved Quito for you.", timeout=30_000
        )
        assert "The task continues on this page" in conversation(page)
        assert page.locator("h1").inner_text() == "Saved Quito"
        # The turn is done: the task, and its `task` level, end on this page.
        expect(page.get_by_role("radio", name="Ask each time", exact=True)).to_have_attribute(
            "aria-checked", "true", timeout=10_000
        )
        inspected = [r for r in model.requests if r["messages"][-1]["role"] == "tool"]
        assert len(inspected) == 4
    finally:
        journey.agent.close()
        backend.stop()
        model.stop()


def _first_snapshot(body: dict[str, Any]) -> dict[str, Any]:
    """The first page_inspect result in the model's conversation (the form page's)."""
    for message in body["messages"]:
        if message["role"] == "tool":
            return json.loads(message["content"].splitlines()[2])["result"]
    raise AssertionError("no tool result yet")
