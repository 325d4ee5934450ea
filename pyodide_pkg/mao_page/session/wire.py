"""The connection-level frames the loader's JavaScript transport reads and writes itself.

The socket to the backend belongs to ``loader_js/transport.js`` (hello, welcome, heartbeat,
reconnect), so that a page registers its session before, or without, booting Python (SPEC
E6). What that transport may put in a frame and what it reads from one comes from here: the
asset build writes these names into the loader (``mao_page.dom.jstables``), and
``tests/page/test_protocol.py`` holds them equal to the pydantic models in
``mao_page.protocol.messages``, so the two ends cannot drift. Standard library only: the
build runs it outside Pyodide.
"""

from __future__ import annotations

PROTOCOL_VERSION = 1

# The frames the transport handles (the ``type`` of ``messages.Hello`` ...), by snake_case
# field; the JavaScript names are their camelCase aliases, as ``WireModel`` writes them.
HELLO = "hello"
WELCOME = "welcome"
PING = "ping"
PONG = "pong"
ERROR = "error"
PAGE_READY = "page_ready"
PAGE_TOOL_REQUEST = "page_tool_request"
PAGE_TOOL_RESULT = "page_tool_result"
SITE_CONTEXT = "site_context"

FRAME_FIELDS: dict[str, tuple[str, ...]] = {
    HELLO: (
        "type", "protocol_version", "token", "agent_id", "user", "page", "sdk_version",
        "resume_session_id", "resume_kind", "ready",
    ),
    WELCOME: ("type", "protocol_version", "session_id", "heartbeat_interval_ms", "resumed"),
    PING: ("type", "ts"),
    PONG: ("type", "ts", "page"),
    ERROR: ("type", "code", "message", "request_id"),
    PAGE_READY: ("type", "trigger", "boot_ms", "mode", "page"),
    # Written by the transport only to answer requests it holds when the runtime cannot boot.
    PAGE_TOOL_RESULT: ("type", "request_id", "success", "error"),
    # The page's site tools and instructions (docs/site-tools.md): written by the loader,
    # whose registry holds them before and without the runtime.
    SITE_CONTEXT: ("type", "tools", "instructions"),
}
USER_FIELDS = ("id", "name")
PAGE_FIELDS = ("url", "title")
ERROR_DETAIL_FIELDS = ("code", "message")

# What starts the runtime (``PageReady.trigger``); "eager" is ``init({boot: "eager"})``;
# "navigation" is a task that continues on this page after its own action loaded it.
BOOT_TRIGGERS = ("panel", "agent", "api", "eager", "navigation")
RUNTIME_MODES = ("main-thread", "worker")

# Refusals another attempt with the same credentials cannot fix: with a fixed token the
# transport stops; with a token function it tries again with a new token.
FINAL_REFUSALS = ("unauthorized", "origin_not_allowed", "protocol_mismatch")
STARTUP_FAILED = "startup_failed"
RUNTIME_CRASHED = "runtime_crashed"

# The close code the page sends when its document unloads (pagehide: a navigation, a reload,
# the tab closing). The backend answers the call in flight ``navigated`` and keeps the session
# for the tab's next document, which resumes it (SPEC B7).
CLOSE_NAVIGATING = 4002

# Connection timing (SPEC W4): no answer to hello within the handshake timeout is a failed
# attempt; a backend silent for SILENT_HEARTBEATS heartbeat intervals is dead; attempts back
# off exponentially with jitter up to the cap, and start again from the beginning after a
# welcome.
HANDSHAKE_TIMEOUT_MS = 10_000
SILENT_HEARTBEATS = 3
BACKOFF_INITIAL_MS = 500
BACKOFF_FACTOR = 2.0
BACKOFF_CAP_MS = 15_000
BACKOFF_JITTER = 0.3


def camel(name: str) -> str:
    """``resume_session_id`` -> ``resumeSessionId`` (pydantic's ``to_camel`` for our names)."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)
