"""The wire protocol (SPEC W1, S5, B1): round trips, refusal of unknown fields, tool arguments."""

from __future__ import annotations

import json
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mao_page.protocol import (
    MAX_BATCH_ACTIONS,
    MAX_VALUE_CHARS,
    PROTOCOL_VERSION,
    TOOL_ACTION,
    TOOL_ARGS,
    ArgumentError,
    Cancel,
    CheckAction,
    ClickAction,
    ErrorCode,
    ErrorMessage,
    ExtractOptions,
    FillAction,
    FindOptions,
    FocusAction,
    Hello,
    InspectOptions,
    KeyboardAction,
    ObserveAction,
    PageInfo,
    PageToolRequest,
    PageToolResult,
    Ping,
    Pong,
    ScreenshotOptions,
    ScrollAction,
    SelectAction,
    ToolError,
    ToolName,
    UncheckAction,
    UserIdentity,
    WaitAction,
    Welcome,
    arguments,
    build_request,
    parse_client_message,
    parse_server_message,
)
from mao_page.protocol.arguments import _ACTION_MODELS
from pydantic import ValidationError
from pydantic.alias_generators import to_camel

SMUGGLED_FIELDS = ("selector", "script", "xpath")
REF = {"snapshotId": "s1", "elementId": "e1"}

EVERY_ACTION = [
    ScrollAction(direction="up", amount=300),
    ScrollAction(snapshot_id="s1", element_id="e9", amount="end"),
    FocusAction(snapshot_id="s1", element_id="e1"),
    FillAction(snapshot_id="s1", element_id="e1", value="Ada Lovelace"),
    SelectAction(snapshot_id="s1", element_id="e2", values=["red", "blue"]),
    CheckAction(snapshot_id="s1", element_id="e3"),
    UncheckAction(snapshot_id="s1", element_id="e3"),
    ClickAction(snapshot_id="s1", element_id="e4"),
    KeyboardAction(key="Control+a"),
    KeyboardAction(snapshot_id="s1", element_id="e1", text="hello"),
    WaitAction(text="Saved"),
    WaitAction(text_gone="Loading", timeout_ms=5000),
    WaitAction(time_ms=250),
    ObserveAction(),
]

SERVER_MESSAGES = [
    Welcome(session_id="sess-1", heartbeat_interval_ms=15_000, resumed=True),
    PageToolRequest(request_id="r1", session_id="sess-1", tool=ToolName.INSPECT,
                    inspect=InspectOptions(include_offscreen=True, max_tokens=800, format="text")),
    PageToolRequest(request_id="r2", session_id="sess-1", tool=ToolName.SCREENSHOT,
                    screenshot=ScreenshotOptions(format="png", max_width=640)),
    PageToolRequest(request_id="r3", session_id="sess-1", tool=ToolName.FILL,
                    actions=EVERY_ACTION, require_confirmation=True, timeout_ms=5000),
    Cancel(request_id="r3", session_id="sess-1", reason="user pressed stop"),
    Ping(ts=12.5),
    Pong(ts=12.5, page=PageInfo(url="https://shop.example/cart", title="Cart")),
    ErrorMessage(code=ErrorCode.UNAUTHORIZED, message="token expired", request_id="r1"),
]

CLIENT_MESSAGES = [
    Hello(protocol_version=PROTOCOL_VERSION, token="tok", agent_id="agent-1",
          user=UserIdentity(id="u1", name="Ada"), page=PageInfo(url="https://shop.example/"),
          sdk_version="0.1.0", resume_session_id="sess-1"),
    PageToolResult(request_id="r3", success=False, page_version="v7", stopped_at=2,
                   error=ToolError(code=ErrorCode.STALE_REF, message="stale", element_id="e1",
                                   details={"suggestion": "e5"})),
    PageToolResult(request_id="r4", success=True, page_version="v7", snapshot_id="s2",
                   result={"elements": []}),
    Ping(ts=1.0),
    Pong(ts=1.0),
]


def _wire(message: Any) -> str:
    return message.to_json()


def _request(**fields: Any) -> dict[str, Any]:
    return {"type": "page_tool_request", "requestId": "r1", "sessionId": "sess-1", **fields}


