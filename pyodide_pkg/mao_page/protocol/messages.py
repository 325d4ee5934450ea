"""The frames on ``/ws/sdk`` (SPEC W1-W4), the panel chat (SPEC B3, U1) and the audit
records (SPEC P6), and how each end parses what it receives."""

from __future__ import annotations

from enum import StrEnum
from functools import cache
from typing import Annotated, Any, Literal, Union

from pydantic import Field, TypeAdapter, model_validator

from .actions import (
    ELEMENT_ACTIONS,
    TOOL_ACTION,
    WRITE_ACTIONS,
    AskOptions,
    ExtractOptions,
    FindOptions,
    InspectOptions,
    PageAction,
    ScreenshotOptions,
)
from .common import (
    MAX_BATCH_ACTIONS,
    PROTOCOL_VERSION,
    ErrorCode,
    Identifier,
    SnapshotRef,
    ToolError,
    ToolName,
    WireModel,
)
from .sitetools import SiteContext, SiteTool, SiteToolCall


class UserIdentity(WireModel):
    id: Annotated[str, Field(min_length=1, max_length=200)]
    name: Annotated[str, Field(max_length=200)] | None = None


class PageInfo(WireModel):
    url: Annotated[str, Field(max_length=8192)]
    title: Annotated[str, Field(max_length=2000)] = ""


class Hello(WireModel):
    type: Literal["hello"] = "hello"
    protocol_version: int
    token: Annotated[str, Field(min_length=1, max_length=4096)]
    agent_id: Annotated[str, Field(min_length=1, max_length=200)]
    user: UserIdentity
    page: PageInfo
    sdk_version: Annotated[str, Field(max_length=40)] = ""
    resume_session_id: Identifier | None = None
    # Why the page asks for ``resume_session_id`` (SPEC B7): "reconnect" (the default) is the
    # same document whose connection dropped; "navigation" is the next document of the same
    # tab (the loader keeps the id in sessionStorage). A navigation never takes over a session
    # another live connection holds: that is a duplicated tab, which gets a new session.
    resume_kind: Literal["reconnect", "navigation"] | None = None
    # False while the page's Python runtime has not booted (SPEC E6: it boots on first use);
    # the page sends ``page_ready`` when it has. A hello without it is from a booted page.
    ready: bool = True


class PageReady(WireModel):
    """Page -> backend: the runtime booted (SPEC E6), what started it and how long it took.
    From then on the session is ready; a reconnect's hello says so itself."""

    type: Literal["page_ready"] = "page_ready"
    trigger: Literal["panel", "agent", "api", "eager", "navigation"]
    boot_ms: Annotated[float, Field(ge=0, le=3_600_000)]
    mode: Literal["main-thread", "worker"] = "main-thread"
    page: PageInfo | None = None


class Welcome(WireModel):
    type: Literal["welcome"] = "welcome"
    protocol_version: int = PROTOCOL_VERSION
    session_id: Identifier
    heartbeat_interval_ms: int
    resumed: bool = False


class ErrorMessage(WireModel):
    """Sent by the backend before closing a connection it refuses (bad hello, bad frame)."""

    type: Literal["error"] = "error"
    code: ErrorCode
    message: str
    request_id: str | None = None


class Ping(WireModel):
    type: Literal["ping"] = "ping"
    ts: float


class Pong(WireModel):
    type: Literal["pong"] = "pong"
    ts: float
    page: PageInfo | None = None


