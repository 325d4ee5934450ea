"""``page_focus``: keyboard focus on an element, with the focus events frameworks listen to."""

from __future__ import annotations

from typing import Any

from ..bridge.page import Outcome
from ..protocol import ErrorCode, FocusAction
from .actionability import ensure_actionable
from .context import ActionContext, Target


async def run(ctx: ActionContext, action: FocusAction, target: Target) -> dict[str, Any]:
    await ensure_actionable(ctx, target, hit=False)
    outcome = ctx.page.focus(target.handle)
    if outcome is Outcome.NOT_CONNECTED:
        raise target.failure(
            ErrorCode.STALE_REF, f"{target.name} is no longer in the page; call page_inspect again"
        )
    if outcome is not Outcome.DONE:
        raise target.failure(ErrorCode.VERIFICATION_FAILED, f"{target.name} did not take focus")
    return {"focused": True}
