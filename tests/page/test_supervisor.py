"""The task state machine of ``mao_page.supervision.supervisor`` (SPEC U2, U3): every move goes
through one checked transition, and card answers are a closed set."""

from __future__ import annotations

import asyncio

import pytest
from mao_page.errors import ToolFailure
from mao_page.protocol import ErrorCode
from mao_page.supervision.supervisor import TRANSITIONS, CardAnswer, InvalidTransition, TaskState

from .test_authorization import ENTRY, REQUEST, answer_first_card, make_supervisor


def test_a_move_the_table_does_not_list_raises_naming_both_states():
    supervisor, _, _ = make_supervisor()
    supervisor.on_ui("pause", {"trusted": True})
    assert supervisor.state is TaskState.PAUSED
    assert TaskState.WAITING not in TRANSITIONS[TaskState.PAUSED]
    with pytest.raises(InvalidTransition, match="from paused to waiting"):
        supervisor._move(TaskState.WAITING)
    assert supervisor.state is TaskState.PAUSED


def test_the_state_is_read_only_from_outside():
    supervisor, _, _ = make_supervisor()
    with pytest.raises(AttributeError):
        supervisor.state = TaskState.RUNNING  # type: ignore[misc]


def test_what_the_user_and_the_agent_can_do_moves_the_state_as_the_panel_shows_it():  # SPEC U3
    supervisor, ui, _ = make_supervisor()
    seen: list[str] = []

    def step(kind: str, **detail: object) -> None:
        supervisor.on_ui(kind, {**detail, "trusted": True})
        seen.append(ui.status)

    step("pause")  # paused with no task
    step("resume")  # back to idle: there is no task to run
    step("stop")
    step("stop")  # pressing Stop twice is harmless
    step("chat", text="go on")  # asking again hands the page back to the assistant
    supervisor.on_takeover()  # the user's own input during the chat turn
    seen.append(ui.status)
    step("stop")
    step("resume")  # Stop ended the chat turn's task: nothing left to run
    assert seen == ["paused", "idle", "stopped", "stopped", "running", "paused", "stopped", "idle"]


def test_a_request_arriving_while_a_card_waits_runs_and_the_card_still_counts():
    async def scenario() -> list[str]:
        supervisor, ui, _ = make_supervisor()
        supervisor.begin_request(REQUEST)
        states: list[str] = []
        confirming = asyncio.ensure_future(supervisor.authorize(REQUEST.actions[0], ENTRY))
        while not ui.cards:
            await asyncio.sleep(0.01)
        states.append(supervisor.state.value)
        supervisor.begin_request(REQUEST.model_copy(update={"request_id": "r2"}))
        states.append(supervisor.state.value)
        await answer_first_card(supervisor, ui, lambda nonce: [
            ("card", {"nonce": nonce, "decision": "once", "trusted": True})])
        await confirming
        states.append(supervisor.state.value)
        return states

    assert asyncio.run(scenario()) == ["waiting", "running", "running"]


def test_a_session_switch_while_a_card_waits_withdraws_it_and_idles():
    async def scenario() -> tuple[ErrorCode, str]:
        supervisor, ui, _ = make_supervisor()
        supervisor.session_changed("s1")
        supervisor.begin_request(REQUEST)
        confirming = asyncio.ensure_future(supervisor.authorize(REQUEST.actions[0], ENTRY))
        while not ui.cards:
            await asyncio.sleep(0.01)
        supervisor.session_changed("s2")
        with pytest.raises(ToolFailure) as caught:
            await confirming
        return caught.value.code, supervisor.state.value

    assert asyncio.run(scenario()) == (ErrorCode.USER_STOPPED, "idle")


def test_card_answers_are_the_panels_decision_strings():  # the wire form the panel sends
    assert {answer.value for answer in CardAnswer} == {
        "once",
        "task",
        "deny",
        "stopped",
        "takeover",
    }


@pytest.mark.parametrize("decision", ["stopped", "takeover", "allow", ""])
def test_the_panel_cannot_send_a_withdrawal_or_an_unknown_answer(decision: str):  # SPEC U2
    async def scenario() -> tuple[ErrorCode, list[str]]:
        supervisor, ui, audit = make_supervisor()
        supervisor.begin_request(REQUEST.model_copy(update={"timeout_ms": 2500}))
        helper = asyncio.ensure_future(answer_first_card(supervisor, ui, lambda nonce: [
            ("card", {"nonce": nonce, "decision": decision, "trusted": True})]))
        with pytest.raises(ToolFailure) as caught:
            await supervisor.authorize(REQUEST.actions[0], ENTRY)
        await helper
        return caught.value.code, [e.decision for e in audit if e.kind == "confirmation"]

    # The card stays up until its time runs out: the answer was not one of the user's buttons.
    assert asyncio.run(scenario()) == (ErrorCode.CONFIRMATION_TIMEOUT, ["timeout"])