class PageToolRequest(WireModel):
    type: Literal["page_tool_request"] = "page_tool_request"
    request_id: Identifier
    session_id: Identifier
    tool: ToolName | SiteTool
    snapshot_id: SnapshotRef | None = None
    actions: Annotated[list[PageAction], Field(max_length=MAX_BATCH_ACTIONS)] | None = None
    inspect: InspectOptions | None = None
    screenshot: ScreenshotOptions | None = None
    extract: ExtractOptions | None = None
    find: FindOptions | None = None
    site_tool: SiteToolCall | None = None
    ask: AskOptions | None = None
    require_confirmation: bool = False
    timeout_ms: Annotated[int, Field(ge=100, le=120_000)] = 30_000

    @model_validator(mode="after")
    def _shape_matches_tool(self) -> PageToolRequest:
        if self.tool is SiteTool.RUN:
            if self.site_tool is None:
                raise ValueError("site_tool needs the tool's name and arguments")
            others = (self.actions, self.inspect, self.screenshot, self.extract, self.find)
            if any(value is not None for value in others):
                raise ValueError("site_tool takes the site tool call only")
            return self
        if self.site_tool is not None:
            raise ValueError(f"{self.tool} takes no site tool call")
        if self.tool in TOOL_ACTION:
            if not self.actions:
                raise ValueError(f"{self.tool} needs at least one action")
            if self.inspect is not None or self.screenshot is not None:
                raise ValueError(f"{self.tool} takes actions only")
            for index, action in enumerate(self.actions):
                if action.action in ELEMENT_ACTIONS and not (
                    action.snapshot_id or self.snapshot_id
                ):
                    raise ValueError(f"actions[{index}] ({action.action}) needs a snapshotId")
        else:
            if self.actions is not None:
                raise ValueError(f"{self.tool} takes no actions")
            if self.tool is ToolName.INSPECT and self.screenshot is not None:
                raise ValueError("page_inspect takes inspect options only")
            if self.tool is ToolName.SCREENSHOT and self.inspect is not None:
                raise ValueError("page_screenshot takes screenshot options only")
            given = {
                "inspect": self.inspect,
                "screenshot": self.screenshot,
                "extract": self.extract,
                "find": self.find,
                "ask": self.ask,
            }
            own = {ToolName.INSPECT: "inspect", ToolName.SCREENSHOT: "screenshot",
                   ToolName.EXTRACT: "extract", ToolName.FIND: "find",
                   ToolName.ASK_USER: "ask"}.get(self.tool)
            for name, value in given.items():
                if value is not None and name != own:
                    raise ValueError(f"{self.tool} takes no {name} options")
            if self.tool is ToolName.FIND and self.find is None:
                raise ValueError("page_find needs a query")
            if self.tool is ToolName.ASK_USER and self.ask is None:
                raise ValueError("page_ask_user needs a question")
        return self

    @property
    def is_write(self) -> bool:
        # A site tool may change anything; what it did is the page's to say (SPEC W3).
        if self.tool is SiteTool.RUN:
            return True
        return any(action.action in WRITE_ACTIONS for action in self.actions or ())


class PageToolResult(WireModel):
    type: Literal["page_tool_result"] = "page_tool_result"
    request_id: Identifier
    success: bool
    page_version: str = ""
    snapshot_id: str | None = None
    result: dict[str, Any] | None = None
    stopped_at: int | None = None
    error: ToolError | None = None


class Cancel(WireModel):
    type: Literal["cancel"] = "cancel"
    request_id: Identifier
    session_id: Identifier
    reason: Annotated[str, Field(max_length=500)] = ""


# Panel chat (SPEC B3, U1, U5). Additive to protocol version 1: a backend or SDK that
# does not know these messages answers them with ``invalid_request``, nothing else changes.
#
# The user types in the SDK panel; the page sends ``chat_message``. The backend's agent loop
# answers with ``chat_event``s: ``assistant_delta`` (the model's answer as it streams in, in
# pieces to append), ``assistant_text`` (the whole of one model step's answer, which replaces
# the pieces), ``tool_step`` (a page tool it started or finished, through the same relay as
# any other agent), ``error``, ``not_configured`` (the operator set no model), and always one
# final ``done`` per message. Page results reach the model as tool messages, never as user
# messages (SPEC B3).
#
# The conversation is the backend's, per user + origin + agent (SPEC U5, B7): the page asks
# for it with ``chat_control {action: "history"}`` (when the panel first runs) and gets
# ``chat_history``; ``new`` starts a new conversation, ``delete`` deletes the user's stored
# conversations, ``stop`` ends the running answer (the panel's Stop). Each is answered with
# the ``chat_history`` now current (empty after ``new`` and ``delete``), except ``stop``,
# whose answer is the running turn's ``done``.

MAX_CHAT_CHARS = 8000
# The newest entries a ``chat_history`` carries, and the longest text of one.
MAX_HISTORY_ENTRIES = 200
MAX_HISTORY_TEXT = 16_000


class ChatMessage(WireModel):
    """Page -> backend: one message the user typed in the panel."""

    type: Literal["chat_message"] = "chat_message"
    text: Annotated[str, Field(min_length=1, max_length=MAX_CHAT_CHARS)]
    message_id: Identifier | None = None


class ChatAction(StrEnum):
    HISTORY = "history"
    NEW = "new"
    DELETE = "delete"
    STOP = "stop"


class ChatControl(WireModel):
    """Page -> backend: the user's say over the conversation (history, new, delete, stop)."""

    type: Literal["chat_control"] = "chat_control"
    action: ChatAction


class ChatEventKind(StrEnum):
    ASSISTANT_DELTA = "assistant_delta"
    ASSISTANT_TEXT = "assistant_text"
    TOOL_STEP = "tool_step"
    ERROR = "error"
    DONE = "done"
    NOT_CONFIGURED = "not_configured"


