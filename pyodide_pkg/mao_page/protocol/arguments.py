"""Tool arguments as agents send them, and the one request the page sees for each call
(docs/protocol.md "Tools and actions")."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, ValidationError
from pydantic.alias_generators import to_camel

from .actions import (
    TOOL_ACTION,
    CheckAction,
    ClickAction,
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
