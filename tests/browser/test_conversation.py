"""The panel's conversation in real Chromium (SPEC U5, U1, U3): shown again after a reload
(without booting the runtime before the panel is used), the answer streaming in, Stop mid-
stream, New and Delete. The backend here has a model: the chat-completions stand-in of the
backend tests, speaking the streamed wire format (server-sent chunks)."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_helpers import COUNTER_BUTTON
from mao_embed.config import LlmConfig, ServerConfig
from mao_embed.server import RunningServer, start_in_thread
from mao_embed.testing import AgentClient, PageServer, random_secret
from panel_helpers import panel
from playwright.sync_api import expect

# The stand-in model lives with the backend tests; it is a test helper, not part of the plugin.
sys.path.insert(0, str(Path(__file__).parent.parent / "backend"))
from chat_standin import ChatCompletionsStandIn, call, say  # noqa: E402


@pytest.fixture(scope="module")
def model() -> Iterator[ChatCompletionsStandIn]:
    stand_in = ChatCompletionsStandIn([]).start()
    yield stand_in
    stand_in.stop()


@pytest.fixture(scope="module")
def mao_backend(
    mao_sdk_assets: Path,
    mao_pages: PageServer,
    tmp_path_factory: pytest.TempPathFactory,
    model: ChatCompletionsStandIn,
) -> Iterator[RunningServer]:
    """The plugin's backend, with a model behind the panel's chat."""
    config = ServerConfig(
        host="127.0.0.1", port=0, secret=random_secret(), allowed_origins=(mao_pages.origin,),
        db_path=tmp_path_factory.mktemp("mao-embed") / "audit.db",
        llm=LlmConfig(base_url=model.base_url, model="stand-in-1"),
    )
    server = start_in_thread(config)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def mao_agent(mao_backend: RunningServer) -> Iterator[AgentClient]:
    client = AgentClient(mao_backend.url)
    yield client
    client.close()


_users = iter(range(1, 1000))


def owner() -> str:
    """A user of their own per test: conversations are per user + origin + agent."""
    return f"reader-{next(_users)}"


def send(page: Any, text: str) -> None:
    box = page.get_by_role("textbox", name="Message")
    box.press_sequentially(text)
    box.press("Enter")


def conversation(page: Any) -> Any:
    return page.get_by_role("log", name="Conversation")


def test_the_conversation_is_shown_again_after_a_reload_with_its_task_log(
    mao_embed: Any, model: ChatCompletionsStandIn
) -> None:  # SPEC U5
    model.script[:] = [call("page_observe", {}), say("Nothing has changed on the page.")]
    user = owner()
    embedded = mao_embed(COUNTER_BUTTON, user_id=user, path=f"/{user}.html")
    page = embedded.page
    send(page, "Has anything changed?")
    expect(conversation(page)).to_contain_text("Nothing has changed on the page.")
    expect(page.get_by_role("status", name="Status")).to_have_text("Idle")

    page.reload()
    # Loading the page does not boot the runtime for the history: it waits for the panel.
    page.wait_for_timeout(1000)
    assert page.evaluate("() => performance.getEntriesByName('mao:boot-start').length") == 0
    expect(conversation(page)).not_to_contain_text("Has anything changed?")
    page.get_by_role("textbox", name="Message").click()  # using the panel boots it
    expect(page.get_by_role("status", name="Status")).to_have_text("Idle", timeout=30_000)
    expect(conversation(page)).to_contain_text("Has anything changed?")
    expect(conversation(page)).to_contain_text("page_observe: done")
    expect(conversation(page)).to_contain_text("Nothing has changed on the page.")
    expect(conversation(page)).to_contain_text("Earlier in this conversation.")


def test_the_answer_streams_in_and_stop_ends_the_stream_and_the_task(
    mao_embed: Any, model: ChatCompletionsStandIn
) -> None:  # SPEC U5, U3
    hold = threading.Event()
    model.script[:] = [say("Working through the list now", hold=hold)]
    user = owner()
    embedded = mao_embed(COUNTER_BUTTON, user_id=user)
    page = embedded.page
    try:
        send(page, "Go through the list")
        # The first piece is in the panel while the model is still writing.
        answer = conversation(page).locator("[data-role=assistant]")
        expect(answer).to_have_text("Working ")
        expect(page.get_by_role("status", name="Status")).to_have_text("Running")
        panel(page).get_by_role("button", name="Stop", exact=True).click()
        expect(page.get_by_role("status", name="Status")).to_have_text("Stopped")
        page.wait_for_function("() => true")
        deadline = page.evaluate("() => performance.now()") + 5000
        while model.streams_cut == 0:
            assert page.evaluate("() => performance.now()") < deadline, "the stream went on"
            page.wait_for_timeout(50)
    finally:
        hold.set()
    page.wait_for_timeout(300)
    expect(answer).to_have_text("Working ")


def test_new_conversation_and_delete_leave_nothing_to_show_after_a_reload(
    mao_embed: Any, model: ChatCompletionsStandIn
) -> None:  # SPEC U5
    model.script[:] = [say("First answer."), say("Second answer.")]
    user = owner()
    embedded = mao_embed(COUNTER_BUTTON, user_id=user, path=f"/{user}.html")
    page = embedded.page
    send(page, "First question")
    expect(conversation(page)).to_contain_text("First answer.")

    panel(page).get_by_role("button", name="New conversation").click()
    expect(conversation(page)).to_have_text("New conversation.")
    send(page, "Second question")
    expect(conversation(page)).to_contain_text("Second answer.")
    # The model was sent the new conversation only.
    assert [m["content"] for m in model.requests[-1]["messages"][1:]] == ["Second question"]

    page.reload()
    page.evaluate("() => MaoChat.boot()")
    expect(page.get_by_role("status", name="Status")).to_have_text("Idle", timeout=30_000)
    expect(conversation(page)).to_contain_text("Second question")
    expect(conversation(page)).not_to_contain_text("First question")

    delete = panel(page).get_by_role("button", name="Delete conversation")
    delete.click()  # asks for a second click
    panel(page).get_by_role("button", name="Click again to delete the conversation").click()
    expect(conversation(page)).to_have_text("Your conversation was deleted.")
    page.reload()
    page.evaluate("() => MaoChat.boot()")
    expect(page.get_by_role("status", name="Status")).to_have_text("Idle", timeout=30_000)
    page.wait_for_timeout(500)
    expect(conversation(page)).not_to_contain_text("Second question")
