"""What every protocol module builds on: the version, the limits both ends enforce, the
stable error codes and tool names, and ``WireModel``, the base of every model."""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticSerializationError

from ..session.wire import PROTOCOL_VERSION as PROTOCOL_VERSION

# Limits shared by both ends; the backend enforces the message size before parsing.
MAX_MESSAGE_BYTES = 4 * 1024 * 1024
MAX_BATCH_ACTIONS = 50
MAX_VALUE_CHARS = 100_000
MAX_WAIT_MS = 30_000

_ID = r"^[A-Za-z0-9_.:\-]{1,80}$"
Identifier = Annotated[str, Field(pattern=_ID)]


class ErrorCode(StrEnum):
    """Stable error codes (SPEC A6). Agents and tests match on these, never on messages."""

    STALE_REF = "stale_ref"
    NOT_FOUND = "not_found"
    NOT_VISIBLE = "not_visible"
    NOT_ENABLED = "not_enabled"
    NOT_EDITABLE = "not_editable"
    NOT_STABLE = "not_stable"
    OBSCURED = "obscured"
    UNSUPPORTED = "unsupported"
    CROSS_ORIGIN_FRAME = "cross_origin_frame"
    CLOSED_SHADOW_ROOT = "closed_shadow_root"
    PERMISSION_DENIED = "permission_denied"
    USER_REJECTED = "user_rejected"
    CONFIRMATION_TIMEOUT = "confirmation_timeout"
    # The user is in control (SPEC U3): real input on the page paused the task, or
    # the user pressed Pause / Stop in the panel. Wait for the user; nothing was done.
    USER_TAKEOVER = "user_takeover"
    USER_STOPPED = "user_stopped"
    TIMEOUT = "timeout"
    CANCELLED = "cancelled"
    NAVIGATED = "navigated"
    VERIFICATION_FAILED = "verification_failed"
    # A batch stopped because the page changed under it (a modal opened, most of the elements
    # it was planned against went away): re-inspect before going on (SPEC A5).
    STRUCTURE_CHANGED = "structure_changed"
    INVALID_REQUEST = "invalid_request"
    SCREENSHOT_FAILED = "screenshot_failed"
    # A site tool's own code threw or rejected; the message is the page's (untrusted).
    SITE_TOOL_FAILED = "site_tool_failed"
    # Relay and session level.
    UNKNOWN_TOOL = "unknown_tool"
    SESSION_NOT_FOUND = "session_not_found"
    DISCONNECTED = "disconnected"
    UNAUTHORIZED = "unauthorized"
    ORIGIN_NOT_ALLOWED = "origin_not_allowed"
    PROTOCOL_MISMATCH = "protocol_mismatch"
    MESSAGE_TOO_LARGE = "message_too_large"
    RATE_LIMITED = "rate_limited"
    NOT_READY = "not_ready"
    # The page's runtime could not boot (a request that was waiting for it is answered so).
    STARTUP_FAILED = "startup_failed"
    # The page's runtime stopped (its worker died) while a call ran: it may have applied.
    RUNTIME_CRASHED = "runtime_crashed"
    INTERNAL_ERROR = "internal_error"
    # Cluster mode: the shared Redis (or the page's instance) cannot be reached; retry later.
    BACKEND_UNAVAILABLE = "backend_unavailable"


class ToolName(StrEnum):
    INSPECT = "page_inspect"
    SCREENSHOT = "page_screenshot"
    SCROLL = "page_scroll"
    FOCUS = "page_focus"
    FILL = "page_fill"
    SELECT = "page_select"
    CHECK = "page_check"
    UNCHECK = "page_uncheck"
    CLICK = "page_click"
    HOVER = "page_hover"
    DRAG = "page_drag"
    KEYBOARD = "page_keyboard"
    WAIT = "page_wait"
    OBSERVE = "page_observe"
    FIND = "page_find"
    EXTRACT = "page_extract"
    # A question to the user in the panel (SPEC U5): answered only by the user's own input.
    ASK_USER = "page_ask_user"


class WireModel(BaseModel):
    """Base of every protocol model: camelCase on the wire, unknown fields rejected."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        # Build validators on first use, not at import: in Pyodide, building every schema at
        # import holds the page's main thread during start-up (docs/performance.md).
        defer_build=True,
    )

    def to_wire(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)

    def to_json(self) -> str:
        """``to_wire`` as JSON text: how a message is sent. pydantic-core writes it in one pass,
        where dumping to Python objects and encoding those with ``json.dumps`` walks a
        whole-page snapshot twice (figures in docs/performance.md)."""
        try:
            return self.model_dump_json(exclude_none=True)
        except PydanticSerializationError:
            # Text holding a lone UTF-16 surrogate (a JavaScript string can) has no UTF-8
            # form; JSON's \u escapes carry it. Any other defect raises again in to_wire.
            return json.dumps(self.to_wire())


# A listed element as page_inspect returned it: its snapshot and its id in that snapshot.

ElementRef = Annotated[str, Field(pattern=_ID, description="Opaque elementId from page_inspect.")]
SnapshotRef = Annotated[
    str, Field(pattern=_ID, description="snapshotId of the page_inspect that returned the element.")
]


class ToolError(WireModel):
    code: ErrorCode
    message: str
    element_id: str | None = None
    details: dict[str, Any] | None = None


def describe_validation_error(error: ValidationError, limit: int = 5) -> str:
    """A short human message naming the offending fields, without echoing their values."""
    parts = []
    for item in error.errors()[:limit]:
        where = ".".join(str(p) for p in item.get("loc", ())) or "message"
        parts.append(f"{where}: {item.get('msg', 'invalid')}")
    more = error.error_count() - limit
    if more > 0:
        parts.append(f"... and {more} more")
    return "; ".join(parts)