# -- round trips -------------------------------------------------------------------------


@pytest.mark.parametrize("message", SERVER_MESSAGES, ids=lambda m: m.type)
def test_server_message_round_trips_through_the_wire(message: Any) -> None:  # SPEC W1
    assert parse_server_message(_wire(message)) == message


@pytest.mark.parametrize("message", CLIENT_MESSAGES, ids=lambda m: m.type)
def test_client_message_round_trips_through_the_wire(message: Any) -> None:  # SPEC W1
    assert parse_client_message(_wire(message)) == message


@pytest.mark.parametrize(
    "message",
    [
        *SERVER_MESSAGES,
        *CLIENT_MESSAGES,
        PageToolResult(
            request_id="r5",
            success=True,
            result={"label": "提交 é", "rect": {"x": 10.0, "y": 0.5}, "none": None},
        ),
        # A lone surrogate (JavaScript strings can hold one) has no UTF-8 form: JSON escapes it.
        PageToolResult(request_id="r6", success=True, result={"text": "half \ud83d pair"}),
    ],
    ids=lambda m: m.type,
)
def test_the_json_sent_is_the_wire_form(message: Any) -> None:  # SPEC W1
    assert json.loads(message.to_json()) == message.to_wire()


def test_wire_field_names_are_camel_case() -> None:  # SPEC W1
    wire = SERVER_MESSAGES[3].to_wire()
    assert {"requestId", "sessionId", "requireConfirmation", "timeoutMs"} <= wire.keys()
    assert "request_id" not in wire
    fill = next(a for a in wire["actions"] if a["action"] == "fill")
    assert fill == {
        "action": "fill",
        "snapshotId": "s1",
        "elementId": "e1",
        "value": "Ada Lovelace",
    }


def test_every_action_survives_a_request_round_trip_in_order() -> None:  # SPEC A1, A5
    parsed = parse_server_message(_wire(SERVER_MESSAGES[3]))
    assert [type(a) for a in parsed.actions] == [type(a) for a in EVERY_ACTION]
    assert parsed.actions == EVERY_ACTION


def test_a_frame_that_is_not_json_is_a_validation_error() -> None:  # SPEC W1
    with pytest.raises(ValidationError):
        parse_server_message("{not json")


# -- unknown fields ----------------------------------------------------------------------


@pytest.mark.parametrize("field", SMUGGLED_FIELDS)
def test_request_with_an_unknown_top_level_field_is_rejected(field: str) -> None:  # SPEC W1, S5
    raw = _request(tool="page_click", actions=[{"action": "click", **REF}], **{field: "#buy"})
    with pytest.raises(ValidationError):
        parse_server_message(json.dumps(raw))


@pytest.mark.parametrize("field", SMUGGLED_FIELDS)
def test_unknown_field_inside_a_batch_action_is_rejected(field: str) -> None:  # SPEC W1, S5
    actions = [{"action": "fill", **REF, "value": "x"}, {"action": "click", **REF, field: "#buy"}]
    with pytest.raises(ValidationError):
        parse_server_message(json.dumps(_request(tool="page_click", actions=actions)))


@pytest.mark.parametrize("field", SMUGGLED_FIELDS)
def test_unknown_field_inside_inspect_options_is_rejected(field: str) -> None:  # SPEC W1, S5
    raw = _request(tool="page_inspect", inspect={"includeOffscreen": True, field: "//div"})
    with pytest.raises(ValidationError):
        parse_server_message(json.dumps(raw))


@pytest.mark.parametrize(
    "message",
    [
        {"type": "cancel", "requestId": "r1", "sessionId": "s", "script": "alert(1)"},
        {"type": "welcome", "sessionId": "s", "heartbeatIntervalMs": 1000, "xpath": "//a"},
        {"type": "ping", "ts": 1, "selector": "body"},
    ],
    ids=["cancel", "welcome", "ping"],
)
def test_unknown_field_in_other_server_messages_is_rejected(
    message: dict[str, Any],
) -> None:  # SPEC W1
    with pytest.raises(ValidationError):
        parse_server_message(json.dumps(message))


