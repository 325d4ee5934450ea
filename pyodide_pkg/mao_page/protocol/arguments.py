"""Tool arguments as agents send them, and the one request the page sees for each call
(docs/protocol.md "Tools and actions")."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, ValidationError
from pydantic.alias_generators import to_camel

from .actions import (
    ASK_DEFAULT_TIMEOUT_MS,
    TOOL_ACTION,
    AskOptions,
    CheckAction,
    ClickAction,
    DragAction,
    ExtractOptions,
    FillAction,
    FindOptions,
    FocusAction,
    HoverAction,
    InspectOptions,
    KeyboardAction,
    ObserveAction,
    PageAction,
    ScreenshotOptions,
    ScrollAction,
    SelectAction,
    UncheckAction,
    WaitAction,
    action_adapter,
)
from .common import MAX_BATCH_ACTIONS, ToolName, WireModel, describe_validation_error
from .messages import PageToolRequest
from .sitetools import SiteTool, SiteToolCall

# Each action tool takes either that action's fields or an ordered ``actions`` batch. The
# argument models and their JSON Schemas are derived from the action models (``actions.py``),
# never written by hand.


class InspectArgs(InspectOptions):
    pass


class ScreenshotArgs(ScreenshotOptions):
    pass


class ExtractArgs(ExtractOptions):
    pass


class FindArgs(FindOptions):
    pass


class AskUserArgs(AskOptions):
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
    "drag": DragAction,
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
        annotation = (
            Annotated[(info.annotation, *info.metadata)] if info.metadata else info.annotation
        )
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
    ToolName.ASK_USER: AskUserArgs,
    **{tool: _make_action_args_model(tool) for tool in TOOL_ACTION},
}


class ArgumentError(ValueError):
    """Tool arguments that do not describe a valid request; carries a readable message."""


def build_request(
    tool: str,
    args: dict[str, Any],
    *,
    request_id: str,
    session_id: str,
    timeout_ms: int = 30_000,
) -> PageToolRequest:
    """Turn an agent's tool call into the one request the page will see.

    ``args`` is the JSON object of tool arguments. Raises ``ArgumentError`` for an unknown
    tool or invalid arguments; nothing is sent then.
    """
    if tool == SiteTool.RUN:
        # ``args`` is {name, arguments}; the arguments are checked against the tool's own
        # schema in the page, which holds the tool (mao_page.sitetools).
        try:
            call = SiteToolCall.model_validate(args)
            return PageToolRequest(
                request_id=request_id, session_id=session_id, tool=SiteTool.RUN,
                timeout_ms=timeout_ms, site_tool=call,
            )
        except ValidationError as error:
            raise ArgumentError(describe_validation_error(error)) from None
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
    if not isinstance(args, dict):
        raise ArgumentError("tool arguments must be a JSON object")
    action_name = TOOL_ACTION.get(tool_name)
    if action_name is not None and _one_plain_action(args):
        # The commonest call, one action's fields, validated in one pass as the request itself;
        # the general path below takes three (arguments, the action, the request) and is ~5%
        # of the relay's CPU per call (docs/performance.md). On these arguments both accept
        # the same and build the same request (tests/page/test_protocol.py); a refusal falls
        # through to the general path, which words the error.
        try:
            return PageToolRequest.model_validate(
                {**common, "actions": [{**args, "action": action_name}]}
            )
        except ValidationError:
            pass
    try:
        parsed = TOOL_ARGS[tool_name].model_validate(args)
        if tool_name is ToolName.INSPECT:
            return PageToolRequest(**common, inspect=InspectOptions(**parsed.model_dump()))
        if tool_name is ToolName.SCREENSHOT:
            return PageToolRequest(**common, screenshot=ScreenshotOptions(**parsed.model_dump()))
        if tool_name is ToolName.EXTRACT:
            return PageToolRequest(**common, extract=ExtractOptions(**parsed.model_dump()))
        if tool_name is ToolName.FIND:
            return PageToolRequest(**common, find=FindOptions(**parsed.model_dump()))
        if tool_name is ToolName.ASK_USER:
            # A person answers: the call waits as long as the question's own timeoutMs says
            # (default 2 minutes), not the default of a page tool.
            ask = AskOptions(**parsed.model_dump())
            common["timeout_ms"] = ask.timeout_ms or ASK_DEFAULT_TIMEOUT_MS
            return PageToolRequest(**common, ask=ask)
        single = {k: v for k, v in parsed.model_dump(exclude={"actions"}).items() if v is not None}
        actions = parsed.actions  # type: ignore[attr-defined]
        if actions is not None:
            if single:
                raise ArgumentError(
                    "give either 'actions' or the single-action fields, not both "
                    f"(got {', '.join(sorted(to_camel(k) for k in single))})"
                )
            return PageToolRequest(**common, actions=actions)
        action = action_adapter().validate_python({"action": action_name, **single})
        return PageToolRequest(**common, actions=[action])
    except ValidationError as error:
        raise ArgumentError(describe_validation_error(error)) from None


def _one_plain_action(args: dict[str, Any]) -> bool:
    """Arguments the one-pass validation reads as the general path does: no batch, no
    ``action`` key (the tool names it), no null (the general path reads it as absent)."""
    return "actions" not in args and "action" not in args and None not in args.values()
