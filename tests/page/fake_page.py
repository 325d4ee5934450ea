"""A scripted stand-in for ``bridge.BrowserPage`` and the inspector, for the action modules' pure
logic (decisions, ordering, strategies). It records the acts it was asked for; it does not
model the DOM, so what it proves is what our code decides, never what a browser does (the
browser tests prove that)."""

from __future__ import annotations

import asyncio
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from mao_page.actions import ActionContext, SettlePolicy, Target
from mao_page.actions.changes import ChangeTracker
from mao_page.bridge.page import (
    HitTest,
    HoverState,
    NativeSelection,
    Outcome,
    PageState,
    Submission,
    read_state,
)
from mao_page.dom import facts as F
from mao_page.errors import ToolFailure
from mao_page.protocol import ErrorCode, Viewport
from mao_page.snapshot.store import ElementEntry

from .page_rows import fact_row, scanned

FAST = SettlePolicy(minimum_ms=0, quiet_ms=0, cap_ms=50, poll_ms=1, frames=1)


@dataclass
class Element:
    name: str
    row: list[Any]
    rendered: bool = True
    connected: bool = True
    hits: list[HitTest] = field(default_factory=list)  # answers of successive hit tests
    boxes: list[tuple[float, float, float, float]] = field(default_factory=list)  # per frame
    value: str = ""
    role: str = ""
    label: str = ""
    max_length: int = -1  # the field's maxlength (-1: none)

    def entry(self) -> ElementEntry:
        element = scanned(
            tag=self.row[F.TAG], role=self.role or self.row[F.TAG], type=self.row[F.TYPE],
            label=self.label,
        )
        return ElementEntry(self.name, self, element)

    def target(self) -> Target:
        return Target(self.entry(), self.row)


def element(
    name: str, tag: str = "button", *, role: str = "", label: str = "", **columns: Any
) -> Element:
    return Element(name, fact_row(tag, **columns), role=role, label=label or name)