def test_unknown_field_in_a_client_result_is_rejected() -> None:  # SPEC W1
    raw = {"type": "page_tool_result", "requestId": "r1", "success": True, "script": "x"}
    with pytest.raises(ValidationError):
        parse_client_message(json.dumps(raw))


@pytest.mark.parametrize("field", SMUGGLED_FIELDS)
def test_build_request_rejects_unknown_single_action_arguments(field: str) -> None:  # SPEC W1, S5
    with pytest.raises(ArgumentError, match=field):
        build_request("page_click", {**REF, field: "#buy"}, request_id="r1", session_id="s")


@pytest.mark.parametrize("field", SMUGGLED_FIELDS)
def test_build_request_rejects_unknown_fields_inside_batch_actions(
    field: str,
) -> None:  # SPEC W1, S5
    args = {"actions": [{"action": "click", **REF, field: "#buy"}]}
    with pytest.raises(ArgumentError, match=field):
        build_request("page_click", args, request_id="r1", session_id="s")


# -- request shape -----------------------------------------------------------------------


def test_action_tool_without_actions_is_rejected() -> None:  # SPEC W1
    with pytest.raises(ValidationError, match="at least one action"):
        PageToolRequest(request_id="r1", session_id="s", tool=ToolName.CLICK)


def test_inspect_request_with_actions_is_rejected() -> None:  # SPEC W1
    with pytest.raises(ValidationError, match="takes no actions"):
        PageToolRequest(
            request_id="r1", session_id="s", tool=ToolName.INSPECT, actions=[ObserveAction()]
        )


def test_request_level_snapshot_id_covers_element_actions() -> None:  # SPEC R1
    request = PageToolRequest(
        request_id="r1",
        session_id="s",
        tool=ToolName.CLICK,
        snapshot_id="s1",
        actions=[ClickAction(element_id="e1")],
    )
    assert request.actions[0].element_id == "e1"


# -- build_request -----------------------------------------------------------------------


def test_single_action_arguments_become_a_one_action_request() -> None:  # SPEC B1
    request = build_request(
        "page_fill", {**REF, "value": "Ada"}, request_id="r1", session_id="sess"
    )
    assert (request.request_id, request.session_id, request.tool) == ("r1", "sess", ToolName.FILL)
    assert request.actions == [FillAction(snapshot_id="s1", element_id="e1", value="Ada")]


@pytest.mark.parametrize(
    ("tool", "args", "action"),
    [
        ("page_fill", {**REF, "value": "Ada Lovelace"},
         FillAction(snapshot_id="s1", element_id="e1", value="Ada Lovelace")),
        ("page_click", REF, ClickAction(snapshot_id="s1", element_id="e1")),
        ("page_select", {**REF, "values": ["red", "blue"]},
         SelectAction(snapshot_id="s1", element_id="e1", values=["red", "blue"])),
        ("page_scroll", {"direction": "up", "amount": 300},
         ScrollAction(direction="up", amount=300)),
        ("page_keyboard", {"key": "Enter"}, KeyboardAction(key="Enter")),
        ("page_wait", {"text": "Saved"}, WaitAction(text="Saved")),
        ("page_observe", {}, ObserveAction()),
    ],
)
def test_single_action_arguments_give_the_request_a_batch_of_that_action_gives(
    tool: str, args: dict[str, Any], action: Any
) -> None:  # SPEC B1
    single = build_request(tool, args, request_id="r1", session_id="s", timeout_ms=500)
    batch = build_request(tool, {"actions": [{"action": action.action, **args}]},
                          request_id="r1", session_id="s", timeout_ms=500)
    assert single.actions == [action]
    assert single.model_dump_json(exclude_none=True) == batch.model_dump_json(exclude_none=True)


def test_single_action_timeout_out_of_range_is_refused() -> None:  # SPEC W3
    with pytest.raises(ArgumentError, match="timeout"):
        build_request("page_fill", {**REF, "value": "Ada"}, request_id="r1", session_id="s",
                      timeout_ms=5)


