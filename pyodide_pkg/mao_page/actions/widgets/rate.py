"""Star ratings: a group of N radios (one per star), set with ``page_fill`` value ``"1"``-``"N"``
(SPEC A1). Click the Nth radio where a pointer would, then verify the Nth is checked and the
next is not (ratings check every star up to the value)."""

from __future__ import annotations

from typing import Any

from ...dom import facts as F
from ...protocol import ErrorCode
from ..actionability import ensure_actionable, hit_test
from ..context import ActionContext, Target
from .popup import blocked_by


def is_rating(ctx: ActionContext, target: Target, value: str) -> bool:
    """A whole number for an element (not itself a radio) holding a group of radios."""
    if not value.strip().isdigit() or target.entry.role == "radio":
        return False
    return len(ctx.page.radios_in(target.handle)) >= 2  # type: ignore[attr-defined]


def _checked(ctx: ActionContext, radio: Any) -> bool:
    row = ctx.page.row_of(radio)
    return row[F.ARIA_CHECKED] == "true" or row[F.CHECKED] == 1


async def set_value(ctx: ActionContext, target: Target, value: str) -> dict[str, Any]:
    page = ctx.page
    wanted = int(value.strip())
    radios = page.radios_in(target.handle)  # type: ignore[attr-defined]
    if not 1 <= wanted <= len(radios):
        raise target.failure(
            ErrorCode.INVALID_REQUEST,
            f"{target.name} takes 1 to {len(radios)}, not {value}. Nothing was done",
        )
    star = radios[wanted - 1]
    await ensure_actionable(ctx, target, hit=False)
    page.scroll_into_view(star)
    hit = hit_test(ctx, star)
    if not hit.ok:
        blocked = blocked_by(hit, f"star {wanted}")
        raise target.failure(blocked.code, f"{blocked.reason}; nothing was done", blocked.details)

    async def perform() -> dict[str, Any]:
        page.click(star, hit.x, hit.y)
        return {}

    outcome = await ctx.guarded(perform)
    radios = page.radios_in(target.handle)  # type: ignore[attr-defined]
    ok = _checked(ctx, radios[wanted - 1]) and (
        wanted == len(radios) or not _checked(ctx, radios[wanted])
    )
    if not ok:
        raise target.failure(
            ErrorCode.VERIFICATION_FAILED,
            f"{target.name} does not show {wanted} after clicking star {wanted}",
        )
    outcome["value"] = str(wanted)
    return outcome
