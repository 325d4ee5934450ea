"""Hypothesis strategies for hostile protocol frames, shared by the fuzz tests of both ends.

A frame is built from a valid message of some type and then damaged: a field dropped, a
field's value replaced by a JSON value of another type or a huge string, a smuggled field
added (``selector``, ``script``, ``xpath`` ...), the ``type`` or ``sessionId`` changed; or it
is not JSON at all (random text, truncated JSON, binary). Valid messages are mixed in too, so
the oracle (the shared pydantic models) is exercised on both sides of the line.

``MAO_EMBED_FUZZ_EXAMPLES`` sets the examples per test: small in the suite, large under
``nox -s fuzz``.
"""

from __future__ import annotations

import json
import os
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

EXAMPLES = int(os.environ.get("MAO_EMBED_FUZZ_EXAMPLES", "120"))
FUZZ_SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None,
)

SMUGGLED_FIELDS = ("selector", "script", "xpath", "cssSelector", "outerHTML", "eval", "js")

json_leaf = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=40)
)
json_value = st.recursive(
    json_leaf,
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=12,
)
# Large enough to hit every max_length in the protocol, small enough to stay under the
# backend's frame limit (that limit has its own test).
huge_string = st.builds(
    lambda char, size: char * size,
    st.sampled_from(["x", "\u00e9", "\U0001f600", "<", "\\", '"']),
    st.integers(min_value=1_000, max_value=120_000),
)
identifiers = st.sampled_from(["r1", "req-1", "ses-x", "", "a" * 81, "../../etc", "r 1", "é"])
any_identifier = identifiers | st.text(max_size=100)


def _page_tool_result(request_id: str) -> dict[str, Any]:
    return {
        "type": "page_tool_result",
        "requestId": request_id,
        "success": False,
        "pageVersion": "v1",
        "error": {"code": "not_found", "message": "gone"},
    }


def client_templates(session_id: str) -> list[dict[str, Any]]:
    """One valid message of every type a page may send."""
    return [
        {
            "type": "hello",
            "protocolVersion": 1,
            "token": "t",
            "agentId": "a",
            "user": {"id": "u"},
            "page": {"url": "https://shop.example/", "title": "Shop"},
        },
        _page_tool_result("req-unknown"),
        {"type": "page_tool_result", "requestId": "req-2", "success": True, "result": {"a": 1}},
        {"type": "ping", "ts": 1.5},
        {"type": "pong", "ts": 2.0, "page": {"url": "https://shop.example/x", "title": "X"}},
        {"type": "chat_message", "text": "hello", "messageId": "m-1"},
    ]


def server_templates(session_id: str) -> list[dict[str, Any]]:
    """One valid message of every type the backend may send to a page."""
    return [
        {
            "type": "page_tool_request",
            "requestId": "req-1",
            "sessionId": session_id,
            "tool": "page_click",
            "snapshotId": "snap-1",
            "actions": [{"action": "click", "elementId": "e1"}],
        },
        {
            "type": "page_tool_request",
            "requestId": "req-2",
            "sessionId": session_id,
            "tool": "page_fill",
            "actions": [{"action": "fill", "snapshotId": "s", "elementId": "e2", "value": "v"}],
        },
        {"type": "page_tool_request", "requestId": "req-3", "sessionId": session_id,
         "tool": "page_inspect", "inspect": {"format": "text"}},
        {"type": "cancel", "requestId": "req-1", "sessionId": session_id},
        {"type": "ping", "ts": 1.0},
        {"type": "pong", "ts": 1.0},
        {"type": "welcome", "sessionId": session_id, "heartbeatIntervalMs": 15000},
        {"type": "error", "code": "invalid_request", "message": "m"},
        {"type": "chat_event", "kind": "assistant_text", "text": "hi"},
    ]


@st.composite
def damaged(draw: st.DrawFn, template: dict[str, Any]) -> dict[str, Any]:
    message = json.loads(json.dumps(template))
    target = message
    # Sometimes damage a nested object (an action, the page, the user, the error).
    nested = [v for v in message.values() if isinstance(v, dict)]
    nested += [
        item
        for v in message.values()
        if isinstance(v, list)
        for item in v
        if isinstance(item, dict)
    ]
    if nested and draw(st.booleans()):
        target = draw(st.sampled_from(nested))
    how = draw(
        st.sampled_from(["drop", "retype", "huge", "smuggle", "type", "session", "extra"])
    )
    keys = sorted(target)
    if how == "drop" and keys:
        del target[draw(st.sampled_from(keys))]
    elif how == "retype" and keys:
        target[draw(st.sampled_from(keys))] = draw(json_value)
    elif how == "huge" and keys:
        target[draw(st.sampled_from(keys))] = draw(huge_string)
    elif how == "smuggle":
        target[draw(st.sampled_from(SMUGGLED_FIELDS))] = draw(
            st.sampled_from(["#delete", "alert(document.cookie)", "//button[1]"]) | json_value
        )
    elif how == "type":
        message["type"] = draw(
            st.sampled_from(["page_tool_request", "page_tool_result", "eval", "", "HELLO"])
            | st.text(max_size=20)
        )
    elif how == "session":
        message["sessionId"] = draw(any_identifier)
        if "requestId" in message and draw(st.booleans()):
            message["requestId"] = draw(any_identifier)
    else:
        target[draw(st.text(min_size=1, max_size=20))] = draw(json_value)
    return message


def not_json() -> st.SearchStrategy[str | bytes]:
    return (
        st.text(max_size=200)
        | st.binary(max_size=200)
        | st.sampled_from(["{", "[]", "null", "1e999", '{"type":', '"hello"', "{}", "{'a':1}"])
        | st.builds(lambda n: "[" * n, st.integers(min_value=1, max_value=50_000))
    )


def frames(templates: list[dict[str, Any]]) -> st.SearchStrategy[str | bytes]:
    """Text or binary frames: not JSON, damaged messages, or valid ones."""
    messages = st.sampled_from(templates).flatmap(
        lambda t: st.one_of(st.just(t), damaged(t), damaged(t).flatmap(damaged))
    )
    as_text = messages.map(lambda m: json.dumps(m, ensure_ascii=False))
    truncated = st.builds(lambda text, cut: text[: max(1, len(text) * cut // 100)], as_text,
                          st.integers(min_value=1, max_value=99))
    return st.one_of(not_json(), as_text, as_text, as_text, truncated)