def test_batch_arguments_keep_their_order() -> None:  # SPEC A5
    args = {"actions": [{"action": "fill", **REF, "value": "Ada"}, {"action": "click", **REF},
                        {"action": "wait", "text": "Saved"}]}
    request = build_request("page_fill", args, request_id="r1", session_id="s")
    assert [a.action for a in request.actions] == ["fill", "click", "wait"]


def test_batch_and_single_action_fields_together_are_refused() -> None:  # SPEC B1
    args = {**REF, "value": "Ada", "actions": [{"action": "click", **REF}]}
    with pytest.raises(ArgumentError, match="not both"):
        build_request("page_fill", args, request_id="r1", session_id="s")


def test_unknown_tool_is_refused() -> None:  # SPEC B1, N
    with pytest.raises(ArgumentError, match="unknown tool 'page_eval'"):
        build_request("page_eval", {"script": "1"}, request_id="r1", session_id="s")


def test_arguments_that_are_not_an_object_are_refused() -> None:  # SPEC B1
    with pytest.raises(ArgumentError, match="JSON object"):
        build_request("page_inspect", ["x"], request_id="r1", session_id="s")  # type: ignore[arg-type]


def test_element_action_without_snapshot_id_is_refused() -> None:  # SPEC R1
    with pytest.raises(ArgumentError, match="snapshotId"):
        build_request("page_click", {"elementId": "e1"}, request_id="r1", session_id="s")


# SPEC R1
def test_a_null_argument_is_read_as_absent() -> None:
    # The element action then has no snapshotId, and the error says so.
    args = {"snapshotId": None, "elementId": "e1", "value": "Ada"}
    with pytest.raises(ArgumentError) as refused:
        build_request("page_fill", args, request_id="r1", session_id="s")
    assert str(refused.value) == "message: Value error, actions[0] (fill) needs a snapshotId"


# SPEC B1: the tool names the action
def test_an_action_key_in_single_action_arguments_is_refused() -> None:
    args = {"action": "fill", **REF, "value": "Ada"}
    with pytest.raises(ArgumentError, match="^action: Extra inputs are not permitted$"):
        build_request("page_fill", args, request_id="r1", session_id="s")


def test_a_lone_surrogate_in_a_value_is_refused() -> None:  # SPEC W1
    # JSON text can carry one (a JavaScript string can hold it); it has no UTF-8 form.
    args = json.loads('{"snapshotId": "s1", "elementId": "e1", "value": "a\\ud800"}')
    with pytest.raises(ArgumentError, match="value: Input should be a valid string"):
        build_request("page_fill", args, request_id="r1", session_id="s")


def test_batch_element_action_without_snapshot_id_is_refused() -> None:  # SPEC R1
    args = {"actions": [{"action": "click", **REF}, {"action": "check", "elementId": "e2"}]}
    with pytest.raises(ArgumentError, match=r"actions\[1\] \(check\) needs a snapshotId"):
        build_request("page_check", args, request_id="r1", session_id="s")


def test_page_wide_actions_need_no_snapshot_id() -> None:  # SPEC A1
    request = build_request("page_scroll", {}, request_id="r1", session_id="s")
    assert request.actions == [ScrollAction(direction="down", amount="page")]


def test_inspect_arguments_become_inspect_options() -> None:  # SPEC S4, S7
    request = build_request("page_inspect", {"includeOffscreen": True, "maxTokens": 1000},
                            request_id="r1", session_id="s")
    assert request.inspect == InspectOptions(include_offscreen=True, max_tokens=1000)
    assert request.actions is None


def test_extract_arguments_become_extract_options() -> None:  # SPEC T1
    request = build_request(
        "page_extract",
        {"snapshotId": "s1", "elementId": "e2", "fromChar": 8000},
        request_id="r1",
        session_id="s",
    )
    assert request.extract == ExtractOptions(
        snapshot_id="s1", element_id="e2", from_char=8000, max_chars=8000
    )
    assert request.actions is None and request.find is None


def test_find_arguments_become_find_options() -> None:  # SPEC T2
    request = build_request("page_find", {"query": "total", "regex": True, "maxResults": 5},
                            request_id="r1", session_id="s")
    assert request.find == FindOptions(query="total", regex=True, max_results=5)


