"""``page_wait``: a fixed time, or until a text appears or is gone, within a timeout."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from ..errors import ToolFailure
from ..protocol import ErrorCode, WaitAction
from .context import ActionContext, Target

WAIT_POLL_S = 0.1


async def run(ctx: ActionContext, action: WaitAction, target: Target | None) -> dict[str, Any]:
    began = time.monotonic()
    if action.time_ms is not None:
        await asyncio.sleep(action.time_ms / 1000)
        return {"waitedMs": action.time_ms}
    wanted = (action.text if action.text is not None else action.text_gone or "").casefold()
    appear = action.text is not None
    while True:
        present = wanted in " ".join(ctx.page.page_text().split()).casefold()
        elapsed = (time.monotonic() - began) * 1000
        if present == appear:
            return {
                "waitedMs": round(elapsed),
                "condition": "text appeared" if appear else "text gone",
            }
        if elapsed >= action.timeout_ms:
            raise ToolFailure(
                ErrorCode.TIMEOUT,
                f"the text {'did not appear' if appear else 'was still there'} "
                f"within {action.timeout_ms} ms",
            )
        await asyncio.sleep(WAIT_POLL_S)
