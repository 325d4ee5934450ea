"""Driving the SDK panel the way a user's Playwright test would: by role and accessible name
(README "Panel controls"), with real (trusted) clicks and keys."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

LEVEL_NAMES = {"per_action": "Ask each time", "task": "This task", "full": "Full access"}


def panel(page: Any) -> Any:
    return page.get_by_role("region", name="Mao Embed", exact=True)


def grant(page: Any, level: str) -> None:
    """The user picks an authorization level in the panel."""
    radio = page.get_by_role("radio", name=LEVEL_NAMES[level], exact=True)
    radio.click()
    radio.wait_for(state="visible")
    assert radio.get_attribute("aria-checked") == "true"


def card(page: Any) -> Any:
    return page.get_by_role("alertdialog", name="Confirm action")


def answer(page: Any, decision: str, timeout: float = 20_000) -> None:
    """Click one of the card's buttons: "Allow once", "Allow for this task" or "Deny"."""
    card(page).get_by_role("button", name=decision, exact=True).click(timeout=timeout)


class AgentThread:
    """Agent calls run on a worker thread, so the test's main thread can answer the panel
    while a call waits for the user (Playwright's sync API stays on the main thread)."""

    def __init__(self, embedded: Any) -> None:
        self._embedded = embedded
        self._pool = ThreadPoolExecutor(max_workers=2)

    def call(self, tool: str, **args: Any) -> Future[dict[str, Any]]:
        return self._pool.submit(self._embedded.call, tool, **args)

    def close(self) -> None:
        self._pool.shutdown(wait=True)


def question(page: Any) -> Any:
    """The assistant's question (page_ask_user, SPEC U5)."""
    return page.get_by_role("dialog", name="Question from the assistant")