@pytest.mark.parametrize(("tool", "args", "message"), [
    ("page_find", {}, "query"),
    ("page_find", {"query": ""}, "query"),
    ("page_extract", {"elementId": "e1"}, "needs the snapshotId"),
    ("page_find", {"query": "x", "elementId": "e1"}, "needs the snapshotId"),
    ("page_extract", {"maxChars": 100}, "maxChars"),
    ("page_extract", {"selector": "#main"}, "selector"),
])
def test_read_tool_arguments_that_describe_no_valid_read_are_refused(
    tool: str, args: dict[str, Any], message: str
) -> None:
    # SPEC T1, T2, S5: bad input is refused before anything reaches the page.
    with pytest.raises(ArgumentError, match=message):
        build_request(tool, args, request_id="r1", session_id="s")


def test_a_request_carrying_another_tools_options_is_refused() -> None:  # SPEC W1
    with pytest.raises(ValueError, match="takes no find options"):
        PageToolRequest(
            request_id="r1", session_id="s", tool=ToolName.EXTRACT, find=FindOptions(query="x")
        )


def test_invalid_request_id_is_an_argument_error() -> None:  # SPEC W1
    with pytest.raises(ArgumentError, match="request_id"):
        build_request("page_observe", {}, request_id="has spaces", session_id="s")


@pytest.mark.parametrize("args", [{}, {"text": "hi", "key": "Enter"}], ids=["neither", "both"])
def test_keyboard_needs_exactly_one_of_text_or_key(args: dict[str, Any]) -> None:  # SPEC A1
    with pytest.raises(ArgumentError, match="exactly one of 'text' or 'key'"):
        build_request("page_keyboard", args, request_id="r1", session_id="s")


@pytest.mark.parametrize("args", [{"text": "hi"}, {"key": "Control+a"}], ids=["text", "key"])
def test_keyboard_with_one_of_text_or_key_is_accepted(args: dict[str, Any]) -> None:  # SPEC A1
    request = build_request("page_keyboard", args, request_id="r1", session_id="s")
    assert request.actions[0].action == "keyboard"


@pytest.mark.parametrize(
    "args",
    [{}, {"text": "Saved", "timeMs": 100}, {"text": "a", "textGone": "b"}],
    ids=["none", "text+time", "text+gone"],
)
def test_wait_needs_exactly_one_condition(args: dict[str, Any]) -> None:  # SPEC A1
    with pytest.raises(ArgumentError, match="exactly one of 'text', 'textGone' or 'timeMs'"):
        build_request("page_wait", args, request_id="r1", session_id="s")


@pytest.mark.parametrize("args", [{"text": "Saved"}, {"textGone": "Loading"}, {"timeMs": 100}])
def test_wait_with_one_condition_is_accepted(args: dict[str, Any]) -> None:  # SPEC A1
    assert build_request("page_wait", args, request_id="r1", session_id="s").actions


def test_wait_time_has_a_hard_cap() -> None:  # SPEC A1
    with pytest.raises(ArgumentError, match="timeMs: Input should be less than or equal to 30000"):
        build_request("page_wait", {"timeMs": 30_001}, request_id="r1", session_id="s")


def test_batch_of_the_maximum_size_is_accepted() -> None:  # SPEC A5
    args = {"actions": [{"action": "observe"}] * MAX_BATCH_ACTIONS}
    request = build_request("page_observe", args, request_id="r1", session_id="s")
    assert len(request.actions) == MAX_BATCH_ACTIONS


def test_batch_over_the_maximum_size_is_refused() -> None:  # SPEC A5
    args = {"actions": [{"action": "observe"}] * (MAX_BATCH_ACTIONS + 1)}
    with pytest.raises(ArgumentError, match="actions"):
        build_request("page_observe", args, request_id="r1", session_id="s")


def test_request_over_the_batch_limit_is_refused_on_the_wire_too() -> None:  # SPEC A5, W1
    raw = _request(tool="page_observe", actions=[{"action": "observe"}] * (MAX_BATCH_ACTIONS + 1))
    with pytest.raises(ValidationError):
        parse_server_message(json.dumps(raw))


