"""Request dispatch in the page (SPEC W1-W3): once-only, exactly one result per request."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from mao_page.protocol import Cancel, PageToolRequest, PageToolResult, parse_server_message
from mao_page.session.dispatcher import Dispatcher
from pydantic import ValidationError

SESSION = "sess-1"


class FakeExecutor:
    """Runs requests until released; records what it was asked to do."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.release = asyncio.Event()
        self.fail_with: Exception | None = None

    async def __call__(self, request: PageToolRequest) -> PageToolResult:
        self.calls.append(request.request_id)
        await self.release.wait()
        if self.fail_with is not None:
            raise self.fail_with
        return PageToolResult(request_id=request.request_id, success=True, page_version="v2",
                              result={"run": len(self.calls)})


class Harness:
    def __init__(self) -> None:
        self.execute = FakeExecutor()
        self.sent: list[dict[str, Any]] = []
        self.dispatcher = Dispatcher(
            self.execute, lambda text: self.sent.append(json.loads(text)), lambda: "v1"
        )
        self.dispatcher.bind_session(SESSION)

    def receive(self, frame: dict[str, Any]) -> None:
        """What the client does with one inbound frame."""
        raw = json.dumps(frame)
        try:
            message = parse_server_message(raw)
        except ValidationError as error:
            self.dispatcher.reject_invalid(raw, error)
            return
        if isinstance(message, Cancel):
            self.dispatcher.cancel(message)
        else:
            self.dispatcher.submit(message)

    async def results(self, count: int) -> list[dict[str, Any]]:
        async with asyncio.timeout(2):
            while len(self.sent) < count:
                await asyncio.sleep(0)
        await asyncio.sleep(0.01)  # anything extra would show up now
        return self.sent


@pytest.fixture
def harness() -> Harness:
    return Harness()


def request(
    request_id: str = "r1", session_id: str = SESSION, timeout_ms: int = 30_000, **extra: Any
) -> dict[str, Any]:
    return {
        "type": "page_tool_request",
        "requestId": request_id,
        "sessionId": session_id,
        "tool": "page_observe",
        "actions": [{"action": "observe"}],
        "timeoutMs": timeout_ms,
        **extra,
    }


def cancel(request_id: str = "r1") -> dict[str, Any]:
    return {
        "type": "cancel",
        "requestId": request_id,
        "sessionId": SESSION,
        "reason": "user pressed stop",
    }


async def test_request_runs_and_its_result_is_sent(harness: Harness) -> None:  # SPEC W1
    harness.receive(request())
    harness.execute.release.set()
    [result] = await harness.results(1)
    assert result == {"type": "page_tool_result", "requestId": "r1", "success": True,
                      "pageVersion": "v2", "result": {"run": 1}}


async def test_invalid_frame_with_a_request_id_gets_one_invalid_request_result(
    harness: Harness,
) -> None:  # SPEC W1
    harness.receive(request(selector="#buy"))
    [result] = await harness.results(1)
    assert (result["requestId"], result["success"], result["error"]["code"]) == (
        "r1",
        False,
        "invalid_request",
    )
    assert "selector" in result["error"]["message"]
    assert harness.execute.calls == []


async def test_invalid_frame_without_a_request_id_is_dropped(harness: Harness) -> None:  # SPEC W1
    frame = request()
    del frame["requestId"]
    harness.receive(frame)
    await asyncio.sleep(0.01)
    assert harness.sent == []
    assert harness.execute.calls == []


async def test_duplicate_request_while_running_is_executed_once_with_one_result(
    harness: Harness,
) -> None:  # SPEC W2
    harness.receive(request())
    await asyncio.sleep(0)
    harness.receive(request())
    harness.execute.release.set()
    results = await harness.results(1)
    assert len(results) == 1
    assert harness.execute.calls == ["r1"]


async def test_duplicate_request_after_finishing_gets_the_first_result_again(
    harness: Harness,
) -> None:  # SPEC W2
    harness.receive(request())
    harness.execute.release.set()
    [first] = await harness.results(1)
    harness.receive(request())
    results = await harness.results(2)
    assert results == [first, first]
    assert harness.execute.calls == ["r1"]
    assert harness.dispatcher.executed == 1


async def test_cancel_ends_a_running_request_with_cancelled(harness: Harness) -> None:  # SPEC W3
    harness.receive(request())
    await asyncio.sleep(0)
    harness.receive(cancel())
    [result] = await harness.results(1)
    assert (result["requestId"], result["success"], result["error"]["code"]) == (
        "r1",
        False,
        "cancelled",
    )


async def test_cancel_arriving_with_the_request_still_gets_one_cancelled_result(
    harness: Harness,
) -> None:  # SPEC W3
    harness.receive(request())
    harness.receive(cancel())  # same burst: the request has not started yet
    [result] = await harness.results(1)
    assert result["error"]["code"] == "cancelled"
    assert harness.execute.calls == []


async def test_request_cancelled_before_starting_can_be_retried(
    harness: Harness,
) -> None:  # SPEC W2, W3
    harness.receive(request())
    harness.receive(cancel())
    await harness.results(1)
    harness.receive(request())
    results = await harness.results(2)
    assert results[1] == results[0]  # the first result, not a silent "still running"


async def test_slow_request_ends_with_timeout(harness: Harness) -> None:  # SPEC W3
    harness.receive(request(timeout_ms=100))
    [result] = await harness.results(1)
    assert (result["success"], result["error"]["code"]) == (False, "timeout")
    assert "100 ms" in result["error"]["message"]


async def test_exception_in_execution_becomes_an_internal_error_result(
    harness: Harness,
) -> None:  # SPEC W3, A6
    harness.execute.fail_with = RuntimeError("proxy was destroyed")
    harness.receive(request())
    harness.execute.release.set()
    [result] = await harness.results(1)
    assert (result["success"], result["error"]["code"]) == (False, "internal_error")
    assert "proxy was destroyed" in result["error"]["message"]
    assert result["pageVersion"] == "v1"


async def test_dispatcher_keeps_working_after_an_exception(harness: Harness) -> None:  # SPEC W3
    harness.execute.fail_with = RuntimeError("boom")
    harness.receive(request("r1"))
    harness.execute.release.set()
    await harness.results(1)
    harness.execute.fail_with = None
    harness.receive(request("r2"))
    results = await harness.results(2)
    assert (results[1]["requestId"], results[1]["success"]) == ("r2", True)


async def test_request_for_another_session_is_refused_and_not_executed(
    harness: Harness,
) -> None:  # SPEC W1, B2
    harness.receive(request(session_id="someone-else"))
    [result] = await harness.results(1)
    assert (result["requestId"], result["error"]["code"]) == ("r1", "invalid_request")
    assert harness.execute.calls == []


async def test_cancel_all_ends_every_running_request(harness: Harness) -> None:  # SPEC W3
    harness.receive(request("r1"))
    harness.receive(request("r2"))
    await asyncio.sleep(0)
    harness.dispatcher.cancel_all("the connection to the backend was lost")
    results = await harness.results(2)
    assert sorted((r["requestId"], r["error"]["code"]) for r in results) == [
        ("r1", "cancelled"),
        ("r2", "cancelled"),
    ]