class FakePage:
    def __init__(self) -> None:
        self.acts: list[tuple[Any, ...]] = []
        self.mutations = 0
        self.navigations = 0
        self.url = "https://app.example/form"
        self.focused: Element | None = None
        self.on_click: dict[str, Any] = {}  # element name -> callable run on click
        self.messages: list[list[str]] = []
        self.on_hover: dict[str, Any] = {}
        self.suggestions: dict[str, tuple[str, list[str]]] = {}
        self.cancelled_keys: set[str] = set()  # key event types the page cancels
        self.submission = Submission.SUBMITTED
        self.values = 0  # stands for the form controls' values (Page.effect_probe)
        self.scroll = (0.0, 0.0)
        # Where the SDK panel goes when it covers a target (Page.move_panel_aside): the
        # corners it can move to, in turn; none left: it stays.
        self.panel_places = ["bottom-left"]

    # reads
    def row_of(self, handle: Element) -> list[Any]:
        if handle.boxes:
            box = handle.boxes.pop(0) if len(handle.boxes) > 1 else handle.boxes[0]
            row = list(handle.row)
            row[F.X], row[F.Y], row[F.WIDTH], row[F.HEIGHT] = box
            return row
        return handle.row

    def is_connected(self, handle: Element) -> bool:
        return handle.connected

    def is_rendered(self, handle: Element) -> bool:
        return handle.rendered

    def read_value(self, handle: Element) -> str:
        return handle.value

    def max_length(self, handle: Element) -> int:
        return handle.max_length

    def hit_test(self, handle: Element) -> HitTest:
        self.acts.append(("hit_test", handle.name))
        if handle.hits:
            return handle.hits.pop(0) if len(handle.hits) > 1 else handle.hits[0]
        return HitTest(Outcome.DONE, 50.0, 20.0, f"<{handle.row[F.TAG]}>")

    def move_panel_aside(self, handle: Element) -> str:
        self.acts.append(("move_panel_aside", handle.name))
        return self.panel_places.pop(0) if self.panel_places else ""

    def counters(self) -> tuple[int, int, float, str, str]:
        return self.mutations, self.navigations, 10_000.0, self.url, "Form"

    def live_messages(self) -> list[list[str]]:
        return self.messages

    async def next_frame(self) -> None:
        await asyncio.sleep(0)

    def active_element(self) -> Element | None:
        return self.focused

    def control_of(self, handle: Element) -> Element:
        return handle

    def label_for(self, handle: Element) -> None:
        return None

    # acts
    def scroll_into_view(self, handle: Element) -> bool:
        self.acts.append(("scroll_into_view", handle.name))
        return False

    def click(
        self, handle: Element, x: float, y: float, click_count: int = 1, button: str = "left"
    ) -> None:
        self.acts.append(("click", handle.name, x, y))
        effect = self.on_click.get(handle.name)
        if effect is not None:
            effect()

    def focus(self, handle: Element) -> Outcome:
        self.acts.append(("focus", handle.name))
        self.focused = handle
        return Outcome.DONE

    def fill(self, handle: Element, value: str) -> str:
        self.acts.append(("fill", handle.name, value))
        handle.value = value
        return value

    def blur(self, handle: Element) -> str:
        return handle.value

    def hover_host_for(self, handle: Element) -> None:
        return None

    def commit_value(self, handle: Element, changed: bool) -> str:
        self.acts.append(("commit", handle.name, changed))
        return handle.value

    def suggests_while_typing(self, handle: Element) -> bool:
        return False

    def popup_roots(self, before: list[Element] | None = None) -> list[Element]:
        return []

    def field_suggestions(self, handle: Element, before: list[Element]) -> tuple[str, list[str]]:
        return self.suggestions.get(handle.name, ("", []))

    def select_options(self, handle: Element) -> list[list[Any]]:
        return [list(o) for o in handle.row[F.OPTIONS] or ()]

    def select_native(self, handle: Element, indexes: list[int]) -> NativeSelection:
        options = handle.row[F.OPTIONS]
        self.acts.append(("select_native", handle.name, tuple(indexes)))
        for i, option in enumerate(options):
            option[2] = i in indexes
        return NativeSelection(Outcome.DONE, [options[i][0] for i in indexes])

    def dispatch_key(self, handle: Element | None, type_: str, init: dict[str, Any]) -> bool:
        self.acts.append(("key", type_, init["key"]))
        return type_ not in self.cancelled_keys

    def insert_text(self, handle: Element, text: str) -> str:
        self.acts.append(("insert_text", handle.name, text))
        handle.value += text
        return handle.value

    def delete_text(self, handle: Element, forward: bool) -> str:
        self.acts.append(("delete_text", handle.name, forward))
        return handle.value

    def select_all(self, handle: Element) -> bool:
        return True

    def submit_implicitly(self, handle: Element) -> Submission:
        self.acts.append(("submit_implicitly", handle.name))
        return self.submission

    def hover(self, handle: Element, x: float, y: float) -> HoverState:
        self.acts.append(("hover", handle.name, x, y))
        effect = self.on_hover.get(handle.name)
        if effect is not None:
            effect()
        return HoverState()

    def effect_probe(self) -> dict[str, Any]:
        return {"focused": self.focused, "values": self.values, "scroll": self.scroll}

    def effects_since(self, probe: dict[str, Any], acted: Element) -> list[str]:
        out = []
        if self.focused is not probe["focused"] and self.focused is not acted:
            out.append("focus")
        if self.values != probe["values"]:
            out.append("values")
        if self.scroll != probe["scroll"]:
            out.append("scroll")
        return out

    def activate(self, handle: Element) -> bool:
        self.acts.append(("activate", handle.name))
        return True

    def move_focus(self, current: Element | None, backwards: bool) -> None:
        return None

    def step_radio(self, handle: Element, delta: int) -> None:
        return None

    def step_select(self, handle: Element, delta: int) -> bool:
        return False

    def slider_track(self, handle: Element) -> tuple[Any, ...] | None:
        return None  # no thumb on a rail: this page's elements are no sliders

    def intercept_dialogs(self) -> Any:
        return SimpleNamespace(restore=lambda: [])


class FakeInspector:
    """Refs resolve to the elements given; the live scan lists ``listed``."""

    def __init__(self, page: FakePage, elements: list[Element]) -> None:
        self._page = page
        self.elements = {e.name: e for e in elements}
        self.listed = list(elements)
        self.store = SimpleNamespace(latest=lambda: None)

    def state(self) -> PageState:
        return read_state(self._page)  # type: ignore[arg-type]

    def resolve(self, snapshot_id: str, element_id: str) -> tuple[ElementEntry, list[Any]]:
        found = self.elements.get(element_id)
        if found is None or not found.connected:
            raise ToolFailure(ErrorCode.STALE_REF, f"{element_id} is gone", element_id=element_id)
        return found.entry(), found.row

    @contextmanager
    def live_scan(self, *, include_offscreen: bool = False, **_: Any):
        items = [
            SimpleNamespace(
                role=e.role or e.row[F.TAG],
                label=e.label,
                tag=e.row[F.TAG],
                type=e.row[F.TYPE],
                value=e.value,
                checked=None,
                expanded=None,
                selected=None,
                disabled=False,
            )
            for e in self.listed
        ]
        yield (
            None,
            SimpleNamespace(elements=items),
            Viewport(width=1280, height=800, scroll_x=0, scroll_y=0),
        )


def context(page: FakePage, inspector: FakeInspector) -> tuple[ActionContext, list[Any]]:
    """An action context on the fakes, and the list its ``on_acting`` hook appends to."""
    acting: list[Any] = []
    ctx = ActionContext(
        page,
        inspector,
        FAST,
        lambda entry, handle: acting.append(handle.name),  # type: ignore[arg-type]
        ChangeTracker(page, inspector),
    )  # type: ignore[arg-type]
    return ctx, acting