def test_fill_value_of_the_maximum_length_is_accepted() -> None:  # SPEC A1
    request = build_request("page_fill", {**REF, "value": "x" * MAX_VALUE_CHARS},
                            request_id="r1", session_id="s")
    assert len(request.actions[0].value) == MAX_VALUE_CHARS


@pytest.mark.parametrize("batch", [False, True], ids=["single", "batch"])
def test_fill_value_over_the_maximum_length_is_refused(batch: bool) -> None:  # SPEC A1
    fill = {**REF, "value": "x" * (MAX_VALUE_CHARS + 1)}
    args = {"actions": [{"action": "fill", **fill}]} if batch else fill
    with pytest.raises(ArgumentError, match="value"):
        build_request("page_fill", args, request_id="r1", session_id="s")


# -- JSON schemas ------------------------------------------------------------------------


@pytest.mark.parametrize("tool", list(ToolName))
def test_tool_schema_is_a_closed_object(tool: ToolName) -> None:  # SPEC B1, W1
    schema = TOOL_ARGS[tool].model_json_schema()
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    for name, definition in schema.get("$defs", {}).items():
        if definition.get("type") == "object":
            assert definition["additionalProperties"] is False, name


@pytest.mark.parametrize("tool", list(ToolName))
def test_tool_schema_has_camel_case_properties(tool: ToolName) -> None:  # SPEC W1
    properties = TOOL_ARGS[tool].model_json_schema()["properties"]
    assert properties
    assert all("_" not in name for name in properties)


def test_tool_schema_states_the_action_limits() -> None:  # SPEC B1: generated from the same models
    properties = TOOL_ARGS[ToolName.FILL].model_json_schema()["properties"]
    value = next(v for v in properties["value"]["anyOf"] if v.get("type") == "string")
    element_id = next(v for v in properties["elementId"]["anyOf"] if v.get("type") == "string")
    assert value["maxLength"] == MAX_VALUE_CHARS
    assert element_id["pattern"] == "^[A-Za-z0-9_.:\\-]{1,80}$"


# -- property: garbage in, a typed refusal out -------------------------------------------

_KNOWN_KEYS = [
    "type", "requestId", "sessionId", "tool", "snapshotId", "elementId", "actions", "action",
    "value", "values", "text", "key", "textGone", "timeMs", "timeoutMs", "inspect",
    "heartbeatIntervalMs", "ts", "code", "message", "selector", "script", "xpath",
]
_KNOWN_VALUES = [
    "page_tool_request", "cancel", "welcome", "ping", "pong", "error", "hello",
    "page_tool_result", "page_click", "page_inspect", "click", "fill", "keyboard", "wait",
]
_scalars = (
    st.none() | st.booleans() | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20)
    | st.sampled_from(_KNOWN_VALUES)
)
_keys = st.sampled_from(_KNOWN_KEYS) | st.text(max_size=10)
json_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_keys, inner, max_size=6),
    max_leaves=20,
)
json_objects = st.dictionaries(_keys, json_values, max_size=8)
_fast = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_fast
@given(json_values)
def test_server_frames_either_parse_or_raise_validation_error(data: Any) -> None:  # SPEC W1
    try:
        parse_server_message(json.dumps(data))
    except ValidationError:
        pass


@_fast
@given(json_values)
def test_client_frames_either_parse_or_raise_validation_error(data: Any) -> None:  # SPEC W1
    try:
        parse_client_message(json.dumps(data))
    except ValidationError:
        pass


@_fast
@given(st.sampled_from([t.value for t in ToolName]) | st.text(max_size=12), json_objects)
def test_tool_arguments_either_build_or_raise_argument_error(
    tool: str, args: dict[str, Any]
) -> None:  # SPEC B1
    try:
        request = build_request(tool, args, request_id="r1", session_id="s")
    except ArgumentError:
        return
    # Whatever was accepted is a request the page itself would accept.
    assert parse_server_message(json.dumps(request.to_wire())) == request