class ChatEvent(WireModel):
    """Backend -> page: what the agent says and does while answering one ``chat_message``."""

    type: Literal["chat_event"] = "chat_event"
    kind: ChatEventKind
    message_id: Identifier | None = None
    text: str = ""
    # assistant_delta / assistant_text: which model step of the turn the text belongs to
    # (one answer bubble per step; tool steps come between them).
    step: Annotated[int, Field(ge=0, le=1000)] | None = None
    # tool_step only: the tool, "started" or "finished", and for finished its outcome.
    tool: Annotated[str, Field(max_length=80)] | None = None
    phase: Literal["started", "finished"] | None = None
    success: bool | None = None
    code: Annotated[str, Field(max_length=80)] | None = None


class ChatHistoryEntry(WireModel):
    """One line of a stored conversation as the panel shows it: what the user wrote, what the
    assistant answered, and the tool steps between them (the task log)."""

    role: Literal["user", "assistant", "tool", "system"]
    text: Annotated[str, Field(max_length=MAX_HISTORY_TEXT)] = ""
    tool: Annotated[str, Field(max_length=80)] | None = None
    success: bool | None = None
    code: Annotated[str, Field(max_length=80)] | None = None
    at_ms: float | None = None


class ChatHistory(WireModel):
    """Backend -> page: the conversation of this user, origin and agent, oldest first."""

    type: Literal["chat_history"] = "chat_history"
    action: ChatAction
    conversation_id: Identifier | None = None
    entries: Annotated[list[ChatHistoryEntry], Field(max_length=MAX_HISTORY_ENTRIES)] = []
    # A turn is still running on the backend (answered on another page of the same tab, or
    # in another tab): its events will follow.
    busy: bool = False


# Audit (SPEC P6). Additive to protocol version 1, page -> backend only.
#
# The authorization center reports grants, revocations, level changes, confirmations,
# takeovers, stops and every action step, for the backend's audit log. The same records go
# to the page's SDK events (``MaoChat.on("audit", ...)``). They never carry a value typed
# into the page or a token: only the action, the target's label and the outcome.


class AuditKind(StrEnum):
    GRANT = "grant"
    REVOKE = "revoke"
    LEVEL_CHANGE = "level_change"
    CONFIRMATION = "confirmation"
    ACTION = "action"
    TAKEOVER = "takeover"
    STOP = "stop"
    RESUME = "resume"


class PageAuditEvent(WireModel):
    """Page -> backend: one record of the authorization center (``audit_event``). Not the
    backend's ``mao_embed.audit.AuditEvent``, which names the kind of a record in its log;
    the backend files these under ``page_authorization`` / ``page_action``."""

    type: Literal["audit_event"] = "audit_event"
    kind: AuditKind
    level: Literal["per_action", "task", "full"]
    previous_level: Literal["per_action", "task", "full"] | None = None
    reason: Annotated[str, Field(max_length=40)] | None = None
    request_id: Identifier | None = None
    action: Annotated[str, Field(max_length=40)] | None = None
    target: Annotated[str, Field(max_length=200)] | None = None
    risk: Literal["low", "high"] | None = None
    risk_reasons: (
        Annotated[list[Annotated[str, Field(max_length=40)]], Field(max_length=8)] | None
    ) = None
    # confirmation: allowed_once / allowed_for_task / denied / timeout / withdrawn
    decision: Annotated[str, Field(max_length=40)] | None = None
    # action: "ok" or the error code
    outcome: Annotated[str, Field(max_length=80)] | None = None
    duration_ms: float | None = None
    at_ms: float


ClientMessage = Annotated[
    Union[
        Hello,
        PageToolResult,
        Ping,
        Pong,
        ChatMessage,
        ChatControl,
        PageAuditEvent,
        PageReady,
        SiteContext,
    ],
    Field(discriminator="type"),
]
ServerMessage = Annotated[
    Union[Welcome, PageToolRequest, Cancel, Ping, Pong, ErrorMessage, ChatEvent, ChatHistory],
    Field(discriminator="type"),
]


@cache
def client_message_adapter() -> TypeAdapter[Any]:
    return TypeAdapter(ClientMessage)


@cache
def server_message_adapter() -> TypeAdapter[Any]:
    return TypeAdapter(ServerMessage)


def parse_client_message(raw: str | bytes) -> Any:
    """Parse one frame received by the backend; raises ValidationError on any defect."""
    return client_message_adapter().validate_json(raw)


def parse_server_message(raw: str | bytes) -> Any:
    """Parse one frame received by the SDK; raises ValidationError on any defect."""
    return server_message_adapter().validate_json(raw)
