"""The demo's scripted agent after a dropped page connection (SPEC W3): it repeats only steps
that are safe to repeat, and only once the page has resumed its session."""

from __future__ import annotations

import time
from typing import Any

import pytest
from mao_embed.demo import ActionLog, DemoFailure, ScriptedAgent

SESSION = "ses-demo"
DROPPED = {
    "success": False,
    "requestId": "r1",
    "error": {"code": "disconnected", "message": "the page disconnected before answering",
              "details": {"mayHaveApplied": True}},
}
APPLIED = {
    "success": True,
    "requestId": "r2",
    "result": {
        "steps": [
            {
                "action": "fill",
                "success": True,
                "targetLabel": "Claim title",
                "outcome": {"value": "x"},
                "durationMs": 3,
            }
        ]
    },
}


class ScriptedRelay:
    """Answers tool calls from a script; the session is listed again after ``resumes_after``
    polls of ``sessions()``."""

    def __init__(self, answers: list[dict[str, Any]], resumes_after: int = 2) -> None:
        self.answers = list(answers)
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.polls = 0
        self.resumes_after = resumes_after

    def call(
        self, session_id: str, tool: str, args: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        assert session_id == SESSION
        self.calls.append((tool, args or {}))
        return self.answers.pop(0)

    def sessions(self) -> list[dict[str, Any]]:
        self.polls += 1
        return [{"sessionId": SESSION}] if self.polls > self.resumes_after else []


def agent(relay: ScriptedRelay, drops: list[int]) -> ScriptedAgent:
    return ScriptedAgent(relay, SESSION, ActionLog(started=time.monotonic()),  # type: ignore[arg-type]
                         on_drop=lambda: drops.append(1))


def test_a_repeatable_step_is_sent_again_after_the_page_resumes() -> None:  # SPEC W3, W4
    relay, drops = ScriptedRelay([DROPPED, APPLIED]), []
    result = agent(relay, drops).call("page_fill", {"value": "x"}, idempotent=True)
    assert result["success"] is True
    assert [tool for tool, _ in relay.calls] == ["page_fill", "page_fill"]
    assert relay.polls == 3  # it waited until the session was listed again
    assert drops == [1]


def test_a_step_that_is_not_safe_to_repeat_is_never_replayed() -> None:  # SPEC W3
    relay, drops = ScriptedRelay([DROPPED, APPLIED]), []
    with pytest.raises(DemoFailure, match="disconnected"):
        agent(relay, drops).call("page_click", {"elementId": "e1"})
    assert [tool for tool, _ in relay.calls] == ["page_click"]
    assert drops == []


def test_a_second_drop_fails_the_demo_rather_than_retrying_forever() -> None:  # SPEC W3
    relay, drops = ScriptedRelay([DROPPED, DROPPED, APPLIED], resumes_after=0), []
    with pytest.raises(DemoFailure, match="disconnected"):
        agent(relay, drops).call("page_fill", {"value": "x"}, idempotent=True)
    assert len(relay.calls) == 2
