"""The Mao Embed wire protocol, defined once for both ends (SPEC W1; docs/protocol.md).

This module is imported by the browser package running in Pyodide and by the CPython
backend, so it must never import ``js`` or ``pyodide``. Every model forbids unknown
fields: an agent cannot smuggle a ``selector``, ``script`` or ``xpath`` through it
(SPEC W1, S5, N). Field names on the wire are camelCase; Python code may use either.

Connection lifecycle (one WebSocket per page, ``/ws/sdk``):

1. The SDK opens the socket (no credentials in the URL) and sends ``hello`` with the
   token, protocol version and page identity as its first message (SPEC B5).
2. The backend answers ``welcome`` (session id, heartbeat interval) or ``error`` and closes.
3. The backend sends ``page_tool_request`` / ``cancel``; the SDK answers each request with
   exactly one ``page_tool_result`` (SPEC W2, W3).
4. The backend sends ``ping`` every ``heartbeatIntervalMs``; the SDK answers ``pong`` with the
   current URL and title. Either side treats a silent peer as dead (SPEC W4).
5. The SDK never sends anything unasked beyond ``hello`` and ``pong`` (SPEC W4), and
   ``chat_message`` when the user types in the panel (see "Panel chat" below) and
   ``audit_event`` records of the user's authorization decisions and the actions run (see
   "Audit" below; never page content, so W4 holds).
"""

from __future__ import annotations

import json
from enum import StrEnum
from functools import cache
from typing import Annotated, Any, Literal, Union

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticSerializationError

PROTOCOL_VERSION = 1

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
    KEYBOARD = "page_keyboard"
    WAIT = "page_wait"
    OBSERVE = "page_observe"
    FIND = "page_find"
    EXTRACT = "page_extract"


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


# ---------------------------------------------------------------------------
# Actions (SPEC A1), a discriminated union on ``action``.
# ---------------------------------------------------------------------------

ElementRef = Annotated[str, Field(pattern=_ID, description="Opaque elementId from page_inspect.")]
SnapshotRef = Annotated[
    str, Field(pattern=_ID, description="snapshotId of the page_inspect that returned the element.")
]


class _ElementAction(WireModel):
    snapshot_id: SnapshotRef | None = None
    element_id: ElementRef


class ScrollAction(WireModel):
    action: Literal["scroll"] = "scroll"
    snapshot_id: SnapshotRef | None = None
    element_id: ElementRef | None = Field(
        default=None, description="Scrollable container, or an element to scroll into view."
    )
    direction: Literal["up", "down", "left", "right"] = "down"
    amount: Literal["page", "end"] | Annotated[int, Field(ge=1, le=100_000)] = "page"


class FocusAction(_ElementAction):
    action: Literal["focus"] = "focus"


class FillAction(_ElementAction):
    action: Literal["fill"] = "fill"
    value: Annotated[str, Field(max_length=MAX_VALUE_CHARS)]


class SelectAction(_ElementAction):
    action: Literal["select"] = "select"
    values: Annotated[
        list[Annotated[str, Field(max_length=1000)]], Field(min_length=1, max_length=200)
    ]


class CheckAction(_ElementAction):
    action: Literal["check"] = "check"


class UncheckAction(_ElementAction):
    action: Literal["uncheck"] = "uncheck"


class ClickAction(_ElementAction):
    action: Literal["click"] = "click"


class HoverAction(_ElementAction):
    action: Literal["hover"] = "hover"


class KeyboardAction(WireModel):
    action: Literal["keyboard"] = "keyboard"
    snapshot_id: SnapshotRef | None = None
    element_id: ElementRef | None = None
    text: Annotated[str, Field(max_length=MAX_VALUE_CHARS)] | None = None
    key: Annotated[str, Field(pattern=r"^[A-Za-z0-9+_ ]{1,40}$")] | None = None

    @model_validator(mode="after")
    def _one_of_text_or_key(self) -> KeyboardAction:
        if (self.text is None) == (self.key is None):
            raise ValueError("give exactly one of 'text' or 'key'")
        return self


