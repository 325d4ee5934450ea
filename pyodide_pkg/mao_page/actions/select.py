"""``page_select``: native ``<select>``, and every other select through the custom-select
strategy (``widgets.select``: ARIA comboboxes and listboxes, selects without roles, cascader
paths, tree selects) (SPEC A1).

Each strategy chooses and then verifies what the control now shows; a choice the page did not
take is ``verification_failed``, never a success.
"""

from __future__ import annotations

from typing import Any

from ..dom import facts as F
from ..protocol import ErrorCode, SelectAction
from .actionability import ensure_actionable
from .context import ActionContext, Target
from .widgets import popup
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
        f"{target.name} is not a select, combobox or listbox (it states no popup); nothing was done",
    )


async def select_native(ctx: ActionContext, target: Target, values: list[str]) -> dict[str, Any]:
    row = target.row
    if len(values) > 1 and not row[F.MULTIPLE]:
        raise target.failure(ErrorCode.INVALID_REQUEST, f"{target.name} takes one value")
    await ensure_actionable(ctx, target)
    holder: dict[str, Any] = {}

    async def perform() -> dict[str, Any]:
        result = ctx.page.select_native(target.handle, values)
        holder["missing"] = result.missing
        return {"selected": result.selected}

    outcome = await ctx.guarded(perform)
    if holder["missing"]:
        options = [o[1] for o in row[F.OPTIONS] or ()]
        raise target.failure(
            ErrorCode.NOT_FOUND,
            f"no option {', '.join(map(repr, holder['missing']))} in {target.name}; "
            "nothing was changed",
            details={"options": options[:50]},
        )
    now = ctx.page.row_of(target.handle)
    selected = [o for o in now[F.OPTIONS] or () if o[2]]
    wanted = {v.strip().lower() for v in values}
    if not all(o[0].lower() in wanted or o[1].strip().lower() in wanted for o in selected) or len(
        selected
    ) != len(values):
        raise target.failure(
            ErrorCode.VERIFICATION_FAILED,
            f"{target.name} shows {[o[1] for o in selected]} after selecting {values}",
        )
    outcome["selected"] = [o[0] for o in selected]
    outcome["labels"] = [o[1] for o in selected]
    return outcome


def find_option(facts: list[list[Any]], wanted: str) -> int | None:
    """An option by value, exact label, then trimmed case-insensitive label."""
    return popup.find_option(facts, wanted)
