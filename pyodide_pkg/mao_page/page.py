"""What the page runtime needs from the DOM, and the page's state counters.

``bridge.Page`` implements ``Page`` in the browser; tests of pure logic can pass a fake.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol


class Page(Protocol):
    """DOM reads and acts, one crossing each (implemented by ``bridge.Page``)."""

    def collect_main_document(self) -> Any: ...
    def row_of(self, handle: Any) -> list[Any]: ...
    def is_connected(self, handle: Any) -> bool: ...
    def is_rendered(self, handle: Any) -> bool: ...
    def read_value(self, handle: Any) -> str: ...
    def hit_test(self, handle: Any) -> dict[str, Any]: ...
    def viewport(self) -> list[float]: ...
    def counters(self) -> tuple[int, int, float, str, str]: ...
    def scroll_into_view(self, handle: Any) -> bool: ...
    def click(self, handle: Any, x: float, y: float) -> None: ...
    def fill(self, handle: Any, value: str) -> str: ...
    async def next_frame(self) -> None: ...


@dataclass(frozen=True, slots=True)
class PageState:
    mutations: int
    navigations: int
    url: str
    title: str

    @property
    def version(self) -> str:
        return f"{self.navigations}.{self.mutations}"


def read_state(page: Page) -> PageState:
    mutations, navigations, _quiet, url, title = page.counters()
    return PageState(mutations, navigations, url, title)
