"""What the tools answer (SPEC S2, A4): elements and snapshots, the changes an action
made, and the screenshot, extract and find results."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from .common import ToolError, WireModel


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
        default=None,
        description="Set on placeholders (kind 'opaque'): why the content cannot be read.",
    )
    name_from: NameFrom | None = Field(
        default=None,
        description="Set when the element has no accessible name and its label was taken from "
                    "elsewhere: its text, "
        "text beside it ('nearby'), the one field inside it ('inner'), or its place as a stepper; "
        "such an element "
        "is not found by its role and this label in accessibility tools.",
    )
    new: bool | None = Field(
        default=None,
        description="True when the element was not on screen at the previous snapshot (what the "
                    "last action "
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
