"""The executor: every page action, checked before and verified after (SPEC A1-A6).

Like a careful person: act only on what a snapshot showed, only when it can really be acted
on (actionability, A2), with the event sequences frameworks listen to (A3), then wait for the
page to settle and prove what changed (A4). Batches run in order and stop at the first
failure, navigation or significant structural change (A5). Coordinates are computed here,
never accepted from the agent.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from . import facts as F
from .errors import ToolFailure
from .inspector import Inspector, InspectResult, SnapshotElement
from .keyboard import KeyPress, parse_key, text_keys
from .page import Page, PageState
from .protocol import (
    ActionBatchResult,
    ErrorCode,
    PageChanges,
    PageDialog,
    PageToolRequest,
    PageToolResult,
    StepResult,
)
from .scanner import is_fillable
from .snapshots import ElementEntry, Snapshot

HIT_TEST_BACKOFF_MS = (0, 20, 100, 250)
WAIT_POLL_S = 0.1
MAX_COMBOBOX_KEY_STEPS = 200
# An option that is not visible yet gets this long, and at least this many animation frames
# (popups animate in on frames, which a background tab gets at 1 Hz), within the cap.
OPTION_WAIT_S, OPTION_WAIT_FRAMES, OPTION_WAIT_CAP_S, OPTION_POLL_S = 1.0, 4, 5.0, 0.05
TYPED_CHARS_LIMIT = 500  # per-character key events beyond this are inserted in one piece
ELEMENT_ACTIONS_NEEDING_REF = frozenset({"focus", "fill", "select", "check", "uncheck", "click"})

# Value formats of the input types whose value is not free text (HTML §4.10.5.1).
VALUE_FORMATS: dict[str, tuple[re.Pattern[str], str]] = {
    "date": (re.compile(r"^\d{4}-\d{2}-\d{2}$"), "YYYY-MM-DD"),
    "time": (re.compile(r"^\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$"), "HH:MM or HH:MM:SS"),
    "datetime-local": (re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$"), "YYYY-MM-DDTHH:MM"),
    "month": (re.compile(r"^\d{4}-\d{2}$"), "YYYY-MM"),
    "week": (re.compile(r"^\d{4}-W\d{2}$"), "YYYY-Www"),
    "color": (re.compile(r"^#[0-9a-fA-F]{6}$"), "#rrggbb"),
    "number": (re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$"), "a number"),
    "range": (re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$"), "a number"),
}


@dataclass(frozen=True, slots=True)
class SettlePolicy:
    """Seed 000 §4 defaults: at least 250 ms, then a 500 ms quiet window, capped at 5 s.

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


class Authorizer(Protocol):
    """Decides whether one step may run (the authorization center plugs in here, SPEC P).
    Raises ``ToolFailure`` (permission_denied, user_rejected, ...) to refuse."""

    async def __call__(self, action: Any, entry: ElementEntry | None) -> None: ...


async def allow_everything(action: Any, entry: ElementEntry | None) -> None:
    return None


StepListener = Callable[[str, dict[str, Any]], None]
# Called once per step on the element about to be acted on, after the actionability checks
# (scrolled into view, stable, hit test passed) and before the act: where the element really
# is now, so the target highlight is drawn there (issue 6 item 7), not where it was before
# scrolling. Arguments: the ref's entry and the element acted on (a custom checkbox's label).
ActingListener = Callable[[ElementEntry, Any], None]

Signature = tuple[str, str, str, str]
Summary = list[tuple[Signature, tuple[Any, ...]]]


@dataclass(slots=True)
class Baseline:
    """What the agent saw at its last snapshot, for ``page_observe``. The summary is made
    when an observe compares with it, not at every ``page_inspect``: a whole-page snapshot
    lists thousands of elements, and summarising them showed in its profile."""

    snapshot_id: str
    include_offscreen: bool
    elements: Sequence[SnapshotElement]  # inspector.SnapshotElements: made when read
    messages: list[tuple[str, str]]

    @property
    def summary(self) -> Summary:
        return [((e.role, e.label, _tag_of(e), e.type), (_masked_value(e), e.checked, e.expanded, e.selected, e.disabled))
                for e in self.elements]


