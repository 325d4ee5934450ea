"""The supervisor's side of the panel's conversation (SPEC U5, U2, U3), on CPython with a
recording panel: questions to the user, the streamed answer, the stored conversation, Stop.
The same in real Chromium: tests/browser/test_panel.py and test_conversation.py."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from mao_page.errors import ToolFailure
from mao_page.protocol import (
    AskOptions,
    ChatEvent,
    ChatEventKind,
    ChatHistory,
    ChatHistoryEntry,
    ErrorCode,
    PageToolRequest,
    ToolName,
)
from mao_page.supervision.authorization import AuthorizationCenter, GrantStore, HostPolicy
from mao_page.supervision.risk import Target
from mao_page.supervision.supervisor import CARD_ARM_S, Supervisor, TaskState

from .test_authorization import KEY, PAGE, DictStorage


class Panel:
    """Records what the supervisor shows, as the panel (``supervisor.PanelUi``)."""

    locale = "en"

    def __init__(self) -> None:
        self.questions: list[dict[str, Any]] = []
        self.closed_questions: list[str] = []
        self.chat_lines: list[tuple[str, str]] = []
        self.entries: dict[str, tuple[str, str]] = {}
        self.restored: list[dict[str, str]] = []
        self.cleared = 0

    def set_status(self, state: str, text: str) -> None: ...
    def set_level(self, level: str, actions: list[str]) -> None: ...
    def show_card(self, card: dict[str, Any]) -> None: ...
    def close_card(self, nonce: str) -> None: ...
    def log(self, entry: dict[str, Any]) -> None: ...
    def show_error(self, text: str) -> None: ...
    def highlight(self, handle: Any, label: str, sticky: bool) -> None: ...
    def clear_highlight(self) -> None: ...

    def chat(self, role: str, text: str) -> None:
        self.chat_lines.append((role, text))

    def chat_entry(self, entry_id: str, role: str, text: str) -> None:
        self.entries[entry_id] = (role, text)

    def restore_chat(self, entries: list[dict[str, str]]) -> None:
        self.restored.extend(entries)

    def clear_chat(self) -> None:
        self.cleared += 1

    def show_question(self, question: dict[str, Any]) -> None:
        self.questions.append(question)

    def close_question(self, nonce: str) -> None:
        self.closed_questions.append(nonce)


def make(controls: list[str] | None = None) -> tuple[Supervisor, Panel]:
    panel = Panel()
    sent = controls if controls is not None else []
    center = AuthorizationCenter(GrantStore(DictStorage(), KEY), HostPolicy())
    supervisor = Supervisor(
        center=center,
        ui=panel,
        page_origin=PAGE,
        describe_target=lambda e: Target(role=e.role, label=e.label),
        audit=lambda event: None,
        arm_takeover=lambda armed: None,
        send_chat=lambda text, message_id: True,
        cancel_running=lambda reason: None,
        send_chat_control=lambda action: sent.append(action) is None,
    )
    return supervisor, panel


def ask(question: str = "Which one?", choices: list[str] | None = None,
        timeout_ms: int = 30_000) -> PageToolRequest:
    return PageToolRequest(
        request_id="q1", session_id="s1", tool=ToolName.ASK_USER,
        ask=AskOptions(question=question, choices=choices), timeout_ms=timeout_ms,
    )


async def asking(supervisor: Supervisor, request: PageToolRequest) -> asyncio.Task[Any]:
    assert supervisor.begin_request(request) is None
    task = asyncio.get_running_loop().create_task(supervisor.ask_user(request))
    await asyncio.sleep(0)
    return task


async def test_only_the_users_trusted_answer_with_the_questions_nonce_counts() -> None:  # U2, U5
    supervisor, panel = make()
    task = await asking(supervisor, ask(choices=["Red", "Blue"]))
    nonce = panel.questions[0]["nonce"]
    assert supervisor.state is TaskState.WAITING

    supervisor.on_ui("answer", {"trusted": True, "nonce": nonce, "choice": 1})  # not yet armed
    await asyncio.sleep(CARD_ARM_S + 0.05)
    supervisor.on_ui("answer", {"trusted": False, "nonce": nonce, "choice": 0})  # a script
    supervisor.on_ui("answer", {"trusted": True, "nonce": "stale", "choice": 0})
    supervisor.on_ui("answer", {"trusted": True, "nonce": nonce, "choice": 7})  # no such choice
    supervisor.on_ui("chat", {"trusted": True, "text": "Red", "typed": False})  # not typed
    await asyncio.sleep(0)
    assert not task.done()

    supervisor.on_ui("answer", {"trusted": True, "nonce": nonce, "choice": 1})
    result = await task
    assert result.result == {"answer": "Blue", "choiceIndex": 1}
    assert panel.closed_questions == [nonce]
    assert ("user", "Blue") in panel.chat_lines


async def test_typed_text_in_the_chat_box_answers_a_waiting_question() -> None:  # SPEC U5
    supervisor, panel = make()
    task = await asking(supervisor, ask())
    await asyncio.sleep(CARD_ARM_S + 0.05)
    supervisor.on_ui("chat", {"trusted": True, "text": "  the second one ", "typed": True})
    assert (await task).result == {"answer": "the second one"}


async def test_an_unanswered_question_ends_as_timeout_and_stop_withdraws_one() -> None:
    supervisor, panel = make()
    task = await asking(supervisor, ask(timeout_ms=2100))  # ~1.1 s to answer
    with pytest.raises(ToolFailure) as failed:
        await task
    assert failed.value.code is ErrorCode.TIMEOUT
    assert panel.chat_lines[-1][0] == "system"

    request = ask()
    task = await asking(supervisor, request)
    supervisor.on_ui("stop", {"trusted": True})
    with pytest.raises(ToolFailure) as stopped:
        await task
    assert stopped.value.code is ErrorCode.USER_STOPPED


async def test_the_answer_streams_into_one_entry_per_model_step() -> None:  # SPEC U5
    supervisor, panel = make()
    for piece in ("The order ", "was ", "placed."):
        supervisor.on_chat_event(
            ChatEvent(kind=ChatEventKind.ASSISTANT_DELTA, message_id="m1", step=0, text=piece)
        )
    assert panel.entries == {"m1:0": ("assistant", "The order was placed.")}
    supervisor.on_chat_event(
        ChatEvent(kind=ChatEventKind.ASSISTANT_TEXT, message_id="m1", step=0, text="Placed.")
    )
    supervisor.on_chat_event(
        ChatEvent(kind=ChatEventKind.ASSISTANT_DELTA, message_id="m1", step=1, text="Next")
    )
    assert panel.entries == {"m1:0": ("assistant", "Placed."), "m1:1": ("assistant", "Next")}


async def test_the_stored_conversation_is_shown_once_and_new_clears_it() -> None:  # SPEC U5
    controls: list[str] = []
    supervisor, panel = make(controls)
    supervisor.load_history()
    assert controls == ["history"]
    stored = ChatHistory(action="history", entries=[
        ChatHistoryEntry(role="user", text="Fill it"),
        ChatHistoryEntry(role="tool", tool="page_fill", success=False, code="stale_ref"),
        ChatHistoryEntry(role="assistant", text="Done."),
        ChatHistoryEntry(role="system", code="stopped"),
    ])
    supervisor.on_chat_history(stored)
    supervisor.on_chat_history(stored)  # a second answer (a reconnect asked again)
    assert panel.restored == [
        {"role": "user", "text": "Fill it"},
        {"role": "tool", "text": "page_fill: stale_ref"},
        {"role": "assistant", "text": "Done."},
        {"role": "system", "text": "Stopped by you."},
        {"role": "system", "text": "Earlier in this conversation."},
    ]
    supervisor.load_history()
    assert controls == ["history"]  # shown: not asked again

    supervisor.on_ui("conversation", {"trusted": False, "action": "delete"})
    supervisor.on_ui("conversation", {"trusted": True, "action": "new"})
    assert controls == ["history", "new"]
    supervisor.on_chat_history(ChatHistory(action="new"))
    assert panel.cleared == 1 and panel.chat_lines[-1] == ("system", "New conversation.")


async def test_stop_during_a_chat_turn_stops_the_backends_answer_too() -> None:  # SPEC U3
    controls: list[str] = []
    supervisor, panel = make(controls)
    supervisor.on_ui("chat", {"trusted": True, "text": "Do it"})
    supervisor.on_ui("stop", {"trusted": True})
    assert controls == ["stop"]
    assert supervisor.state is TaskState.STOPPED
