"""``page_select``: native ``<select>``, and every other select through the custom-select
strategy (``widgets.select``: ARIA comboboxes and listboxes, selects without roles, cascader
paths, tree selects) (SPEC A1).

Each strategy chooses and then verifies what the control now shows; a choice the page did not
take is ``verification_failed``, never a success.
"""

from __future__ import annotations

from typing import Any

from ..bridge.page import Outcome
from ..dom import facts as F
from ..protocol import ErrorCode, SelectAction
from . import options
from .actionability import ensure_actionable
from .context import ActionContext, Target
from .widgets import select as custom_select


async def run(ctx: ActionContext, action: SelectAction, target: Target) -> dict[str, Any]:
    return await choose(ctx, target, list(action.values))


async def choose(ctx: ActionContext, target: Target, values: list[str]) -> dict[str, Any]:
    """The strategy for this kind of control (``page_fill`` on a ``<select>`` comes here too)."""
    row = target.row
    if row[F.TAG] == "select":
        return await select_native(ctx, target, values)
    if custom_select.opens_choices(target):
        return await custom_select.choose(ctx, target, values)
    raise target.failure(
        ErrorCode.UNSUPPORTED,
        f"{target.name} is not a select, combobox or listbox (it states no popup); nothing was "
        f"done",
    )


async def select_native(ctx: ActionContext, target: Target, values: list[str]) -> dict[str, Any]:
    row = target.row
    if len(values) > 1 and not row[F.MULTIPLE]:
        raise target.failure(ErrorCode.INVALID_REQUEST, f"{target.name} takes one value")
    await ensure_actionable(ctx, target)
    page = ctx.page
    available = page.select_options(target.handle)
    labels = [o[1] for o in available]
    chosen: list[int] = []
    for wanted in values:
        match = options.find_native(available, wanted)
        if match.index is None:
            raise options.unmatched(target, match, labels)
        if available[match.index][3]:
            raise target.failure(
                ErrorCode.NOT_ENABLED,
                f"option {labels[match.index]!r} of {target.name} is disabled; nothing was chosen",
                {"options": labels[: options.LISTED_OPTIONS]},
            )
        chosen.append(match.index)

    async def perform() -> dict[str, Any]:
        result = page.select_native(target.handle, chosen)
        if result.outcome is not Outcome.DONE:
            raise target.failure(
                ErrorCode.NOT_STABLE, f"the options of {target.name} changed while choosing"
            )
        return {}

    outcome = await ctx.guarded(perform)
    wanted_options = {(available[i][0], available[i][1]) for i in chosen}
    selected = [o for o in page.select_options(target.handle) if o[2]]
    if {(o[0], o[1]) for o in selected} != wanted_options:
        raise target.failure(
            ErrorCode.VERIFICATION_FAILED,
            f"{target.name} shows {[o[1] for o in selected]} after selecting {values}",
        )
    outcome["selected"] = [o[0] for o in selected]
    outcome["labels"] = [o[1] for o in selected]
    return outcome
