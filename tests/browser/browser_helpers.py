"""Shared fixture pages and small readers for the browser tests."""

from __future__ import annotations

from typing import Any

COUNTER_BUTTON = (
    '<button type="button" id="counter" onclick="this.dataset.clicks = Number(this.dataset.clicks '
    "|| 0) + 1; "
    "this.textContent = 'Clicked ' + this.dataset.clicks\">Count me</button>"
)


def clicks(page: Any) -> int:
    return int(page.get_attribute("#counter", "data-clicks") or 0)


def ref(snapshot: dict[str, Any], label: str) -> dict[str, str]:
    """snapshotId + elementId of the one element with this label."""
    from mao_embed.pytest_plugin import EmbeddedPage

    element = EmbeddedPage.find(snapshot, label=label)
    return {"snapshotId": snapshot["snapshotId"], "elementId": element["elementId"]}