class WaitAction(WireModel):
    action: Literal["wait"] = "wait"
    text: Annotated[str, Field(min_length=1, max_length=1000)] | None = None
    text_gone: Annotated[str, Field(min_length=1, max_length=1000)] | None = None
    time_ms: Annotated[int, Field(ge=0, le=MAX_WAIT_MS)] | None = None
    timeout_ms: Annotated[int, Field(ge=0, le=MAX_WAIT_MS)] = 10_000

    @model_validator(mode="after")
    def _one_condition(self) -> WaitAction:
        given = [v for v in (self.text, self.text_gone, self.time_ms) if v is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of 'text', 'textGone' or 'timeMs'")
        return self


class ObserveAction(WireModel):
    action: Literal["observe"] = "observe"


PageAction = Annotated[
    Union[
        ScrollAction,
        FocusAction,
        FillAction,
        SelectAction,
        CheckAction,
        UncheckAction,
        ClickAction,
        HoverAction,
        KeyboardAction,
        WaitAction,
        ObserveAction,
    ],
    Field(discriminator="action"),
]

ELEMENT_ACTIONS = frozenset({"focus", "fill", "select", "check", "uncheck", "click", "hover"})
# Actions that may change the page: a dropped connection after dispatch means "may have
# applied", and they are never replayed (SPEC W3).
WRITE_ACTIONS = frozenset({"fill", "select", "check", "uncheck", "click", "hover", "keyboard", "scroll"})

TOOL_ACTION: dict[ToolName, str] = {
    ToolName.SCROLL: "scroll",
    ToolName.FOCUS: "focus",
    ToolName.FILL: "fill",
    ToolName.SELECT: "select",
    ToolName.CHECK: "check",
    ToolName.UNCHECK: "uncheck",
    ToolName.CLICK: "click",
    ToolName.HOVER: "hover",
    ToolName.KEYBOARD: "keyboard",
    ToolName.WAIT: "wait",
    ToolName.OBSERVE: "observe",
}


# ---------------------------------------------------------------------------
# Read tool options.
# ---------------------------------------------------------------------------


class InspectOptions(WireModel):
    include_offscreen: bool = Field(
        default=False, description="Also list interactive elements outside the viewport."
    )
    max_tokens: Annotated[int, Field(ge=200, le=50_000)] = Field(
        default=3000, description="Token budget of the text rendering."
    )
    format: Literal["json", "text"] = Field(
        default="json", description="'text' adds the compact one-line-per-element rendering."
    )
    mask_sensitive: bool = Field(
        default=True,
        description="false asks for the values of sensitive fields (passwords, one-time codes, card "
        "data); they are released only under the user's 'task' or 'full' authorization level, "
        "never for fields the page owner marks private. The snapshot's sensitiveValues says "
        "whether they were.",
    )


class ScreenshotOptions(WireModel):
    format: Literal["webp", "jpeg", "png"] = "webp"
    max_width: Annotated[int, Field(ge=64, le=4096)] = 1280
    mask_sensitive: bool = True
    annotate: bool = False


# The read tools (SPEC T1, T2): page text as Markdown, and text search with refs.
# A cap so one extract stays a bounded message and a bounded share of a model's context.
MAX_EXTRACT_CHARS = 200_000  # the whole page's Markdown never exceeds this


class _ReadScope(WireModel):
    snapshot_id: SnapshotRef | None = None
    element_id: ElementRef | None = Field(
        default=None, description="Read only this listed element's subtree (default: the whole page)."
    )

    @model_validator(mode="after")
    def _ref_needs_snapshot(self) -> _ReadScope:
        if self.element_id is not None and self.snapshot_id is None:
            raise ValueError("elementId needs the snapshotId of the page_inspect that listed it")
        return self


class ExtractOptions(_ReadScope):
    from_char: Annotated[int, Field(ge=0, le=MAX_EXTRACT_CHARS)] = Field(
        default=0, description="Where this part starts: 0, or the nextFromChar of the previous part."
    )
    max_chars: Annotated[int, Field(ge=500, le=50_000)] = Field(
        default=8000, description="Longest part returned; parts end at a block boundary."
    )


class FindOptions(_ReadScope):
    query: Annotated[str, Field(min_length=1, max_length=1000)] = Field(
        description="Text to find, case-insensitive; with regex: true a JavaScript regular expression."
    )
    regex: bool = Field(default=False, description="Treat query as a regular expression (time-limited).")
    max_results: Annotated[int, Field(ge=1, le=200)] = Field(default=20, description="Most hits returned.")


# ---------------------------------------------------------------------------
# Messages.
# ---------------------------------------------------------------------------


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
    tool: ToolName
    snapshot_id: SnapshotRef | None = None
    actions: Annotated[list[PageAction], Field(max_length=MAX_BATCH_ACTIONS)] | None = None
    inspect: InspectOptions | None = None
    screenshot: ScreenshotOptions | None = None
    extract: ExtractOptions | None = None
    find: FindOptions | None = None
    require_confirmation: bool = False
    timeout_ms: Annotated[int, Field(ge=100, le=120_000)] = 30_000

    @model_validator(mode="after")
    def _shape_matches_tool(self) -> PageToolRequest:
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
            given = {"inspect": self.inspect, "screenshot": self.screenshot, "extract": self.extract,
                     "find": self.find}
            own = {ToolName.INSPECT: "inspect", ToolName.SCREENSHOT: "screenshot",
                   ToolName.EXTRACT: "extract", ToolName.FIND: "find"}.get(self.tool)
            for name, value in given.items():
                if value is not None and name != own:
                    raise ValueError(f"{self.tool} takes no {name} options")
            if self.tool is ToolName.FIND and self.find is None:
                raise ValueError("page_find needs a query")
        return self

    @property
    def is_write(self) -> bool:
        return any(action.action in WRITE_ACTIONS for action in self.actions or ())


class ToolError(WireModel):
    code: ErrorCode
    message: str
    element_id: str | None = None
    details: dict[str, Any] | None = None


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


# ---------------------------------------------------------------------------
# Panel chat (SPEC B3, U1). Additive to protocol version 1: a backend or SDK that
# does not know these messages answers them with ``invalid_request``, nothing else changes.
#
# The user types in the SDK panel; the page sends ``chat_message``. The backend's agent loop
# answers with ``chat_event``s: ``assistant_text`` (what the model says), ``tool_step`` (a
# page tool it started or finished, through the same relay as any other agent), ``error``,
# ``not_configured`` (the operator set no model), and always one final ``done`` per message.
# Page results reach the model as tool messages, never as user messages (SPEC B3).
# ---------------------------------------------------------------------------

MAX_CHAT_CHARS = 8000


class ChatMessage(WireModel):
    """Page -> backend: one message the user typed in the panel."""

    type: Literal["chat_message"] = "chat_message"
    text: Annotated[str, Field(min_length=1, max_length=MAX_CHAT_CHARS)]
    message_id: Identifier | None = None


class ChatEventKind(StrEnum):
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
    # tool_step only: the tool, "started" or "finished", and for finished its outcome.
    tool: Annotated[str, Field(max_length=80)] | None = None
    phase: Literal["started", "finished"] | None = None
    success: bool | None = None
    code: Annotated[str, Field(max_length=80)] | None = None


# ---------------------------------------------------------------------------
# Audit (SPEC P6). Additive to protocol version 1, page -> backend only.
#
# The authorization center reports grants, revocations, level changes, confirmations,
# takeovers, stops and every action step, for the backend's audit log. The same records go
# to the page's SDK events (``MaoChat.on("audit", ...)``). They never carry a value typed
# into the page or a token: only the action, the target's label and the outcome.
# ---------------------------------------------------------------------------


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
    risk_reasons: Annotated[list[Annotated[str, Field(max_length=40)]], Field(max_length=8)] | None = None
    # confirmation: allowed_once / allowed_for_task / denied / timeout / withdrawn
    decision: Annotated[str, Field(max_length=40)] | None = None
    # action: "ok" or the error code
    outcome: Annotated[str, Field(max_length=80)] | None = None
    duration_ms: float | None = None
    at_ms: float


ClientMessage = Annotated[
    Union[Hello, PageToolResult, Ping, Pong, ChatMessage, PageAuditEvent], Field(discriminator="type")
]
ServerMessage = Annotated[
    Union[Welcome, PageToolRequest, Cancel, Ping, Pong, ErrorMessage, ChatEvent],
    Field(discriminator="type"),
]



@cache
def client_message_adapter() -> TypeAdapter[Any]:
    return TypeAdapter(ClientMessage)


@cache
def server_message_adapter() -> TypeAdapter[Any]:
    return TypeAdapter(ServerMessage)


@cache
def action_adapter() -> TypeAdapter[Any]:
    return TypeAdapter(PageAction)


# ---------------------------------------------------------------------------
# Results (SPEC S2, A4).
# ---------------------------------------------------------------------------


class Rect(WireModel):
    x: float
    y: float
    width: float
    height: float


class Viewport(WireModel):
    width: float
    height: float
    scroll_x: float
    scroll_y: float
    device_pixel_ratio: float = 1.0


class PageOption(WireModel):
    value: str
    label: str
    selected: bool = False
    disabled: bool = False


class FormOwner(WireModel):
    form_id: str = ""
    form_name: str = ""
    action: str = ""
    method: str = ""


ElementKind = Literal["button", "form-control", "link", "other", "opaque"]
# A placeholder for content the SDK cannot read (SPEC S6); actions on it fail with this code.
OpaqueReason = Literal["cross_origin_frame", "closed_shadow_root"]
# Where a label came from when the element has no accessible name (SPEC S3 fallbacks): its
# own text, the label text of its field container, the name of the one field inside it, or
# its place as a spin button's increase / decrease button.
NameFrom = Literal["text", "nearby", "inner", "stepper"]


class PageElement(WireModel):
    element_id: str
    kind: ElementKind
    role: str
    type: str = ""
    label: str = ""
    text: str = ""
    value: str | bool | list[str] | None = None
    options: list[PageOption] = Field(default_factory=list)
    visible: bool = True
    in_viewport: bool = True
    disabled: bool = False
    readonly: bool = False
    required: bool = False
    rect: Rect
    checked: bool | Literal["mixed"] | None = None
    selected: bool | None = None
    expanded: bool | None = None
    placeholder: str | None = None
    href: str | None = None
    sensitive: bool = False
    form: FormOwner | None = None
    frame: str = Field(default="main", description="Which document the element lives in.")
    invalid: bool = False
    pressed: bool | Literal["mixed"] | None = None
    description: str = ""
    opaque: OpaqueReason | None = Field(
        default=None, description="Set on placeholders (kind 'opaque'): why the content cannot be read."
    )
    name_from: NameFrom | None = Field(
        default=None,
        description="Set when the element has no accessible name and its label was taken from elsewhere: its text, "
        "text beside it ('nearby'), the one field inside it ('inner'), or its place as a stepper; such an element "
        "is not found by its role and this label in accessibility tools.",
    )
    new: bool | None = Field(
        default=None,
        description="True when the element was not on screen at the previous snapshot (what the last action "
        "opened: a popup, a menu, a suggestion list); absent otherwise.",
    )


class PageSnapshot(WireModel):
    snapshot_id: str
    page_version: str
    url: str
    title: str
    viewport: Viewport
    elements: list[PageElement]
    text: str | None = None
    truncated: int = 0
    # SPEC P5: "masked" unless the agent asked (maskSensitive: false) and the authorization
    # level released them; page-owner private fields are withheld either way.
    sensitive_values: Literal["masked", "released"] = "masked"


class PageChanges(WireModel):
    """What changed since a reference point: what an action's result reports (SPEC A4)."""

    url: str
    title: str
    page_version: str
    url_changed: bool = False
    title_changed: bool = False
    page_version_changed: bool = False
    navigated: bool = False
    mutations: int = 0
    messages: list[str] = Field(default_factory=list)
    # Interactive elements compared with the reference point (by role, label, tag, type;
    # "updated" = same element, different value or state).
    added: int = 0
    removed: int = 0
    updated: int = 0
    dialogs: list[PageDialog] = Field(default_factory=list)


class PageDialog(WireModel):
    """A page alert/confirm/prompt raised during an action, answered by the SDK (SPEC A6)."""

    type: Literal["alert", "confirm", "prompt"]
    message: str
    answered: str


class StepResult(WireModel):
    index: int
    action: str
    element_id: str | None = None
    success: bool
    duration_ms: float = 0.0
    target_label: str = ""
    outcome: dict[str, Any] | None = None
    error: ToolError | None = None


class ActionBatchResult(WireModel):
    steps: list[StepResult]
    changes: PageChanges


# page_screenshot's result (it travels in PageToolResult.result, like PageSnapshot).

MaskReason = Literal["sensitive", "private", "not_collectable"]
UnrenderedKind = Literal[
    "cross_origin_frame", "frame_too_deep", "cross_origin_image", "tainted_canvas",
    "cross_origin_video", "plugin_content",
]

class MaskedRegion(WireModel):
    rect: Rect
    reason: MaskReason


class UnrenderedRegion(WireModel):
    rect: Rect
    kind: UnrenderedKind


class Annotation(WireModel):
    element_id: str
    rect: Rect


class ScreenshotResult(WireModel):
    format: Literal["webp", "jpeg", "png"]
    mime_type: str
    data: str  # base64, no data: prefix
    bytes: int
    width: int  # image pixels
    height: int
    scale: float  # image pixels per CSS pixel
    quality: float | None = None
    viewport: Viewport  # CSS size, scroll position and device pixel ratio at capture
    covers: Rect  # the page rectangle shown, in page CSS pixels
    masked_regions: list[MaskedRegion]
    unrendered_regions: list[UnrenderedRegion]
    annotations: list[Annotation] | None = None
    warnings: list[str]
    scan_ms: float  # choosing the masks (the snapshot engine's scan)
    render_ms: float  # the library render, masks and labels, in JS
    encode_ms: float  # encoding, all attempts of the byte-cap ladder
    duration_ms: float  # the whole tool call in the page


# page_extract's and page_find's results (they travel in PageToolResult.result).


class ExtractResult(WireModel):
    url: str
    title: str
    markdown: str
    from_char: int
    total_chars: int  # of the whole Markdown, at most MAX_EXTRACT_CHARS
    next_from_char: int | None = None  # where the next part starts; absent on the last part
    # The page held more text than MAX_EXTRACT_CHARS: the Markdown stops before the rest.
    truncated: bool = False


class FindHit(WireModel):
    text: str  # the matched text
    context: str  # the match with some text either side, on one line
    element_id: str | None = None  # the nearest listed element, a ref in the result's snapshot
    role: str | None = None  # that element's role and label, so the agent can tell it apart
    label: str | None = None


class FindResult(WireModel):
    snapshot_id: str  # the fresh snapshot the hits' elementIds belong to
    url: str
    title: str
    hits: list[FindHit]
    total: int  # all matches in the scope; hits holds the first maxResults of them


def parse_client_message(raw: str | bytes) -> Any:
    """Parse one frame received by the backend; raises ValidationError on any defect."""
    return client_message_adapter().validate_json(raw)


def parse_server_message(raw: str | bytes) -> Any:
    """Parse one frame received by the SDK; raises ValidationError on any defect."""
    return server_message_adapter().validate_json(raw)


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


# ---------------------------------------------------------------------------
# Tool arguments as agents send them (docs/protocol.md "Tools and actions"). Each action tool takes
# either that action's fields or an ordered ``actions`` batch. The argument models and
# their JSON Schemas are derived from the action models above, never written by hand.
# ---------------------------------------------------------------------------


class InspectArgs(InspectOptions):
    pass


class ScreenshotArgs(ScreenshotOptions):
    pass


class ExtractArgs(ExtractOptions):
    pass


class FindArgs(FindOptions):
    pass


_ACTION_MODELS: dict[str, type[WireModel]] = {
    "scroll": ScrollAction,
    "focus": FocusAction,
    "fill": FillAction,
    "select": SelectAction,
    "check": CheckAction,
    "uncheck": UncheckAction,
    "click": ClickAction,
    "hover": HoverAction,
    "keyboard": KeyboardAction,
    "wait": WaitAction,
    "observe": ObserveAction,
}


def _make_action_args_model(tool: ToolName) -> type[WireModel]:
    from pydantic import create_model

    action_model = _ACTION_MODELS[TOOL_ACTION[tool]]
    fields: dict[str, Any] = {}
    for name, info in action_model.model_fields.items():
        if name == "action":
            continue
        # Single-form fields are optional here because a batch replaces them; the single
        # form is validated against the action model itself in ``build_request``. Pydantic
        # moves a field's constraints (pattern, lengths, ranges) from the annotation into
        # ``info.metadata``; put them back so the agents' JSON Schema states them too.
        annotation = Annotated[(info.annotation, *info.metadata)] if info.metadata else info.annotation
        fields[name] = (annotation | None, Field(default=None, description=info.description))
    fields["actions"] = (
        Annotated[list[PageAction], Field(min_length=1, max_length=MAX_BATCH_ACTIONS)] | None,
        Field(
            default=None,
            description="Ordered batch; each item has 'action' plus that action's fields. "
            "Replaces the single-action fields.",
        ),
    )
    return create_model(  # type: ignore[call-overload]
        f"{tool.value.title().replace('_', '')}Args", __base__=WireModel, **fields
    )


TOOL_ARGS: dict[ToolName, type[WireModel]] = {
    ToolName.INSPECT: InspectArgs,
    ToolName.SCREENSHOT: ScreenshotArgs,
    ToolName.EXTRACT: ExtractArgs,
    ToolName.FIND: FindArgs,
    **{tool: _make_action_args_model(tool) for tool in TOOL_ACTION},
}


class ArgumentError(ValueError):
    """Tool arguments that do not describe a valid request; carries a readable message."""


# Each action tool's action model, by the tool's name (``single_action_from_json``).
_SINGLE_ACTION_MODELS: dict[str, type[WireModel]] = {
    tool.value: _ACTION_MODELS[action] for tool, action in TOOL_ACTION.items()
}


def single_action_from_json(tool: str, body: bytes | str) -> WireModel | None:
    """The one action an action tool's JSON arguments describe, validated straight from the
    JSON text; ``build_request`` takes it as the arguments.

    None when this shortcut does not apply: not an action tool, a batch, an ``action`` key
    (the tool names the action), a null (the general path reads it as absent, which may
    differ from a null), anything the action model refuses, or text that is not UTF-8 JSON.
    The caller then parses the body and passes the dict to ``build_request``, which accepts
    and refuses exactly as it always did and words the error. What this accepts, the dict
    path accepts too and builds into the same request (``tests/page/test_protocol.py``).

    Why: the agent HTTP API's common call is one action's fields; ``json.loads`` and then
    validating the dict would be two passes over them (docs/performance.md).
    """
    model = _SINGLE_ACTION_MODELS.get(tool)
    if model is None:
        return None
    try:
        action = model.model_validate_json(body)
    except ValidationError:
        return None
    given = action.model_fields_set
    if "action" in given or any(getattr(action, name) is None for name in given):
        return None
    return action


def build_request(
    tool: str,
    args: dict[str, Any] | WireModel,
    *,
    request_id: str,
    session_id: str,
    timeout_ms: int = 30_000,
) -> PageToolRequest:
    """Turn an agent's tool call into the one request the page will see.

    ``args`` is the JSON object of tool arguments, or the tool's one action as
    ``single_action_from_json`` validated it. Raises ``ArgumentError`` for an unknown tool or
    invalid arguments; nothing is sent then.
    """
    try:
        tool_name = ToolName(tool)
    except ValueError:
        raise ArgumentError(f"unknown tool {tool!r}") from None
    common: dict[str, Any] = {
        "request_id": request_id,
        "session_id": session_id,
        "tool": tool_name,
        "timeout_ms": timeout_ms,
    }
    if isinstance(args, WireModel):
        if type(args) is not _SINGLE_ACTION_MODELS.get(tool):
            raise ArgumentError(f"{type(args).__name__} is not the action of {tool}")
        try:
            # Already validated: the request around it is all that is left to check.
            return PageToolRequest.model_validate({**common, "actions": [args]})
        except ValidationError:
            # Say an element action without a snapshotId: the general path words the error.
            args = args.model_dump(by_alias=True, exclude_unset=True)
    if not isinstance(args, dict):
        raise ArgumentError("tool arguments must be a JSON object")
    try:
        action_name = TOOL_ACTION.get(tool_name)
        if (
            action_name is not None
            and "actions" not in args
            and "action" not in args
            and None not in args.values()
        ):
            # The common single-action call, validated in one pydantic pass: the request
            # with the arguments as its one action (the general path below validates, dumps
            # and re-validates). Without ``actions``, ``action`` or null
            # values both paths accept exactly the same arguments; a failure falls through
            # to the general path, which words the error.
            try:
                return PageToolRequest.model_validate(
                    {**common, "actions": [{**args, "action": action_name}]}
                )
            except ValidationError:
                pass
        parsed = TOOL_ARGS[tool_name].model_validate(args)
        if tool_name is ToolName.INSPECT:
            return PageToolRequest(**common, inspect=InspectOptions(**parsed.model_dump()))
        if tool_name is ToolName.SCREENSHOT:
            return PageToolRequest(**common, screenshot=ScreenshotOptions(**parsed.model_dump()))
        if tool_name is ToolName.EXTRACT:
            return PageToolRequest(**common, extract=ExtractOptions(**parsed.model_dump()))
        if tool_name is ToolName.FIND:
            return PageToolRequest(**common, find=FindOptions(**parsed.model_dump()))
        single = {k: v for k, v in parsed.model_dump(exclude={"actions"}).items() if v is not None}
        actions = parsed.actions  # type: ignore[attr-defined]
        if actions is not None:
            if single:
                raise ArgumentError(
                    "give either 'actions' or the single-action fields, not both "
                    f"(got {', '.join(sorted(to_camel(k) for k in single))})"
                )
            return PageToolRequest(**common, actions=actions)
        action = action_adapter().validate_python({"action": TOOL_ACTION[tool_name], **single})
        return PageToolRequest(**common, actions=[action])
    except ValidationError as error:
        raise ArgumentError(describe_validation_error(error)) from None
