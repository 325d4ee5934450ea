"""What the page runtime needs from the DOM, and the page's state counters.

``bridge.browser.BrowserPage`` implements ``Page`` in the browser; tests of pure logic can pass a
fake. Acts that can fail report one of a closed set of ``Outcome``s
(``loader_js/primitives/act.js``); the Python caller maps each to one typed ``ToolFailure``
(``actions.actionability``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol


class Outcome(StrEnum):
    """Every answer an act primitive gives besides its data."""

    DONE = "done"
    NOT_CONNECTED = "not_connected"
    OUTSIDE_VIEWPORT = "outside_viewport"
    COVERED = "covered"  # something else receives the pointer at the action point
    COVERED_BY_SDK = "covered_by_sdk"  # the Mao Embed panel does
    NOT_FOCUSABLE = "not_focusable"


class Submission(StrEnum):
    """What Enter in a form control did under the implicit-submission rules (HTML §4.10.21.2)."""

    CLICKED_DEFAULT = "clicked_default"  # the form's default button got a click
    SUBMITTED = "submitted"  # no submit button, at most one blocking field: the form itself
    DEFAULT_DISABLED = "default_disabled"  # the default button is disabled: nothing
    TOO_MANY_FIELDS = "too_many_fields"  # no submit button and several fields: nothing
    NONE = "none"  # not in a form, or a control Enter does not submit from


@dataclass(frozen=True, slots=True)
class HitTest:
    """Where a pointer action on an element lands: the action point (top-viewport CSS pixels)
    and a description of the element found there."""

    outcome: Outcome
    x: float = 0.0
    y: float = 0.0
    hit: str = ""

    @property
    def ok(self) -> bool:
        return self.outcome is Outcome.DONE


@dataclass(frozen=True, slots=True)
class HoverState:
    """The CSS hover state after the pointer came to rest (SPEC A7): the page's ``:hover`` rules
    applied to the hovered chain (``rules``), style sheets of other origins whose rules could
    not be read (``unreadable``), and elements outside the chain those rules now style
    (``styled``: a row's button shown on hover)."""

    rules: int = 0
    unreadable: int = 0
    styled: int = 0


@dataclass(frozen=True, slots=True)
class NativeSelection:
    """A native ``<select>`` after choosing: the selected values (``not_connected``: its
    options changed since they were read, and nothing was set)."""

    outcome: Outcome
    selected: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class CalendarRead:
    """The day grids a picker panel shows: per day number ``[grid, day, label, disabled,
    in_month]`` (label: the date the cell states, if any) with its element, and per grid its
    element and header text."""

    facts: list[list[Any]]
    cells: list[Any]
    grids: list[Any]
    headers: list[str]


class Page(Protocol):
    """DOM reads and acts, one crossing each (implemented by ``bridge.browser.BrowserPage``)."""

    # -- reads
    def collect_main_document(
        self, *, viewport_only: bool = False, snapshot: bool = False
    ) -> Any: ...
    def row_of(self, handle: Any) -> list[Any]: ...
    def is_connected(self, handle: Any) -> bool: ...
    def is_rendered(self, handle: Any) -> bool: ...
    def read_value(self, handle: Any) -> str: ...
    def max_length(self, handle: Any) -> int: ...
    def hit_test(self, handle: Any) -> HitTest: ...
    def move_panel_aside(self, handle: Any) -> str: ...
    def viewport(self) -> list[float]: ...
    def counters(self) -> tuple[int, int, float, str, str]: ...
    def aria_options(self, handle: Any) -> tuple[list[list[Any]], list[Any], str]: ...
    def visible_text_matches(self, label: str) -> list[Any]: ...
    def combobox_display(self, handle: Any) -> str: ...
    def control_of(self, handle: Any) -> Any: ...
    def label_for(self, handle: Any) -> Any: ...
    def active_element(self) -> Any: ...
    def live_messages(self) -> list[list[str]]: ...
    def page_text(self) -> str: ...
    def scroll_state(self, handle: Any) -> list[Any]: ...
    async def next_frame(self) -> None: ...

    # -- pointer and focus
    def scroll_into_view(self, handle: Any) -> bool: ...
    def click(
        self, handle: Any, x: float, y: float, click_count: int = 1, button: str = "left"
    ) -> None: ...
    def hover(self, handle: Any, x: float, y: float) -> HoverState: ...
    def hover_host_for(self, handle: Any) -> Any: ...
    async def drag(
        self, source: Any, sx: float, sy: float, destination: Any, dx: float, dy: float
    ) -> tuple[str, bool, str]: ...
    def effect_probe(self) -> Any: ...
    def effects_since(self, probe: Any, acted: Any) -> list[str]: ...
    def focus(self, handle: Any) -> Outcome: ...
    def blur(self, handle: Any) -> str: ...
    def move_focus(self, current: Any, backwards: bool) -> Any: ...

    # -- values
    def fill(self, handle: Any, value: str) -> str: ...
    def commit_value(self, handle: Any, changed: bool) -> str: ...
    def suggests_while_typing(self, handle: Any) -> bool: ...
    def popup_roots(self, before: list[Any] | None = None) -> list[Any]: ...
    def field_suggestions(self, handle: Any, before: list[Any]) -> tuple[str, list[str]]: ...
    def select_options(self, handle: Any) -> list[list[Any]]: ...
    def select_native(self, handle: Any, indexes: list[int]) -> NativeSelection: ...

    # -- keyboard (one event each; default actions are separate acts)
    def dispatch_key(self, handle: Any, type_: str, init: dict[str, Any]) -> bool: ...
    def insert_text(self, handle: Any, text: str) -> str: ...
    def delete_text(self, handle: Any, forward: bool) -> str: ...
    def select_all(self, handle: Any) -> bool: ...
    def submit_implicitly(self, handle: Any) -> Submission: ...
    def activate(self, handle: Any) -> bool: ...
    def step_radio(self, handle: Any, delta: int) -> Any: ...
    def step_select(self, handle: Any, delta: int) -> bool: ...

    # -- scrolling and dialogs
    def scroll_element(self, handle: Any, dx: float, dy: float) -> list[float]: ...
    def scroll_page(self, dx: float, dy: float) -> list[float]: ...
    def intercept_dialogs(self) -> Any: ...

    # -- reading (page_extract, page_find)
    def read_text(
        self,
        root: Any,
        listed: list[Any] | None,
        text_limit: int,
        inline_displays: list[str],
        inline_tags: list[str],
        fold_blocks: bool = False,
    ) -> Any: ...
    def check_regex(self, pattern: str) -> str: ...
    async def regex_search(
        self, text: str, pattern: str, max_hits: int, count_limit: int, timeout_ms: int
    ) -> dict[str, Any]: ...


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
