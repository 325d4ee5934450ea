"""Waiting for the page to go quiet after an act, and the dialog guard around it (SPEC A4, A6)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ..bridge.page import Page
from ..protocol import PageDialog

# How a page dialog raised during an action was answered (SPEC A6): dismissed, so a page never waits
# on a prompt nobody sees.
DIALOG_ANSWERS = {"alert": "ok", "confirm": "false", "prompt": "null"}


@dataclass(frozen=True, slots=True)
class SettlePolicy:
    """Settling defaults (docs/tools.md): at least 250 ms, then a 500 ms quiet window, capped at 5
    s.

    Time alone is not enough: apps defer their commits to animation frames (antd's date
    picker submits three frames after blur), and a page in a background tab or an occluded
    window gets frames at 1 Hz or none, while its timers keep running. So the page has
    settled only once ``frames`` animation frames have also passed (within the cap)."""

    minimum_ms: float = 250
    quiet_ms: float = 500
    cap_ms: float = 5000
    poll_ms: float = 50
    frames: int = 4


class FrameCounter:
    """Counts the page's animation frames in the background while Python waits on timers;
    counting stops when the ``with`` block ends."""

    def __init__(self, page: Page) -> None:
        self.count = 0
        self._task = asyncio.ensure_future(self._run(page))

    def __enter__(self) -> FrameCounter:
        return self

    def __exit__(self, *_exc: object) -> None:
        self._task.cancel()

    async def _run(self, page: Page) -> None:
        while True:
            await page.next_frame()
            self.count += 1


async def settle(page: Page, policy: SettlePolicy, *, short: bool = False) -> dict[str, Any]:
    """Wait for the page to go quiet: a minimum, then a quiet window and enough animation
    frames for frame-deferred work, capped. Ends early on navigation (the old page's work
    is over). ``short`` is for steps inside one action."""
    scale = 5 if short else 1
    minimum, quiet_window, cap = (
        policy.minimum_ms / scale,
        policy.quiet_ms / scale,
        policy.cap_ms / scale,
    )
    frames_needed = 1 if short else policy.frames
    began = time.monotonic()
    with FrameCounter(page) as frames:
        _m, navigations, _q, _u, _t = page.counters()
        await asyncio.sleep(minimum / 1000)
        while True:
            _m, now_navigations, quiet_ms, _u, _t = page.counters()
            elapsed = (time.monotonic() - began) * 1000
            if now_navigations != navigations:
                return {"waitedMs": round(elapsed), "capped": False, "navigated": True}
            if quiet_ms >= quiet_window and frames.count >= frames_needed:
                return {"waitedMs": round(elapsed), "capped": False}
            if elapsed >= cap:
                return {"waitedMs": round(elapsed), "capped": True}
            await asyncio.sleep(policy.poll_ms / 1000)


@dataclass(slots=True)
class Guarded:
    """What one guarded write produced: its outcome (with ``settle``), the page dialogs it
    raised, and where its time went (act, settle) in seconds."""

    outcome: dict[str, Any]
    dialogs: list[PageDialog]
    act_s: float
    settle_s: float


async def guarded(
    page: Page, policy: SettlePolicy, perform: Callable[[], Awaitable[dict[str, Any]]]
) -> Guarded:
    """Run one write with page dialogs intercepted, then settle (SPEC A4, A6)."""
    guard = page.intercept_dialogs()
    try:
        began = time.monotonic()
        outcome = await perform()
        acted = time.monotonic()
        outcome["settle"] = await settle(page, policy)
        settled = time.monotonic()
    finally:
        raised = guard.restore()
    dialogs = [
        PageDialog(type=kind, message=message, answered=DIALOG_ANSWERS[kind])
        for kind, message in raised
    ]
    if dialogs:
        outcome["dialogs"] = [d.to_wire() for d in dialogs]
    return Guarded(outcome, dialogs, acted - began, settled - acted)