# One action's fields: near-valid values for each action tool's own fields, in either spelling.
_ids = st.sampled_from(["s1", "e1", "e-1.a:b_c", "", "e 1", "x" * 81, 5, True, None])
_texts = st.text(max_size=6) | st.sampled_from(["", " ", "Enter", "Control+a", 5, True, 1.5, None])
_numbers = st.sampled_from([0, 1, -1, 100, 30_000, 30_001, 1.0, 1.5, "100", True, 2**63, None])
_FIELD_VALUES: dict[str, Any] = {
    "snapshot_id": _ids, "element_id": _ids, "value": _texts, "key": _texts, "text": _texts,
    "text_gone": _texts, "values": st.lists(_texts, max_size=3) | st.sampled_from(["red", []]),
    "direction": st.sampled_from(["up", "down", "left", "right", "UP", "", 1, None]),
    "amount": st.sampled_from(["page", "end", 300, 0, -1, "300", 300.5, True, 10**9, None]),
    "time_ms": _numbers, "timeout_ms": _numbers,
    "click_count": st.sampled_from([1, 2, 3, 0, "2", None]),
    "button": st.sampled_from(["left", "right", "middle", "", None]),
    "to_element_id": _ids,
}


def _single_action_args(tool: ToolName) -> st.SearchStrategy[dict[str, Any]]:
    names = [n for n in _ACTION_MODELS[TOOL_ACTION[tool]].model_fields if n != "action"]
    fields = {k: _FIELD_VALUES[n] for n in names for k in (n, to_camel(n))}
    fields["selector"] = _texts
    return st.fixed_dictionaries({}, optional=fields)


def _built(tool: str, args: dict[str, Any]) -> tuple[str, str]:
    try:
        request = build_request(tool, args, request_id="r1", session_id="s", timeout_ms=900)
    except ArgumentError as error:
        return ("refused", str(error))
    return ("built", request.model_dump_json())


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(TOOL_ACTION)).flatmap(
    lambda tool: st.tuples(st.just(tool.value), _single_action_args(tool))))
def test_one_pass_single_action_builds_what_the_general_path_builds(
    case: tuple[str, dict[str, Any]],
) -> None:  # SPEC B1
    # build_request validates one action's fields in one pass as the request; the general
    # path (arguments model, action, request) must accept, build and refuse exactly the same.
    tool, args = case
    one_pass = _built(tool, args)
    with mock.patch.object(arguments, "_one_plain_action", return_value=False):
        general = _built(tool, args)
    assert one_pass == general


def test_the_transports_frames_have_the_fields_of_the_protocol_models() -> None:
    # SPEC E6: loader_js/transport.js writes and reads these frames itself, from the table the
    # asset build generates out of mao_page.session.wire; each must be the model's own shape.
    from mao_page.dom.jstables import wire_table
    from mao_page.protocol import ErrorCode, PageInfo, ToolError, UserIdentity
    from mao_page.protocol import messages as M
    from mao_page.session import wire

    models = {
        wire.HELLO: M.Hello, wire.WELCOME: M.Welcome, wire.PING: M.Ping, wire.PONG: M.Pong,
        wire.ERROR: M.ErrorMessage, wire.PAGE_READY: M.PageReady,
        wire.PAGE_TOOL_RESULT: M.PageToolResult,
    }
    table = wire_table()
    aliases = lambda model: [f.alias or name for name, f in model.model_fields.items()]  # noqa: E731
    for kind, model in models.items():
        assert model.model_fields["type"].default == kind
        written = table["fields"][kind]
        assert set(written) <= set(aliases(model)), kind
        if kind != wire.PAGE_TOOL_RESULT:  # the transport writes only a failure of it
            assert set(written) == set(aliases(model)), kind
    assert table["user"] == aliases(UserIdentity)
    assert table["page"] == aliases(PageInfo)
    assert set(table["errorDetail"]) <= set(aliases(ToolError))
    assert table["version"] == M.PROTOCOL_VERSION
    assert {ErrorCode(code) for code in table["finalRefusals"]}
    assert ErrorCode(table["startupFailed"]) is ErrorCode.STARTUP_FAILED
    assert ErrorCode(table["runtimeCrashed"]) is ErrorCode.RUNTIME_CRASHED
    trigger = M.PageReady.model_fields["trigger"].annotation
    assert tuple(trigger.__args__) == tuple(table["bootTriggers"])
