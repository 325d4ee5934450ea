"""Property-based fuzzing of everything the backend receives (SPEC W1, B5).

WebSocket frames after the handshake, first frames (hello), agent HTTP bodies, and MCP
JSON-RPC bodies and tool arguments at ``/mcp``. For each
hostile input: a structured error exactly when the shared protocol models reject it, nothing
executes (no request reaches the page, no pending call is settled by garbage), and the server
and the connection survive. Example counts: ``fuzz_frames.EXAMPLES`` (``nox -s fuzz`` raises
them).
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Iterator
from concurrent.futures import Future
from dataclasses import replace
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from backend_fakes import AGENT_ID, PAGE_ORIGIN, SECRET, USER_ID
from fuzz_frames import (
    FUZZ_SETTINGS,
    SMUGGLED_FIELDS,
    any_identifier,
    client_templates,
    damaged,
    frames,
    huge_string,
    json_value,
    not_json,
)
from hypothesis import assume, given
from hypothesis import strategies as st
from mao_embed.config import ServerConfig
from mao_embed.server import RunningServer, start_in_thread
from mao_page.protocol import (
    TOOL_ARGS,
    ArgumentError,
    ErrorMessage,
    PageToolResult,
    ToolName,
    build_request,
    parse_client_message,
    parse_server_message,
)
from pydantic import ValidationError
from websockets.sync.client import ClientConnection, connect

# A pending page_fill the fuzzer must never settle: its requestId is never generated.
PENDING_ID = "req-pending-fill-7f3a"


@pytest.fixture(scope="module")
def fuzz_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    tmp = tmp_path_factory.mktemp("fuzz")
    config = ServerConfig(
        host="127.0.0.1",
        port=0,
        secret=SECRET,
        allowed_origins=(PAGE_ORIGIN,),
        db_path=tmp / "audit.db",
        sdk_dir=tmp,
        demo_dir=tmp,
        # Thousands of frames in a row on one connection: lift the flood limit, which has
        # its own test, so every frame is parsed.
        inbound_rate_per_s=1e9,
        inbound_burst=10**9,
        # The huge-string and deep-nesting frames stay under this; bigger ones are refused
        # before parsing (tested in test_sdk_socket).
        max_message_bytes=1024 * 1024,
    )
    running = start_in_thread(config)
    yield running
    running.stop()


def open_socket(server: RunningServer) -> ClientConnection:
    return connect(server.ws_url, origin=PAGE_ORIGIN, max_size=None)  # type: ignore[arg-type]


def say_hello(server: RunningServer, socket: ClientConnection) -> str:
    socket.send(
        json.dumps(
            {
                "type": "hello",
                "protocolVersion": 1,
                "token": server.issue_token(USER_ID, AGENT_ID),
                "agentId": AGENT_ID,
                "user": {"id": USER_ID},
                "page": {"url": "https://shop.example/", "title": "Shop"},
            }
        )
    )
    welcome = json.loads(socket.recv(timeout=5))
    assert welcome["type"] == "welcome", welcome
    return str(welcome["sessionId"])


def until_pong(socket: ClientConnection, marker: float) -> list[dict[str, Any]]:
    """Ping with a unique ts and return everything the server sent before the answer."""
    socket.send(json.dumps({"type": "ping", "ts": marker}))
    seen = []
    while True:
        message = json.loads(socket.recv(timeout=10))
        if message["type"] == "pong" and message["ts"] == marker:
            return seen
        if message["type"] == "ping":
            # The server's own heartbeat; answered so long runs keep the session.
            socket.send(json.dumps({"type": "pong", "ts": message["ts"]}))
            continue
        seen.append(message)


def parses(frame: str | bytes) -> Any:
    try:
        return parse_client_message(frame)
    except ValidationError:
        return None


def test_hostile_frames_after_the_handshake_get_structured_errors_and_nothing_runs(
    fuzz_server: RunningServer,
) -> None:
    with open_socket(fuzz_server) as socket:
        _fuzz_one_session(fuzz_server, socket)


def _fuzz_one_session(fuzz_server: RunningServer, socket: ClientConnection) -> None:
    session_id = say_hello(fuzz_server, socket)
    pending: Future[PageToolResult] = asyncio.run_coroutine_threadsafe(
        fuzz_server.relay.call_tool(
            session_id,
            "page_fill",
            {"snapshotId": "s1", "elementId": "e1", "value": "x"},
            request_id=PENDING_ID,
            timeout_ms=120_000,
        ),
        fuzz_server.loop,
    )
    (request,) = until_pong(socket, -1.0)
    assert request["type"] == "page_tool_request"
    markers = iter(range(10**9))

    @FUZZ_SETTINGS
    @given(frame=frames(client_templates(session_id)))
    def one_frame(frame: str | bytes) -> None:
        socket.send(frame)
        seen = until_pong(socket, float(next(markers)))
        parsed = parses(frame)
        errors = [m for m in seen if m["type"] == "error"]
        if parsed is None:
            # Exactly one structured error, naming fields, never echoing the frame.
            assert len(errors) == 1, (frame, seen)
            error = ErrorMessage.model_validate(errors[0])
            assert error.code == "invalid_request"
            assert len(error.message) <= 1000
        elif parsed.type == "hello":
            assert [e["code"] for e in errors] == ["invalid_request"]
        else:
            assert errors == [], (frame, seen)
        # Nothing executes: no request was sent, the pending write is still pending.
        assert not [m for m in seen if m["type"] == "page_tool_request"]
        assert not pending.done()

    one_frame()
    # The session survived every frame: the pending call still completes normally.
    socket.send(
        json.dumps(
            {"type": "page_tool_result", "requestId": PENDING_ID, "success": True,
             "pageVersion": "v9"}
        )
    )
    assert pending.result(timeout=10).page_version == "v9"


def test_hostile_first_frames_are_refused_with_a_structured_error(
    fuzz_server: RunningServer,
) -> None:
    token = fuzz_server.issue_token(USER_ID, AGENT_ID)

    @FUZZ_SETTINGS
    @given(frame=frames(client_templates("ses-none")) | _hellos_with_a_real_token(token))
    def first_frame(frame: str | bytes) -> None:
        with open_socket(fuzz_server) as socket:
            socket.send(frame)
            answer = parse_server_message(socket.recv(timeout=10))
            if answer.type == "welcome":
                # Only a hello that validates, with our token, opens a session.
                parsed = parses(frame)
                assert parsed is not None and parsed.type == "hello" and parsed.token == token
            else:
                assert isinstance(answer, ErrorMessage)
                assert answer.code in {
                    "invalid_request", "unauthorized", "protocol_mismatch", "message_too_large"
                }
                assert token not in answer.message

    first_frame()
    assert fuzz_server.run(_healthy(fuzz_server))


@st.composite
def _hellos_with_a_real_token(draw: st.DrawFn, token: str) -> str:
    hello: dict[str, Any] = {
        "type": "hello",
        "protocolVersion": 1,
        "token": token,
        "agentId": AGENT_ID,
        "user": {"id": USER_ID},
        "page": {"url": "https://shop.example/", "title": "Shop"},
    }
    if draw(st.booleans()):
        hello[draw(st.sampled_from(SMUGGLED_FIELDS))] = draw(json_value)
    else:
        key = draw(st.sampled_from(["agentId", "user", "page", "protocolVersion", "token"]))
        hello[key] = draw(json_value | huge_string)
    return json.dumps(hello)


async def _healthy(server: RunningServer) -> bool:
    return isinstance(server.relay.sessions(), list)


def test_hostile_agent_http_bodies_are_refused_and_never_reach_the_page(
    fuzz_server: RunningServer,
) -> None:
    with open_socket(fuzz_server) as socket, httpx.Client(
        base_url=fuzz_server.url, timeout=30
    ) as client:
        _fuzz_http(fuzz_server, socket, client)


def _fuzz_http(fuzz_server: RunningServer, socket: ClientConnection, client: httpx.Client) -> None:
    session_id = say_hello(fuzz_server, socket)
    tools = [t.value for t in ToolName]
    bodies = (
        not_json().map(lambda b: b if isinstance(b, bytes) else b.encode())
        | json_value.map(lambda v: json.dumps(v).encode())
        | st.builds(_smuggled_arguments, st.sampled_from(tools), st.sampled_from(SMUGGLED_FIELDS),
                    json_value | huge_string)
    )

    @FUZZ_SETTINGS
    @given(
        tool=st.sampled_from(tools) | st.text(max_size=30),
        target=st.just(session_id) | any_identifier,
        body=bodies,
        request_id=st.none() | any_identifier,
    )
    def one_call(tool: str, target: str, body: bytes, request_id: str | None) -> None:
        # A valid call to the live page would rightly run; everything else must not.
        assume(not (target == session_id and _valid_call(tool, body)))
        headers = {"content-type": "application/json"}
        # Only values the HTTP client will send: h11 refuses a header value with leading or
        # trailing whitespace (" " was generated) before anything reaches the server.
        if (
            request_id is not None
            and request_id.isascii()
            and request_id.isprintable()
            and request_id == request_id.strip()
        ):
            headers["x-request-id"] = request_id
        answer = client.post(
            f"/api/sessions/{quote(target, safe='')}/tools/{quote(tool, safe='')}",
            content=body,
            headers=headers,
        )
        if answer.status_code == 200:
            # Only arguments the protocol accepts for a real tool may reach the page, and
            # this page never answers, so a 200 cannot happen here.
            raise AssertionError((tool, target, body[:200], answer.text[:300]))
        assert answer.status_code in {400, 404, 405, 413}, answer.text[:300]
        if answer.status_code != 405:
            payload = answer.json()
            assert payload["success"] is False
            assert payload["error"]["code"] in {
                "invalid_request", "unknown_tool", "session_not_found", "message_too_large"
            }

    one_call()
    # Nothing reached the page: the first frame it gets now is the answer to its own ping.
    assert until_pong(socket, -2.0) == []


def _valid_call(tool: str, body: bytes) -> bool:
    try:
        args = json.loads(body) if body.strip() else {}
        build_request(tool, args, request_id="r", session_id="s")
    except (ValueError, UnicodeDecodeError, RecursionError, ArgumentError):
        return False
    return True


def _smuggled_arguments(tool: str, field: str, value: Any) -> bytes:
    valid_base = {"snapshotId": "s1", "elementId": "e1"}
    known = TOOL_ARGS[ToolName(tool)].model_fields
    args = {k: v for k, v in valid_base.items() if any(f.alias == k or n == _snake(k)
                                                       for n, f in known.items())}
    args[field] = value
    return json.dumps(args).encode()


def _snake(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in name)


def test_fuzz_server_config_is_the_production_one_but_for_the_flood_limit(
    fuzz_server: RunningServer, base_config: ServerConfig
) -> None:
    # Guard against the fuzz server drifting into testing something else than what ships.
    relaxed = {"inbound_rate_per_s", "inbound_burst", "max_message_bytes", "db_path",
               "sdk_dir", "demo_dir", "port", "response_grace_ms"}
    shipped = replace(base_config, port=fuzz_server.port)
    differs = {
        name for name in ServerConfig.__dataclass_fields__
        if getattr(shipped, name) != getattr(fuzz_server.config, name)
    }
    assert differs <= relaxed


# --------------------------------------------------------------------------- MCP (/mcp)

MCP_VERSION = "2025-11-25"
MCP_ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
# What an MCP answer may say about a tool call it refused (structuredContent.error.code).
MCP_REFUSAL_CODES = {"invalid_request", "unknown_tool", "session_not_found"}


def mcp_session(client: httpx.Client) -> dict[str, str]:
    """Initialize one MCP session over raw JSON-RPC; its headers for later requests."""
    answer = client.post("/mcp", headers=MCP_ACCEPT, json={
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": MCP_VERSION, "capabilities": {},
                   "clientInfo": {"name": "fuzz", "version": "0"}},
    })
    assert answer.status_code == 200, answer.text
    headers = {**MCP_ACCEPT, "mcp-session-id": answer.headers["mcp-session-id"],
               "mcp-protocol-version": MCP_VERSION}
    client.post("/mcp", headers=headers,
                json={"jsonrpc": "2.0", "method": "notifications/initialized"})
    return headers


def mcp_templates() -> list[Any]:
    """One valid JSON-RPC message of every kind an MCP client sends us (and a batch)."""
    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "page_fill",
                       "arguments": {"snapshotId": "s1", "elementId": "e1", "value": "x"}}}
    return [
        call,
        {"jsonrpc": "2.0", "id": 8, "method": "tools/list", "params": {}},
        {"jsonrpc": "2.0", "id": 9, "method": "ping"},
        {"jsonrpc": "2.0", "id": 10, "method": "initialize",
         "params": {"protocolVersion": MCP_VERSION, "capabilities": {},
                    "clientInfo": {"name": "fuzz", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}},
        {"jsonrpc": "2.0", "id": 11, "result": {}},
    ]


def _structured_mcp_answer(answer: httpx.Response) -> list[dict[str, Any]]:
    """The JSON-RPC messages of an answer; fails unless the answer is structured."""
    assert answer.status_code < 500, answer.text[:300]
    if answer.status_code == 202 and not answer.content:
        return []  # a notification or response was accepted; nothing to say
    payload = answer.json()
    messages = payload if isinstance(payload, list) else [payload]
    for message in messages:
        assert message["jsonrpc"] == "2.0"
        assert ("result" in message) != ("error" in message), message
        if "error" in message:
            assert isinstance(message["error"]["code"], int)
            assert isinstance(message["error"]["message"], str)
    return messages


def test_hostile_mcp_bodies_get_json_rpc_errors_and_never_reach_the_page(
    fuzz_server: RunningServer,
) -> None:
    with open_socket(fuzz_server) as socket, httpx.Client(
        base_url=fuzz_server.url, timeout=30
    ) as client:
        live = say_hello(fuzz_server, socket)
        session_headers = mcp_session(client)
        markers = iter(range(10**9))
        envelopes = st.sampled_from(mcp_templates()).flatmap(
            lambda t: st.one_of(damaged(t), damaged(t).flatmap(damaged))
        )
        bodies = st.one_of(
            not_json().map(lambda b: b if isinstance(b, bytes) else b.encode()),
            json_value.map(lambda v: json.dumps(v).encode()),
            envelopes.map(lambda m: json.dumps(m).encode()),
            st.lists(envelopes, min_size=1, max_size=3).map(lambda m: json.dumps(m).encode()),
            huge_string.map(
                lambda s: json.dumps({"jsonrpc": "2.0", "id": 1, "method": s}).encode()
            ),
        )
        header_sets = st.sampled_from([
            session_headers,
            MCP_ACCEPT,  # no session: only initialize may open one
            {**MCP_ACCEPT, "mcp-session-id": "not-a-session"},
            {**session_headers, "mcp-protocol-version": "1999-01-01"},
            {"content-type": "text/plain"},
        ])

        @FUZZ_SETTINGS
        @given(body=bodies, headers=header_sets)
        def one_body(body: bytes, headers: dict[str, str]) -> None:
            # A damaged envelope can still be a valid call (JSON-RPC tolerates extra members);
            # that one would rightly run. Everything else must not reach the page.
            assume(not _may_call_live_page(body, live))
            answer = client.post("/mcp", content=body, headers=headers)
            _structured_mcp_answer(answer)
            # Nothing acted on the page: a damaged tools/call either failed to parse or
            # was refused; the page's next frame is the answer to its own ping.
            assert until_pong(socket, float(next(markers))) == [], body[:200]

        one_body()
        # The MCP session and the server survived: a well-formed call still works.
        listed = client.post("/mcp", headers=session_headers, json={
            "jsonrpc": "2.0", "id": 99, "method": "tools/call",
            "params": {"name": "list_sessions", "arguments": {}},
        })
        assert listed.json()["result"]["structuredContent"]["sessions"]


def test_hostile_mcp_tool_arguments_are_refused_and_never_reach_the_page(
    fuzz_server: RunningServer,
) -> None:
    with open_socket(fuzz_server) as socket, httpx.Client(
        base_url=fuzz_server.url, timeout=30
    ) as client:
        live = say_hello(fuzz_server, socket)
        headers = mcp_session(client)
        page_tools = [t.value for t in ToolName]
        valid_calls = [
            ("page_fill", {"snapshotId": "s1", "elementId": "e1", "value": "x"}),
            ("page_scroll", {"direction": "down"}),
            ("page_wait", {"text": "Saved"}),
            ("page_observe", {}),
        ]
        names = st.sampled_from([*page_tools, "list_sessions", "select_session"]) | st.text(
            max_size=30
        )
        calls = st.one_of(
            st.tuples(names, json_value),  # arguments of any type, not only objects
            st.tuples(
                st.sampled_from(page_tools),
                st.builds(_smuggled_arguments, st.sampled_from(page_tools),
                          st.sampled_from(SMUGGLED_FIELDS), json_value | huge_string)
                .map(json.loads),
            ),
            st.sampled_from(valid_calls).flatmap(
                lambda c: st.tuples(st.just(c[0]), damaged(c[1]))
            ),
            # Valid arguments with the routing argument wrong-typed, malformed, unknown or
            # null: refused, never sent to the selected (or only) page instead.
            st.sampled_from(valid_calls).flatmap(
                lambda c: st.tuples(
                    st.just(c[0]),
                    st.builds(lambda target: {**c[1], "sessionId": target},
                              json_value | huge_string | any_identifier),
                )
            ),
            st.tuples(st.just("select_session"),
                      st.builds(lambda t: {"sessionId": t}, json_value | st.just(live))),
        )
        ids = itertools.count(1000)
        markers = iter(range(10**9))

        @FUZZ_SETTINGS
        @given(call=calls)
        def one_call(call: tuple[str, Any]) -> None:
            name, args = call
            # A valid call to the live page would rightly run; everything else must not.
            assume(not _valid_mcp_call(name, args, live))
            answer = client.post("/mcp", headers=headers, json={
                "jsonrpc": "2.0", "id": next(ids), "method": "tools/call",
                "params": {"name": name, "arguments": args},
            })
            (message,) = _structured_mcp_answer(answer)
            if "result" in message:
                result = message["result"]
                if name in ("list_sessions", "select_session") and not result.get("isError"):
                    assert set(result["structuredContent"]) <= {"sessions", "selected"}
                else:
                    assert result["isError"] is True, result
                    assert result["structuredContent"]["error"]["code"] in MCP_REFUSAL_CODES
            assert until_pong(socket, float(next(markers))) == [], (name, args)

        one_call()


def _may_call_live_page(body: bytes, live: str) -> bool:
    try:
        payload = json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return False
    messages = payload if isinstance(payload, list) else [payload]
    return any(
        isinstance(m, dict) and m.get("method") == "tools/call"
        and isinstance(m.get("params"), dict)
        and _valid_mcp_call(m["params"].get("name"), m["params"].get("arguments", {}), live)
        for m in messages
    )


def _valid_mcp_call(name: Any, args: Any, live: str) -> bool:
    if args is None:
        args = {}  # MCP: absent or null arguments are no arguments
    if not isinstance(name, str) or not isinstance(args, dict):
        return False
    if name not in {t.value for t in ToolName}:
        return False
    if "sessionId" in args and args["sessionId"] != live:
        return False
    rest = {k: v for k, v in args.items() if k != "sessionId"}
    return _valid_call(name, json.dumps(rest).encode())


def test_oversized_mcp_bodies_get_a_structured_413(fuzz_server: RunningServer) -> None:
    limit = fuzz_server.config.max_message_bytes
    oversized = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "page_fill", "arguments": {"value": "x" * limit}}}).encode()

    def chunks() -> Iterator[bytes]:  # no Content-Length: the limit must hold while streaming
        for start in range(0, len(oversized), 65536):
            yield oversized[start:start + 65536]

    with httpx.Client(base_url=fuzz_server.url, timeout=30) as client:
        headers = mcp_session(client)
        for content in (oversized, chunks()):
            answer = client.post("/mcp", headers=headers, content=content)
            assert answer.status_code == 413
            (message,) = _structured_mcp_answer(answer)
            assert message["error"]["data"]["code"] == "message_too_large"