class Executor:
    def __init__(
        self,
        page: Page,
        inspector: Inspector,
        settle: SettlePolicy | None = None,
        authorize: Callable[[Any, ElementEntry | None], Awaitable[None]] = allow_everything,
        on_step: StepListener | None = None,
        on_acting: ActingListener | None = None,
    ) -> None:
        self._page = page
        self._inspector = inspector
        self._settle = settle or SettlePolicy()
        self._authorize = authorize
        self._on_step = on_step or (lambda event, detail: None)
        self._on_acting = on_acting or (lambda entry, handle: None)
        self._baseline: Baseline | None = None

    def state(self) -> PageState:
        return self._inspector.state()

    # -- batches (SPEC A5) --------------------------------------------------------------

    async def run_actions(self, request: PageToolRequest) -> PageToolResult:
        start = self.state()
        actions = request.actions or []
        writes = any(a.action not in ("observe", "wait") for a in actions)
        before = self._summary(include_offscreen=True) if writes else None
        messages_before = self._messages() if writes else []
        steps: list[StepResult] = []
        dialogs: list[PageDialog] = []
        stopped_at: int | None = None
        error = None
        previous = before
        for index, action in enumerate(actions):
            current = self.state()
            if index > 0 and (current.navigations != start.navigations or current.url != start.url):
                stopped_at = index
                error = ToolFailure(
                    ErrorCode.NAVIGATED,
                    f"the page navigated during the batch; the remaining {len(actions) - index} action(s) were not run. Call page_inspect again",
                ).to_error()
                break
            if index > 0 and previous is not None and steps and steps[-1].action not in ("observe", "wait", "scroll", "focus"):
                # Against the page the batch was planned on, not the previous step: popups a
                # step opened and closed again (date pickers, menus) are no structural change.
                now = self._summary(include_offscreen=True)
                reason = _structural_change(previous, now, _dialog_count(messages_before), _dialog_count(self._messages()))
                if reason:
                    stopped_at = index
                    error = ToolFailure(
                        ErrorCode.STRUCTURE_CHANGED,
                        f"{reason}; the remaining {len(actions) - index} action(s) were not run. Call page_inspect again",
                    ).to_error()
                    break
            began = time.monotonic()
            element_id = getattr(action, "element_id", None)
            self._on_step("step_started", {"index": index, "action": action.action, "elementId": element_id})
            try:
                outcome, label = await self._step(action, request.snapshot_id)
                dialogs.extend(outcome.pop("_dialogs", []))
                duration_ms = (time.monotonic() - began) * 1000
                timing = outcome.pop("_timing", None)
                if timing is not None:
                    # Where the time went: checks (ref, actionability), the act, settling.
                    action_ms, settle_ms = timing[0] * 1000, timing[1] * 1000
                    outcome["timing"] = {
                        "checksMs": round(max(0.0, duration_ms - action_ms - settle_ms), 1),
                        "actionMs": round(action_ms, 1),
                        "settleMs": round(settle_ms, 1),
                    }
                step = StepResult(
                    index=index, action=action.action, element_id=element_id, success=True,
                    duration_ms=round(duration_ms, 1), target_label=label, outcome=outcome,
                )
            except ToolFailure as failure:
                step = StepResult(
                    index=index, action=action.action, element_id=element_id, success=False,
                    duration_ms=round((time.monotonic() - began) * 1000, 1), error=failure.to_error(),
                )
                stopped_at = index
                error = failure.to_error()
            steps.append(step)
            self._on_step("step_finished", step.to_wire())
            if error is not None:
                break
        changes = self.changes_since(start, before=before, messages_before=messages_before, dialogs=dialogs)
        return PageToolResult(
            request_id=request.request_id,
            success=error is None,
            page_version=changes.page_version,
            result=ActionBatchResult(steps=steps, changes=changes).to_wire(),
            stopped_at=stopped_at,
            error=error,
        )

    async def _step(self, action: Any, default_snapshot: str | None) -> tuple[dict[str, Any], str]:
        kind = action.action
        if kind == "observe":
            await self._authorize(action, None)
            return self.observe().to_wire(), ""
        if kind == "wait":
            await self._authorize(action, None)
            return await self._wait(action), ""
        entry = row = None
        if getattr(action, "element_id", None):
            snapshot_id = action.snapshot_id or default_snapshot
            if snapshot_id is None:
                raise ToolFailure(ErrorCode.INVALID_REQUEST, f"{kind} needs the snapshotId of the element's snapshot")
            entry, row = self._inspector.resolve(snapshot_id, action.element_id)
        elif kind in ELEMENT_ACTIONS_NEEDING_REF:
            raise ToolFailure(ErrorCode.INVALID_REQUEST, f"{kind} needs an elementId")
        await self._authorize(action, entry)
        label = entry.label if entry else ""
        if kind == "scroll":
            return await self._scroll(action, entry), label
        if kind == "keyboard":
            return await self._keyboard(action, entry, row), label
        assert entry is not None and row is not None
        if kind == "click":
            return await self._click(entry, row), label
        if kind == "focus":
            return await self._focus(entry, row), label
        if kind == "fill":
            return await self._fill(entry, row, action.value), label
        if kind == "select":
            return await self._select(entry, row, list(action.values)), label
        if kind in ("check", "uncheck"):
            return await self._set_checked(entry, row, kind == "check"), label
        raise ToolFailure(ErrorCode.UNSUPPORTED, f"the {kind} action is not supported")

    # -- actionability (SPEC A2) --------------------------------------------------------

    def _name(self, entry: ElementEntry) -> str:
        return f'{entry.role} "{entry.label}"' if entry.label else entry.role

    async def _actionable(self, entry: ElementEntry, row: list[Any], *, editable: bool = False, hit: bool = True, handle: Any = None) -> tuple[float, float]:
        """Visible, enabled, editable when asked, stable, scrolled into view and, for pointer
        actions, receiving the pointer at its centre. Each failure has its own code."""
        handle = handle if handle is not None else entry.handle
        if not self._page.is_rendered(handle):
            raise ToolFailure(ErrorCode.NOT_VISIBLE, f"{self._name(entry)} is not visible", element_id=entry.element_id)
        if row[F.DISABLED] or row[F.ARIA_DISABLED] == "true":
            raise ToolFailure(ErrorCode.NOT_ENABLED, f"{self._name(entry)} is disabled", element_id=entry.element_id)
        if editable and (row[F.READONLY] or row[F.ARIA_READONLY] == "true"):
            raise ToolFailure(ErrorCode.NOT_EDITABLE, f"{self._name(entry)} is read-only", element_id=entry.element_id)
        self._page.scroll_into_view(handle)
        await self._wait_stable(entry, handle)
        if not hit:
            self._on_acting(entry, handle)
            return 0.0, 0.0
        result: dict[str, Any] = {}
        for delay in HIT_TEST_BACKOFF_MS:
            if delay:
                await asyncio.sleep(delay / 1000)
            result = self._page.hit_test(handle)
            if result["ok"]:
                self._on_acting(entry, handle)
                return result["x"], result["y"]
        raise ToolFailure(
            ErrorCode.OBSCURED,
            f"{self._name(entry)} is covered by {result.get('hit', 'another element')}; nothing was done",
            element_id=entry.element_id,
            details={"coveredBy": result.get("hit", "")},
        )

    async def _wait_stable(self, entry: ElementEntry, handle: Any, attempts: int = 10) -> None:
        """Same box over two consecutive animation frames (like Playwright's "stable")."""
        previous = None
        for _ in range(attempts):
            await self._page.next_frame()
            row = self._page.row_of(handle)
            box = (row[F.X], row[F.Y], row[F.WIDTH], row[F.HEIGHT])
            if box == previous:
                return
            previous = box
        raise ToolFailure(ErrorCode.NOT_STABLE, f"{self._name(entry)} kept moving", element_id=entry.element_id)

    async def _guarded(self, perform: Callable[[], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
        """Run one write with page dialogs intercepted, then settle (SPEC A4, A6)."""
        guard = self._page.intercept_dialogs()
        try:
            began = time.monotonic()
            outcome = await perform()
            acted = time.monotonic()
            outcome["settle"] = await self.settle()
            outcome["_timing"] = (acted - began, time.monotonic() - acted)
        finally:
            raised = guard.restore()
        answers = {"alert": "ok", "confirm": "false", "prompt": "null"}
        dialogs = [PageDialog(type=kind, message=message, answered=answers[kind]) for kind, message in raised]
        if dialogs:
            outcome["dialogs"] = [d.to_wire() for d in dialogs]
            outcome["_dialogs"] = dialogs
        return outcome

    # -- actions --------------------------------------------------------------------------

    async def _click(self, entry: ElementEntry, row: list[Any]) -> dict[str, Any]:
        x, y = await self._actionable(entry, row)

        async def perform() -> dict[str, Any]:
            self._page.click(entry.handle, x, y)
            return {"clicked": True}

        outcome = await self._guarded(perform)
        outcome.update(self._target_state(entry))
        return outcome

    async def _focus(self, entry: ElementEntry, row: list[Any]) -> dict[str, Any]:
        await self._actionable(entry, row, hit=False)
        if not self._page.act("focusElement", entry.handle):
            raise ToolFailure(ErrorCode.VERIFICATION_FAILED, f"{self._name(entry)} did not take focus", element_id=entry.element_id)
        return {"focused": True}

    async def _fill(self, entry: ElementEntry, row: list[Any], value: str) -> dict[str, Any]:
        if row[F.TAG] == "select":
            return await self._select(entry, row, [value])
        if not is_fillable(row):
            raise ToolFailure(
                ErrorCode.NOT_EDITABLE,
                f"{self._name(entry)} cannot be filled; use page_click, page_check or page_select for it",
                element_id=entry.element_id,
            )
        input_type = row[F.TYPE] if row[F.TAG] == "input" else ""
        if input_type in VALUE_FORMATS and value != "":
            pattern, expected = VALUE_FORMATS[input_type]
            if not pattern.match(value):
                raise ToolFailure(
                    ErrorCode.INVALID_REQUEST,
                    f"{value!r} is not a valid value for a {input_type} field; give {expected}. Nothing was done",
                    element_id=entry.element_id,
                )
        await self._actionable(entry, row, editable=True)
        previous = self._page.read_value(entry.handle)

        async def perform() -> dict[str, Any]:
            immediate = self._page.act("fill", entry.handle, value)
            await self._page.next_frame()
            after_frame = self._page.read_value(entry.handle)
            after_blur = self._page.act("blur", entry.handle)
            return {"readBack": {"immediate": immediate, "afterFrame": after_frame, "afterBlur": after_blur}}

        outcome = await self._guarded(perform)
        final = self._page.read_value(entry.handle)
        expected_value = " ".join(value.split()) if row[F.CONTENTEDITABLE] else value
        if final == expected_value:
            status = "applied"
        elif value != "" and final in ("", previous):
            raise ToolFailure(
                ErrorCode.VERIFICATION_FAILED,
                f"the page reverted the value of {self._name(entry)}",
                element_id=entry.element_id,
                details={"status": "reverted", **({} if entry.sensitive else outcome["readBack"])},
            )
        else:
            status = "reformatted"
        outcome["status"] = status
        if entry.sensitive:  # SPEC P5: never echo a sensitive value
            outcome.pop("readBack", None)
        else:
            outcome["value"] = final
        return outcome

    async def _select(self, entry: ElementEntry, row: list[Any], values: list[str]) -> dict[str, Any]:
        if row[F.TAG] == "select":
            return await self._select_native(entry, row, values)
        if entry.role in ("combobox", "listbox") or row[F.ROLE] in ("combobox", "listbox"):
            return await self._select_aria(entry, row, values)
        raise ToolFailure(
            ErrorCode.UNSUPPORTED,
            f"{self._name(entry)} is not a select, combobox or listbox",
            element_id=entry.element_id,
        )

    async def _select_native(self, entry: ElementEntry, row: list[Any], values: list[str]) -> dict[str, Any]:
        if len(values) > 1 and not row[F.MULTIPLE]:
            raise ToolFailure(ErrorCode.INVALID_REQUEST, f"{self._name(entry)} takes one value", element_id=entry.element_id)
        await self._actionable(entry, row)
        holder: dict[str, Any] = {}

        async def perform() -> dict[str, Any]:
            chosen, missing = self._page.act("selectNative", entry.handle, values)
            holder["missing"] = missing
            return {"selected": chosen}

        outcome = await self._guarded(perform)
        if holder["missing"]:
            options = [o[1] for o in row[F.OPTIONS] or ()]
            raise ToolFailure(
                ErrorCode.NOT_FOUND,
                f"no option {', '.join(map(repr, holder['missing']))} in {self._name(entry)}; nothing was changed",
                element_id=entry.element_id,
                details={"options": options[:50]},
            )
        now = self._page.row_of(entry.handle)
        selected = [o for o in now[F.OPTIONS] or () if o[2]]
        wanted = {v.strip().lower() for v in values}
        if not all(o[0].lower() in wanted or o[1].strip().lower() in wanted for o in selected) or len(selected) != len(values):
            raise ToolFailure(
                ErrorCode.VERIFICATION_FAILED,
                f"{self._name(entry)} shows {[o[1] for o in selected]} after selecting {values}",
                element_id=entry.element_id,
            )
        outcome["selected"] = [o[0] for o in selected]
        outcome["labels"] = [o[1] for o in selected]
        return outcome

    async def _select_aria(self, entry: ElementEntry, row: list[Any], values: list[str]) -> dict[str, Any]:
        """ARIA combobox/listbox (SPEC A1): open, find each option through aria-controls /
        aria-owns / aria-activedescendant (portals included), choose it, verify the choice."""
        x, y = await self._actionable(entry, row)
        chosen: list[str] = []
        methods: list[str] = []

        async def perform() -> dict[str, Any]:
            for wanted in values:
                if entry.role == "combobox" and self._page.row_of(entry.handle)[F.ARIA_EXPANDED] != "true":
                    self._page.click(entry.handle, x, y)
                    await self.settle(short=True)
                label, method = await self._choose_option(entry, wanted)
                chosen.append(label)
                methods.append(method)
                await self.settle(short=True)
            return {}

        outcome = await self._guarded(perform)
        if entry.role == "combobox" and self._page.row_of(entry.handle)[F.ARIA_EXPANDED] == "true":
            # Multiple-choice widgets stay open after a pick; close it as a person would, so
            # the popup does not cover what comes next.
            await self._press(entry.handle, parse_key("Escape"))
            await self.settle(short=True)
        shown = self._page.act("comboboxDisplay", entry.handle).lower()
        missing = [label for label in chosen if label.lower() not in shown]
        if missing:
            raise ToolFailure(
                ErrorCode.VERIFICATION_FAILED,
                f"{self._name(entry)} does not show {missing} after choosing it",
                element_id=entry.element_id,
                details={"shown": shown[:200]},
            )
        outcome.update({"selected": chosen, "via": methods})
        return outcome

    async def _choose_option(self, entry: ElementEntry, wanted: str) -> tuple[str, str]:
        # Popups animate in (opacity from 0, no DOM mutation to wait for): give the option
        # time and frames to become visible before falling back, like Playwright's auto-wait.
        began = time.monotonic()
        with FrameCounter(self._page) as frames:
            while True:
                facts, _handles, _active = self._page.aria_options(entry.handle)
                match = _find_option(facts, wanted)
                label = facts[match][0] if match is not None else wanted
                if (match is not None and facts[match][3]) or self._page.visible_text_matches(label):
                    break
                waited = time.monotonic() - began
                if (waited >= OPTION_WAIT_S and frames.count >= OPTION_WAIT_FRAMES) or waited >= OPTION_WAIT_CAP_S:
                    break
                await asyncio.sleep(OPTION_POLL_S)
        return await self._pick_option(entry, wanted)

    async def _pick_option(self, entry: ElementEntry, wanted: str) -> tuple[str, str]:
        facts, handles, _active = self._page.aria_options(entry.handle)
        match = _find_option(facts, wanted)
        if match is not None and facts[match][3]:
            option = handles[match]
            hit = self._page.hit_test(option)
            if hit["ok"]:
                self._page.click(option, hit["x"], hit["y"])
                return facts[match][0], "option"
        label = facts[match][0] if match is not None else wanted
        # Options rendered without ARIA roles (or a hidden accessibility list beside a visual
        # one): the visible element showing exactly that label, outside the combobox itself.
        visible = [h for h in self._page.visible_text_matches(label) if self._page.hit_test(h)["ok"]]
        if visible:
            target = visible[-1]  # portals are appended at the end of <body>
            hit = self._page.hit_test(target)
            self._page.click(target, hit["x"], hit["y"])
            return label, "visible-text"
        if match is not None:
            # Keyboard: move the active descendant until it is the wanted option, then Enter.
            for _ in range(MAX_COMBOBOX_KEY_STEPS):
                _facts, _handles, active = self._page.aria_options(entry.handle)
                if active.strip().lower() == label.strip().lower():
                    await self._press(entry.handle, parse_key("Enter"))
                    return label, "keyboard"
                await self._press(entry.handle, parse_key("ArrowDown"))
                await self._page.next_frame()
        raise ToolFailure(
            ErrorCode.NOT_FOUND,
            f"no option {wanted!r} in {self._name(entry)}",
            element_id=entry.element_id,
            details={"options": [f[0] for f in facts][:50]},
        )

    async def _set_checked(self, entry: ElementEntry, row: list[Any], want: bool) -> dict[str, Any]:
        control = self._page.act("controlOf", entry.handle) or entry.handle
        control_row = self._page.row_of(control)
        native = control_row[F.CHECKED] >= 0
        if not native and control_row[F.ARIA_CHECKED] not in ("true", "false", "mixed") and entry.role not in ("checkbox", "radio", "switch", "menuitemcheckbox", "menuitemradio"):
            raise ToolFailure(ErrorCode.UNSUPPORTED, f"{self._name(entry)} is not a checkbox, radio or switch", element_id=entry.element_id)
        is_radio = control_row[F.TYPE] == "radio" or entry.role in ("radio", "menuitemradio")
        if not want and is_radio:
            raise ToolFailure(
                ErrorCode.INVALID_REQUEST,
                f"{self._name(entry)} is a radio button; check another option of its group instead",
                element_id=entry.element_id,
            )
        current = _checked(control_row)
        if current is want:
            return {"changed": False, "checked": want}
        # A custom control backed by a hidden input is operated through what the user sees:
        # the element of the ref if rendered, else the input's label.
        target = entry.handle
        if not self._page.is_rendered(target):
            label = self._page.act("labelFor", control)
            if label is not None and self._page.is_rendered(label):
                target = label
        target_row = self._page.row_of(target) if target is not entry.handle else row
        x, y = await self._actionable(entry, target_row, handle=target)

        async def perform() -> dict[str, Any]:
            self._page.click(target, x, y)
            return {}

        outcome = await self._guarded(perform)
        after = _checked(self._page.row_of(control))
        if after is not want:
            raise ToolFailure(
                ErrorCode.VERIFICATION_FAILED,
                f"{self._name(entry)} is still {'checked' if after else 'unchecked'} after clicking it",
                element_id=entry.element_id,
            )
        outcome.update({"changed": True, "checked": want})
        return outcome

    async def _scroll(self, action: Any, entry: ElementEntry | None) -> dict[str, Any]:
        handle = entry.handle if entry else None
        state = self._page.scroll_state(handle)
        if entry is not None and not state[6]:
            # Not a scroll container: "scroll to the element" (SPEC A1).
            moved = self._page.scroll_into_view(entry.handle)
            self._on_acting(entry, entry.handle)
            outcome: dict[str, Any] = {"scrolledIntoView": True, "moved": bool(moved)}
            outcome["settle"] = await self.settle(short=True)
            return outcome
        left, top, max_left, max_top, width, height, _ = state
        if entry is not None:
            self._on_acting(entry, entry.handle)
        vertical = action.direction in ("up", "down")
        sign = 1 if action.direction in ("down", "right") else -1
        if action.amount == "page":
            delta = 0.9 * (height if vertical else width)
        elif action.amount == "end":
            edge = (max_top if vertical else max_left) if sign > 0 else 0
            delta = abs(edge - (top if vertical else left))
        else:
            delta = float(action.amount)
        dx, dy = (0.0, sign * delta) if vertical else (sign * delta, 0.0)
        if handle is None:
            before_x, before_y, after_x, after_y = self._page.scroll_page(dx, dy)
        else:
            before_x, before_y, after_x, after_y = self._page.scroll_element(handle, dx, dy)
        moved = (before_x, before_y) != (after_x, after_y)
        outcome = {
            "moved": moved,
            "scrollX": after_x,
            "scrollY": after_y,
            "target": "element" if handle is not None else "page",
        }
        if not moved:
            outcome["note"] = f"already at the {action.direction} edge"
        outcome["settle"] = await self.settle(short=True)
        return outcome

    async def _keyboard(self, action: Any, entry: ElementEntry | None, row: list[Any] | None) -> dict[str, Any]:
        """SPEC A1: text, named keys and combos, with the default actions synthetic events
        do not get from the browser emulated, and reported."""
        if entry is not None and row is not None:
            await self._actionable(entry, row, hit=False)
            self._page.act("focusElement", entry.handle)
        target = self._page.active_element()
        emulated: list[str] = []
        presses = [parse_key(action.key)] if action.key is not None else text_keys(action.text)

        async def perform() -> dict[str, Any]:
            nonlocal target
            prevented = 0
            bulk = ""
            for position, press in enumerate(presses):
                if action.text is not None and position >= TYPED_CHARS_LIMIT:
                    bulk = action.text[position:]
                    break
                done, target = await self._press(target, press, emulated)
                prevented += 0 if done else 1
            if bulk and target is not None and self._editable(target):
                self._page.act("insertText", target, bulk)
                emulated.append(f"insertText({len(bulk)} chars at once)")
            return {"keys": len(presses), "prevented": prevented}

        outcome = await self._guarded(perform)
        outcome["emulated"] = emulated
        return outcome

    def _editable(self, handle: Any) -> bool:
        row = self._page.row_of(handle)
        return bool(row[F.CONTENTEDITABLE]) or (
            row[F.TAG] in ("input", "textarea") and is_fillable(row) and not row[F.READONLY] and not row[F.DISABLED]
        )

    async def _press(self, target: Any, press: KeyPress, emulated: list[str] | None = None) -> tuple[bool, Any]:
        """One key press: keydown, keypress, default action, keyup. Returns (default action
        allowed, the element focused afterwards)."""
        emulated = emulated if emulated is not None else []
        init = press.event_init()
        for modifier in press.modifier_presses():
            self._page.act("dispatchKey", target, "keydown", modifier)
        allowed = bool(self._page.act("dispatchKey", target, "keydown", init))
        if allowed and press.produces_keypress:
            allowed = bool(self._page.act("dispatchKey", target, "keypress", {**init, "charCode": press.char_code}))
        if allowed:
            target = self._default_action(target, press, emulated)
        self._page.act("dispatchKey", target, "keyup", init)
        for modifier in reversed(press.modifier_presses()):
            self._page.act("dispatchKey", target, "keyup", modifier)
        return allowed, target

    def _default_action(self, target: Any, press: KeyPress, emulated: list[str]) -> Any:
        row = self._page.row_of(target) if target is not None else None
        tag = row[F.TAG] if row else ""
        editable = target is not None and self._editable(target)
        key = press.key
        if press.is_select_all:
            if target is not None and self._page.act("selectAll", target):
                emulated.append("selectAll")
            return target
        if press.has_command_modifier:
            return target  # shortcuts belong to the page; nothing else is emulated
        if press.is_printable and editable:
            self._page.act("insertText", target, key)
            emulated.append("insertText")
        elif key in ("Backspace", "Delete") and editable:
            self._page.act("deleteText", target, key == "Delete")
            emulated.append("delete")
        elif key == "Enter":
            if editable and (tag == "textarea" or row[F.CONTENTEDITABLE]):
                self._page.act("insertText", target, "\n")
                emulated.append("insertLineBreak")
            elif tag == "input" and self._page.act("submitImplicitly", target):
                emulated.append("submitForm")
            elif target is not None and (tag in ("button", "a", "summary") or (row and row[F.ROLE] in ("button", "link", "menuitem", "tab", "option"))):
                self._page.act("activate", target)
                emulated.append("activate")
        elif key == " " and target is not None and not editable:
            if tag in ("button", "summary") or (tag == "input" and row[F.TYPE] in ("checkbox", "radio", "button", "submit", "reset")) or (row and row[F.ROLE] in ("button", "checkbox", "switch", "radio", "menuitem", "tab", "option")):
                self._page.act("activate", target)
                emulated.append("activate")
        elif key == "Tab":
            moved = self._page.move_focus(target, press.shift)
            if moved is not None:
                emulated.append("focusPrevious" if press.shift else "focusNext")
                return moved
        elif key in ("ArrowDown", "ArrowRight", "ArrowUp", "ArrowLeft") and target is not None:
            delta = 1 if key in ("ArrowDown", "ArrowRight") else -1
            if tag == "input" and row[F.TYPE] == "radio":
                moved = self._page.act("stepRadio", target, delta)
                if moved is not None:
                    emulated.append("checkNextRadio")
                    return moved
            elif tag == "select" and self._page.act("stepSelect", target, delta):
                emulated.append("changeSelection")
        return target

    async def _wait(self, action: Any) -> dict[str, Any]:
        began = time.monotonic()
        if action.time_ms is not None:
            await asyncio.sleep(action.time_ms / 1000)
            return {"waitedMs": action.time_ms}
        wanted = (action.text if action.text is not None else action.text_gone).casefold()
        appear = action.text is not None
        while True:
            present = wanted in " ".join(self._page.page_text().split()).casefold()
            elapsed = (time.monotonic() - began) * 1000
            if present == appear:
                return {"waitedMs": round(elapsed), "condition": "text appeared" if appear else "text gone"}
            if elapsed >= action.timeout_ms:
                raise ToolFailure(
                    ErrorCode.TIMEOUT,
                    f"the text {'did not appear' if appear else 'was still there'} within {action.timeout_ms} ms",
                )
            await asyncio.sleep(WAIT_POLL_S)

    # -- settle and changes (SPEC A4, seed 004 §6.6) --------------------------------------

    async def settle(self, *, short: bool = False) -> dict[str, Any]:
        """Wait for the page to go quiet: a minimum, then a quiet window and enough animation
        frames for frame-deferred work, capped. Ends early on navigation (the old page's work
        is over). ``short`` is for steps inside one action."""
        policy = self._settle
        minimum, quiet_window, cap = (
            (policy.minimum_ms / 5, policy.quiet_ms / 5, policy.cap_ms / 5) if short else (policy.minimum_ms, policy.quiet_ms, policy.cap_ms)
        )
        frames_needed = 1 if short else policy.frames
        began = time.monotonic()
        with FrameCounter(self._page) as frames:
            _m, navigations, _q, _u, _t = self._page.counters()
            await asyncio.sleep(minimum / 1000)
            while True:
                _m, now_navigations, quiet_ms, _u, _t = self._page.counters()
                elapsed = (time.monotonic() - began) * 1000
                if now_navigations != navigations:
                    return {"waitedMs": round(elapsed), "capped": False, "navigated": True}
                if quiet_ms >= quiet_window and frames.count >= frames_needed:
                    return {"waitedMs": round(elapsed), "capped": False}
                if elapsed >= cap:
                    return {"waitedMs": round(elapsed), "capped": True}
                await asyncio.sleep(policy.poll_ms / 1000)

    def _summary(self, *, include_offscreen: bool) -> Summary:
        """Interactive elements of the page as (signature, state) pairs; no snapshot is made,
        so the agent's refs are untouched."""
        with self._inspector.live_scan(include_offscreen=include_offscreen) as (_facts, scanned, _viewport):
            items = scanned.elements
        return [
            ((item.role, item.label, item.tag, item.type), (item.value, item.checked, item.expanded, item.selected, item.disabled))
            for item in items
        ]

    def _messages(self) -> list[tuple[str, str]]:
        return [(kind, text) for kind, text in self._page.live_messages()]

    def _target_state(self, entry: ElementEntry) -> dict[str, Any]:
        if not self._page.is_connected(entry.handle):
            return {"targetRemoved": True}
        row = self._page.row_of(entry.handle)
        state: dict[str, Any] = {}
        checked = _checked(row)
        if checked is not None:
            state["checked"] = checked
        if row[F.ARIA_EXPANDED] in ("true", "false"):
            state["expanded"] = row[F.ARIA_EXPANDED] == "true"
        return state

    def changes_since(
        self,
        before_state: PageState | Snapshot,
        *,
        before: Summary | None = None,
        messages_before: list[tuple[str, str]] | None = None,
        dialogs: list[PageDialog] | None = None,
        include_offscreen: bool = True,
    ) -> PageChanges:
        now = self.state()
        if isinstance(before_state, Snapshot):
            ref_url, ref_title, ref_version = before_state.url, before_state.title, before_state.page_version
            ref_nav, ref_mut = before_state.navigation_epoch, before_state.mutations
        else:
            ref_url, ref_title, ref_version = before_state.url, before_state.title, before_state.version
            ref_nav, ref_mut = before_state.navigations, before_state.mutations
        added = removed = updated = 0
        if before is not None:
            added, removed, updated = _diff(before, self._summary(include_offscreen=include_offscreen))
        messages: list[str] = []
        if messages_before is not None:
            seen = set(messages_before)
            messages = [f"{kind}: {text}" for kind, text in self._messages() if (kind, text) not in seen]
        return PageChanges(
            url=now.url,
            title=now.title,
            page_version=now.version,
            url_changed=now.url != ref_url,
            title_changed=now.title != ref_title,
            page_version_changed=now.version != ref_version,
            navigated=now.navigations != ref_nav or now.url != ref_url,
            mutations=max(0, now.mutations - ref_mut) if now.navigations == ref_nav else now.mutations,
            messages=messages,
            added=added,
            removed=removed,
            updated=updated,
            dialogs=dialogs or [],
        )

    def remember_snapshot(self, snapshot: InspectResult, include_offscreen: bool) -> None:
        """Called after each page_inspect: the baseline ``page_observe`` compares with."""
        self._baseline = Baseline(
            snapshot_id=snapshot.snapshot_id,
            include_offscreen=include_offscreen,
            elements=snapshot.elements,
            messages=self._messages(),
        )

    def observe(self) -> PageChanges:
        """Seed 004 §6.6: what changed since the last snapshot."""
        latest = self._inspector.store.latest()
        baseline = self._baseline if latest is not None and self._baseline and self._baseline.snapshot_id == latest.snapshot_id else None
        if latest is None:
            return self.changes_since(self.state())
        if baseline is None:
            return self.changes_since(latest)
        return self.changes_since(
            latest, before=baseline.summary, messages_before=baseline.messages, include_offscreen=baseline.include_offscreen,
        )


def _dialog_count(messages: list[tuple[str, str]]) -> int:
    return sum(1 for kind, _text in messages if kind in ("dialog", "alertdialog"))


def _tag_of(element: Any) -> str:
    """The tag is not part of the wire model; the summary of a live scan uses the real tag,
    so compare on what both sides know (role, label, type) by leaving the tag out."""
    return ""


def _masked_value(element: Any) -> Any:
    """A snapshot element's value as a live scan (always masked) reports it, so a snapshot
    with released sensitive values (SPEC P5) does not show them as changed in page_observe."""
    if element.sensitive and element.value not in (None, ""):
        return None
    return element.value


def _checked(row: list[Any]) -> bool | None:
    if row[F.CHECKED] >= 0:
        return row[F.CHECKED] == 1
    if row[F.ARIA_CHECKED] in ("true", "false"):
        return row[F.ARIA_CHECKED] == "true"
    return None


def _find_option(facts: list[list[Any]], wanted: str) -> int | None:
    """An option by value, exact label, then trimmed case-insensitive label."""
    for index, (_label, value, *_rest) in enumerate(facts):
        if value and value == wanted:
            return index
    for index, (label, *_rest) in enumerate(facts):
        if label == wanted:
            return index
    folded = " ".join(wanted.split()).casefold()
    for index, (label, *_rest) in enumerate(facts):
        if " ".join(label.split()).casefold() == folded:
            return index
    return None


def _diff(before: Summary, after: Summary) -> tuple[int, int, int]:
    """(added, removed, updated) between two summaries, pairing by signature in order."""
    def grouped(summary: Summary) -> dict[Signature, list[tuple[Any, ...]]]:
        out: dict[Signature, list[tuple[Any, ...]]] = {}
        for signature, state in summary:
            out.setdefault(_loose(signature), []).append(state)
        return out

    old, new = grouped(before), grouped(after)
    added = removed = updated = 0
    for signature in old.keys() | new.keys():
        a, b = old.get(signature, []), new.get(signature, [])
        common = min(len(a), len(b))
        updated += sum(1 for i in range(common) if a[i] != b[i])
        added += max(0, len(b) - common)
        removed += max(0, len(a) - common)
    return added, removed, updated


def _loose(signature: Signature) -> Signature:
    role, label, _tag, kind = signature
    return (role, label, "", kind)


def _structural_change(before: Summary, after: Summary, dialogs_before: int, dialogs_now: int) -> str | None:
    """A5: a dialog opened, or most of the elements the batch was planned against are gone.
    Either way the remaining steps' refs describe a page that no longer exists."""
    if dialogs_now > dialogs_before:
        return "a dialog opened"
    if not before:
        return None
    _added, removed, _updated = _diff(before, after)
    if removed > max(3, len(before) // 2):
        return f"{removed} of the {len(before)} interactive elements went away"
    return None
