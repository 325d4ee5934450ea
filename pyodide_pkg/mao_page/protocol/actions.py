"""What a tool call asks for: the actions (SPEC A1), a discriminated union on ``action``,
and the read tools' options."""

from __future__ import annotations

from functools import cache
from typing import Annotated, Any, Literal, Union

from pydantic import Field, TypeAdapter, model_validator

from .common import MAX_VALUE_CHARS, MAX_WAIT_MS, ElementRef, SnapshotRef, ToolName, WireModel


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
    click_count: Literal[1, 2] = Field(
        default=1, description="2: a double click (both clicks, then dblclick)."
    )
    button: Literal["left", "right"] = Field(
        default="left", description="'right': a right click (contextmenu; a page menu opens)."
    )


class HoverAction(_ElementAction):
    action: Literal["hover"] = "hover"


class DragAction(_ElementAction):
    """SPEC A7: drag the element ``elementId`` onto ``toElementId``, both refs of the same
    snapshot; never coordinates."""

    action: Literal["drag"] = "drag"
    to_element_id: ElementRef = Field(
        description="The element to drop on (a list, a card, a column), from the same snapshot."
    )


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
        DragAction,
        KeyboardAction,
        WaitAction,
        ObserveAction,
    ],
    Field(discriminator="action"),
]

ELEMENT_ACTIONS = frozenset(
    {"focus", "fill", "select", "check", "uncheck", "click", "hover", "drag"}
)
# Actions that may change the page: a dropped connection after dispatch means "may have
# applied", and they are never replayed (SPEC W3).
WRITE_ACTIONS = frozenset(
    {"fill", "select", "check", "uncheck", "click", "hover", "drag", "keyboard", "scroll"}
)

TOOL_ACTION: dict[ToolName, str] = {
    ToolName.SCROLL: "scroll",
    ToolName.FOCUS: "focus",
    ToolName.FILL: "fill",
    ToolName.SELECT: "select",
    ToolName.CHECK: "check",
    ToolName.UNCHECK: "uncheck",
    ToolName.CLICK: "click",
    ToolName.HOVER: "hover",
    ToolName.DRAG: "drag",
    ToolName.KEYBOARD: "keyboard",
    ToolName.WAIT: "wait",
    ToolName.OBSERVE: "observe",
}


# Read tool options.


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
        description="false asks for the values of sensitive fields (passwords, one-time codes, "
                    "card "
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
        default=None,
        description="Read only this listed element's subtree (default: the whole page).",
    )

    @model_validator(mode="after")
    def _ref_needs_snapshot(self) -> _ReadScope:
        if self.element_id is not None and self.snapshot_id is None:
            raise ValueError("elementId needs the snapshotId of the page_inspect that listed it")
        return self


class ExtractOptions(_ReadScope):
    from_char: Annotated[int, Field(ge=0, le=MAX_EXTRACT_CHARS)] = Field(
        default=0,
        description="Where this part starts: 0, or the nextFromChar of the previous part.",
    )
    max_chars: Annotated[int, Field(ge=500, le=50_000)] = Field(
        default=8000, description="Longest part returned; parts end at a block boundary."
    )


class FindOptions(_ReadScope):
    query: Annotated[str, Field(min_length=1, max_length=1000)] = Field(
        description="Text to find, case-insensitive; with regex: true a JavaScript regular "
                    "expression."
    )
    regex: bool = Field(
        default=False, description="Treat query as a regular expression (time-limited)."
    )
    max_results: Annotated[int, Field(ge=1, le=200)] = Field(
        default=20, description="Most hits returned."
    )


# page_ask_user (SPEC U5): a question shown in the panel, answered by the user typing or
# choosing; the request waits for the answer up to its timeout (``timeoutMs``, default 2 min).
ASK_DEFAULT_TIMEOUT_MS = 120_000
MAX_ASK_CHOICES = 10


class AskOptions(WireModel):
    question: Annotated[str, Field(min_length=1, max_length=2000)] = Field(
        description="The question the panel shows the user, in the user's language."
    )
    choices: (
        Annotated[
            list[Annotated[str, Field(min_length=1, max_length=200)]],
            Field(min_length=1, max_length=MAX_ASK_CHOICES),
        ]
        | None
    ) = Field(
        default=None,
        description="Answers the user can pick with one click; the user may still type "
        "another answer.",
    )
    timeout_ms: Annotated[int, Field(ge=5_000, le=120_000)] | None = Field(
        default=None,
        description="How long to wait for the answer (default 120000); then the call fails "
        "with timeout.",
    )


@cache
def action_adapter() -> TypeAdapter[Any]:
    return TypeAdapter(PageAction)
