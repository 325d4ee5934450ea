"""The user's side of every task: confirmations, the action log, pause, stop and takeover.

The agent's requests and the user's input meet here (SPEC P1-P6, U1-U3):

* ``begin_request`` / ``end_request`` wrap each tool request: a paused or stopped task
  refuses it (``user_takeover`` / ``user_stopped``), otherwise it opens or extends the task.
* ``authorize`` is the executor's hook, awaited before every step: scope, level, risk, and
  under ``per_action`` a confirmation card the user answers with real input.
* ``on_acting`` is the executor's hook after the actionability checks: the target highlight
  is drawn there, where the element is once scrolled into view.
* ``on_step`` feeds the action log.
* ``release_sensitive_values`` decides whether a snapshot may carry sensitive values (P5).
* ``on_ui`` receives what the user did in the panel. Only input the browser marks
  ``isTrusted`` counts (SPEC U2); a card's answer must also carry that card's nonce, so a
  stale card, a replayed answer or a page script calling ``click()`` approves nothing.
* ``on_takeover``: real pointer or key input on the page (outside the SDK UI) while a task
  runs pauses it; the next result tells the agent (SPEC U3).
* ``ask_user`` runs ``page_ask_user`` (SPEC U5): the question is shown in the panel (a badge
  on the closed panel's indicator) and only the user's trusted input answers it, by a choice
  or by typing; the request's deadline ends it as ``timeout``.
* ``on_chat_event`` / ``on_chat_history`` show the panel's conversation: the answer streamed
  in as it is written, and the stored conversation (per user + origin + agent, kept by the
  backend) when the panel first runs after a reload or on the next page.

A task opens with the first tool request (or a chat message, or a ``task`` grant) and ends
when the user stops it, the chat turn that started it is done, the session changes, or no
request came for ``TASK_IDLE_S`` (an agent on the HTTP API has no other way to say it is
done). A ``task`` grant ends with its task; a refresh ends everything held in memory.

A task goes on to the tab's next page when its own action led there (SPEC B7): the
supervisor publishes the open task (``TaskRecord``: id, whether the ``task`` level is its,
the chat turn, the action log, when its last action ran) to the loader, whose pagehide
decides whether the navigation was the task's (``loader_js/tab.js``); the next page's
supervisor takes it up with ``continue_task``.

The panel's status is ``Supervisor.state``, a ``TaskState`` that moves only through
``Supervisor._move``, which checks each move against ``TRANSITIONS``: a move the table does
not list is a bug in this module and raises ``InvalidTransition``.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from ..errors import ToolFailure
from ..protocol import (
    AuditKind,
    ChatAction,
    ChatEvent,
    ChatEventKind,
    ChatHistory,
    ErrorCode,
    PageAuditEvent,
    PageToolRequest,
    PageToolResult,
)
from ..sitetools.runner import SiteToolView
from ..snapshot.store import ElementEntry
from . import i18n
from .authorization import (
    READ_ONLY_ACTIONS,
    AuthorizationCenter,
    Decision,
    Level,
    LevelChange,
)
from .risk import Risk, RiskReason, Target, classify, classify_site_tool
from .sensitive import is_sensitive_name

TASK_IDLE_S = 60.0
# A card's buttons ignore answers for this long after it appears, so a click already on its
# way (the user was clicking where the card popped up) cannot approve it. The panel also
# keeps the buttons disabled for this time.
CARD_ARM_S = 0.35
# A confirmation must end before its request times out, so the agent gets
# ``confirmation_timeout`` rather than a bare ``timeout``.
DEADLINE_MARGIN_S = 1.0
STOP_GRACE_S = 1.0
MASK = "••••••"
# The action log a task carries to the tab's next page: its last entries.
CARRIED_LOG_ENTRIES = 40


class TaskState(StrEnum):
    """What the panel's status shows (its value is the status the panel is sent)."""

    IDLE = "idle"  # no task, or a task between requests
    RUNNING = "running"  # a request or a chat turn is under way
    WAITING = "waiting"  # a confirmation card waits for the user
    PAUSED = "paused"  # the user paused or took over; requests answer user_takeover
    STOPPED = "stopped"  # the user stopped; requests answer user_stopped until Resume or chat


# Every move the supervisor makes, and nothing else. Stop and a request or chat message may come
# in any state but PAUSED (a request is refused there, a chat message first moves it to IDLE);
# a second request may start while a card waits (WAITING -> RUNNING); Pause is ignored when
# paused or stopped; a paused or stopped task leaves through Resume, a chat message or Stop.
TRANSITIONS: dict[TaskState, frozenset[TaskState]] = {
    TaskState.IDLE: frozenset(
        {TaskState.RUNNING, TaskState.WAITING, TaskState.PAUSED, TaskState.STOPPED}
    ),
    TaskState.RUNNING: frozenset(
        {TaskState.RUNNING, TaskState.WAITING, TaskState.IDLE, TaskState.PAUSED, TaskState.STOPPED}
    ),
    TaskState.WAITING: frozenset(
        {TaskState.RUNNING, TaskState.IDLE, TaskState.PAUSED, TaskState.STOPPED}
    ),
    TaskState.PAUSED: frozenset({TaskState.RUNNING, TaskState.IDLE, TaskState.STOPPED}),
    TaskState.STOPPED: frozenset({TaskState.STOPPED, TaskState.RUNNING, TaskState.IDLE}),
}


class InvalidTransition(RuntimeError):
    """A move ``TRANSITIONS`` does not allow: a bug in the supervisor, never the user's doing."""


class CardAnswer(StrEnum):
    """How a confirmation card ended. The first three are the user's buttons, sent by the
    panel as ``decision`` (the wire form); the last two are the supervisor withdrawing the
    card because the user pressed Stop or Pause (or took over) instead."""

    ONCE = "once"
    TASK = "task"
    DENY = "deny"
    STOPPED = "stopped"
    TAKEOVER = "takeover"


USER_ANSWERS = frozenset({CardAnswer.ONCE, CardAnswer.TASK, CardAnswer.DENY})


class PanelUi(Protocol):
    """The panel as the runtime drives it (``bridge.browser.PanelView``; a recorder in tests)."""

    locale: str

    def set_status(self, state: str, text: str) -> None: ...
    def set_level(self, level: str, actions: list[str]) -> None: ...
    def show_card(self, card: dict[str, Any]) -> None: ...
    def close_card(self, nonce: str) -> None: ...
    def log(self, entry: dict[str, Any]) -> None: ...
    def chat(self, role: str, text: str) -> None: ...
    def chat_entry(self, entry_id: str, role: str, text: str) -> None: ...
    def restore_chat(self, entries: list[dict[str, str]]) -> None: ...
    def clear_chat(self) -> None: ...
    def show_question(self, question: dict[str, Any]) -> None: ...
    def close_question(self, nonce: str) -> None: ...
    def show_error(self, text: str) -> None: ...
    def highlight(self, handle: Any, label: str, sticky: bool) -> None: ...
    def clear_highlight(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Subject:
    """What a step acts on, as the card, the log and the highlight show it: the element of the
    step's ref or, for ``page_keyboard`` without one, the element that has focus."""

    label: str
    role: str
    handle: Any
    sensitive: bool  # sensitive or page-owner private: its value is masked on the card
    element_id: str | None = None

    @classmethod
    def of_entry(cls, entry: ElementEntry) -> Subject:
        return cls(entry.label, entry.role, entry.handle, entry.sensitive, entry.element_id)


# The focused element for page_keyboard without a ref: its handle and what the risk rules
# need, or None when nothing on the page has focus (the body, or focus inside SDK UI).
DescribeFocus = Callable[[], "tuple[Any, Target] | None"]


@dataclass(frozen=True, slots=True)
class RequestContext:
    request_id: str
    tool: str
    require_confirmation: bool
    deadline: float


_request: contextvars.ContextVar[RequestContext | None] = contextvars.ContextVar(
    "mao_request", default=None
)


@dataclass(slots=True)
class _PendingCard:
    nonce: str
    shown_at: float
    future: asyncio.Future[CardAnswer]


@dataclass(slots=True)
class _PendingQuestion:
    nonce: str
    shown_at: float
    choices: tuple[str, ...]
    # The answer and, for a choice, its index; or a CardAnswer when withdrawn.
    future: asyncio.Future[tuple[str, int | None] | CardAnswer]


# The longest typed answer taken (as long as a chat message).
MAX_ANSWER_CHARS = 8000


@dataclass(slots=True)
class _Task:
    task_id: str
    opened_by: str  # "request", "chat", "grant", "navigation"
    chat_message_id: str | None = None
    running: int = 0
    last_activity: float = field(default_factory=time.monotonic)
    # The task's action log entries by id, in order (what the next page shows again).
    log: dict[str, dict[str, Any]] = field(default_factory=dict)
    # When its last acting step ran (wall clock ms): a navigation soon after it is the task's.
    action_at: float = 0.0


class Supervisor:
    def __init__(
        self,
        *,
        center: AuthorizationCenter,
        ui: PanelUi,
        page_origin: str,
        describe_target: Callable[[ElementEntry], Target],
        audit: Callable[[PageAuditEvent], None],
        arm_takeover: Callable[[bool], None],
        send_chat: Callable[[str, str], bool],
        cancel_running: Callable[[str], None],
        send_chat_control: Callable[[str], bool] = lambda action: False,
        describe_focus: DescribeFocus = lambda: None,
        publish_task: Callable[[dict[str, Any] | None], None] = lambda record: None,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = lambda: time.time() * 1000,
    ) -> None:
        self.center = center
        self._ui = ui
        self._locale = ui.locale
        self._page_origin = page_origin
        self._describe_target = describe_target
        self._describe_focus = describe_focus
        self._audit = audit
        self._arm_takeover = arm_takeover
        self._send_chat = send_chat
        self._send_chat_control = send_chat_control
        self._cancel_running = cancel_running
        self._publish_task = publish_task
        self._clock = clock
        self._wall_clock = wall_clock
        self._state = TaskState.IDLE
        self._task: _Task | None = None
        self._pending: _PendingCard | None = None
        self._question: _PendingQuestion | None = None
        # The answer streaming in, per (message, model step): the text so far.
        self._streams: dict[str, str] = {}
        self._history_shown = False
        self._card_lock = asyncio.Lock()
        self._idle_timer: asyncio.TimerHandle | None = None
        self._session_id: str | None = None
        self._step_risk: dict[tuple[str, int], Risk] = {}
        self._step_label: dict[tuple[str, int], str] = {}
        self._step_index: dict[str, int] = {}
        self._chat_counter = 0
        self._closed = False
        # A site tool's form waits for the user's own submit: their input then is the step
        # the task asked for, not a takeover (SPEC U3).
        self._users_turn = 0
        self._render()

    # -- state ----------------------------------------------------------------------------

    @property
    def state(self) -> TaskState:
        return self._state

    def _move(self, to: TaskState) -> None:
        """The one place the task state changes (see ``TRANSITIONS``)."""
        if to not in TRANSITIONS[self._state]:
            raise InvalidTransition(
                f"the task state cannot move from {self._state.value} to {to.value}"
            )
        self._state = to

    # -- helpers ------------------------------------------------------------------------

    def _t(self, key: str, **values: object) -> str:
        return i18n.text(self._locale, key, **values)

    def _render(self) -> None:
        status = "waiting" if self.state is TaskState.WAITING else self.state.value
        self._ui.set_status(status, self._t(f"status.{status}"))
        self._ui.set_level(self.center.level.value, sorted(self.center.scope))
        # Not while a question waits: the user may look around the page before answering.
        self._arm_takeover(
            self._task is not None
            and self.state in (TaskState.RUNNING, TaskState.WAITING)
            and not self._users_turn
            and self._question is None
        )

    def refresh(self) -> None:
        self._render()

    def _record(self, kind: AuditKind, **fields: Any) -> None:
        event = PageAuditEvent(
            kind=kind, level=self.center.level.value, at_ms=self._wall_clock(), **fields
        )
        self._audit(event)

    @property
    def task_id(self) -> str | None:
        return self._task.task_id if self._task else None

    def _open_task(self, opened_by: str) -> _Task:
        if self._task is None:
            self._task = _Task(
                task_id="t" + secrets.token_hex(6), opened_by=opened_by, last_activity=self._clock()
            )
            self._ui.show_error("")
            self._publish()
        self._touch()
        return self._task

    def _touch(self) -> None:
        if self._task is None:
            return
        self._task.last_activity = self._clock()
        if self._idle_timer is not None:
            self._idle_timer.cancel()
        try:
            loop = asyncio.get_event_loop()
        except RuntimeError:
            return
        self._idle_timer = loop.call_later(TASK_IDLE_S, self._expire_idle_task)

    def _expire_idle_task(self) -> None:
        self._idle_timer = None
        task = self._task
        if task is None or task.running or task.chat_message_id is not None:
            return
        if self._clock() - task.last_activity >= TASK_IDLE_S - 0.01:
            self._end_task("idle")

    def _end_task(self, reason: str) -> None:
        task, self._task = self._task, None
        if task is not None:
            self._publish_task(None)
        if self._idle_timer is not None:
            self._idle_timer.cancel()
            self._idle_timer = None
        if task is not None:
            was_task_level = self.center.level is Level.TASK
            self.center.task_ended(task.task_id)
            if was_task_level and self.center.level is not Level.TASK:
                self._ui.chat("system", self._t("notice.task_ended"))
        if self.state in (TaskState.RUNNING, TaskState.WAITING):
            self._move(TaskState.IDLE)
        self._render()

    # -- the task across pages (SPEC B7) ---------------------------------------------------

    def _log(self, entry: dict[str, Any]) -> None:
        """One action-log line, shown and kept in the open task's log."""
        self._ui.log(entry)
        task = self._task
        if task is None:
            return
        entry_id = str(entry.get("id", ""))
        task.log[entry_id] = {**task.log.get(entry_id, {}), **entry}
        while len(task.log) > CARRIED_LOG_ENTRIES:
            del task.log[next(iter(task.log))]
        self._publish()

    def _acted(self) -> None:
        """An acting step is about to run or has run: a navigation soon after is the task's."""
        if self._task is not None:
            self._task.action_at = self._wall_clock()
            self._publish()

    def _publish(self) -> None:
        task = self._task
        if task is None:
            return
        self._publish_task(
            {
                "taskId": task.task_id,
                "taskLevel": self.center.level is Level.TASK
                and self.center.holds_task(task.task_id),
                "chatMessageId": task.chat_message_id,
                "actionAt": task.action_at,
                "log": list(task.log.values()),
            }
        )

    def continue_task(self, record: dict[str, Any], session_id: str | None) -> None:
        """Take up the task the tab's previous page handed over: the same task id, its
        ``task`` level if it had it, its chat turn and its action log. It stays the task of
        ``session_id`` only: another session at the welcome ends it (``session_changed``)."""
        task_id = str(record.get("taskId") or "")
        if not task_id:
            return
        self._session_id = session_id
        chat = record.get("chatMessageId")
        task = _Task(
            task_id=task_id,
            opened_by="navigation",
            chat_message_id=str(chat) if chat else None,
            last_activity=self._clock(),
        )
        self._task = task
        for entry in record.get("log") or []:
            if not isinstance(entry, dict):
                continue
            if entry.get("ok") is None and entry.get("outcome") is not None:
                # The step that was running when the page unloaded: it led here.
                entry = {**entry, "outcome": self._t("log.navigated"), "ok": True}
            self._log(entry)
        if record.get("taskLevel") is True:
            self.center.continue_task(task_id)
        self._ui.chat("system", self._t("notice.task_continued"))
        self._touch()
        self._render()

    # -- level changes (from the center) -------------------------------------------------

    def on_level_change(self, change: LevelChange) -> None:
        if change.reason == "revoked":
            kind = AuditKind.REVOKE
        elif change.reason == "user" and change.level.rank > change.previous.rank:
            kind = AuditKind.GRANT
        else:
            kind = AuditKind.LEVEL_CHANGE
        self._record(kind, previous_level=change.previous.value, reason=change.reason)
        if not self._closed:
            self._render()

    # -- the agent's side ---------------------------------------------------------------

    def begin_request(self, request: PageToolRequest) -> PageToolResult | None:
        """Open or extend the task for this request, or the refusal to answer instead."""
        if self.state is TaskState.PAUSED:
            return self._refusal(
                request,
                ErrorCode.USER_TAKEOVER,
                "the user has taken over the page and the task is paused; nothing was done. Wait "
                "for the user to resume, then call page_inspect again",
            )
        if self.state is TaskState.STOPPED:
            return self._refusal(
                request,
                ErrorCode.USER_STOPPED,
                "the user stopped the task; nothing was done. Do not continue unless the user asks "
                "again",
            )
        task = self._open_task("request")
        task.running += 1
        self._move(TaskState.RUNNING)
        _request.set(
            RequestContext(
                request.request_id,
                request.tool.value,
                request.require_confirmation,
                self._clock() + request.timeout_ms / 1000,
            )
        )
        self._render()
        return None

    def end_request(
        self, request: PageToolRequest, result: PageToolResult, duration_ms: float
    ) -> None:
        site_risk = self._step_risk.get((request.request_id, 0))
        self._step_index.pop(request.request_id, None)
        for key in [k for k in self._step_risk if k[0] == request.request_id]:
            del self._step_risk[key]
        for key in [k for k in self._step_label if k[0] == request.request_id]:
            del self._step_label[key]
        task = self._task
        if task is not None:
            task.running = max(0, task.running - 1)
            self._touch()
        if request.site_tool is not None:
            # A site tool is an action: its log line and its audit record name the tool and
            # the outcome, never the arguments (SPEC P6).
            outcome = (
                "ok" if result.success else (result.error.code.value if result.error else "failed")
            )
            self._ui.log(
                {
                    "id": request.request_id,
                    "tool": "site_tool",
                    "target": request.site_tool.name,
                    "outcome": self._t("log.ok") if result.success else outcome,
                    "ok": result.success,
                    "durationMs": round(duration_ms),
                }
            )
            risk = site_risk
            self._record(
                AuditKind.ACTION,
                request_id=request.request_id,
                action="site_tool",
                target=request.site_tool.name[:200],
                outcome=outcome[:80],
                risk=risk.level if risk else None,
                duration_ms=round(duration_ms, 1),
            )
        elif not request.actions:  # page_inspect, page_screenshot: one log line for the call
            outcome = (
                "ok" if result.success else (result.error.code.value if result.error else "failed")
            )
            self._log(
                {
                    "id": request.request_id,
                    "tool": request.tool.value,
                    "target": "",
                    "outcome": outcome,
                    "ok": result.success,
                    "durationMs": round(duration_ms),
                }
            )
        if not result.success and result.error is not None:
            self._ui.show_error(
                f"{request.tool.value}: {result.error.code.value}: {result.error.message}"
            )
        self._render()

    @staticmethod
    def _refusal(request: PageToolRequest, code: ErrorCode, message: str) -> PageToolResult:
        return PageToolResult(request_id=request.request_id, success=False,
                              error=ToolFailure(code, message).to_error())

    async def authorize(self, action: Any, entry: ElementEntry | None) -> None:
        """The executor's hook before every step (SPEC A2, A5, P1-P4)."""
        context = _request.get()
        if self.state is TaskState.STOPPED:
            raise ToolFailure(
                ErrorCode.USER_STOPPED,
                "the user stopped the task; the remaining steps were not run",
            )
        if self.state is TaskState.PAUSED:
            raise ToolFailure(
                ErrorCode.USER_TAKEOVER,
                "the user took over the page; the task is paused and the remaining steps were not "
                "run",
            )
        name = action.action
        task_id = self.task_id
        decision = self.center.decide(
            name,
            task_id=task_id,
            require_confirmation=bool(context and context.require_confirmation),
        )
        if decision is Decision.DENY:
            raise ToolFailure(
                ErrorCode.PERMISSION_DENIED,
                f"this page does not allow the {name} action (authorization scope); nothing was "
                f"done",
                element_id=entry.element_id if entry else None,
            )
        target: Target | None = None
        subject: Subject | None = None
        if entry is not None:
            target, subject = self._describe_target(entry), Subject.of_entry(entry)
        elif name == "keyboard":
            # Keys without a ref go to the focused element: Enter in a form field submits the
            # form, so rate (and show) that element, as for a click on a submit button (P4).
            focused = self._describe_focus()
            if focused is not None:
                handle, target = focused
                subject = Subject(target.label, target.role, handle, target.sensitive)
        risk = classify(
            name,
            target,
            page_origin=self._page_origin,
            key=getattr(action, "key", None) or "",
            text=getattr(action, "text", None) or "",
        )
        label = subject.label if subject is not None else ""
        if context is not None:
            index = self._step_index.get(context.request_id, 0)
            self._step_risk[(context.request_id, index)] = risk
            self._step_label[(context.request_id, index)] = label
            self._log(
                {"id": f"{context.request_id}:{index}", "tool": f"page_{name}", "target": label}
            )
        if decision is Decision.CONFIRM:
            await self._confirm(action, subject, risk, context)
        if name not in READ_ONLY_ACTIONS:
            self._acted()

    async def authorize_site_tool(self, tool: SiteToolView, arguments: dict[str, Any]) -> None:
        """The site tools' hook before a tool runs (SPEC B8, P1-P4): a site tool is an action
        in the ``site_tool`` scope; one the page marks read-only runs without a card, like
        reading, unless its name or description reads as risky or the agent asked for one."""
        context = _request.get()
        self._refuse_unless_running("the tool was not run")
        require = bool(context and context.require_confirmation)
        decision = self.center.decide(
            "site_tool", task_id=self.task_id, require_confirmation=require
        )
        if decision is Decision.DENY:
            raise ToolFailure(
                ErrorCode.PERMISSION_DENIED,
                "this page does not allow site tools (authorization scope); the tool was not run",
            )
        risk = classify_site_tool(
            tool.name, tool.description, page_origin=self._page_origin,
            autosubmit=tool.autosubmit, form_action=tool.form_action,
        )
        if context is not None:
            self._step_risk[(context.request_id, 0)] = risk
        if tool.read_only and not risk.high and not require:
            return
        if decision is Decision.CONFIRM or (
            tool.read_only and risk.high and self.center.current_level(self.task_id)
            is Level.PER_ACTION
        ):
            await self._confirm(_SiteToolSubject.of(tool, arguments), None, risk, context)

    def users_turn(self, waiting: bool) -> None:
        """A form tool filled the form and waits for the user to submit it (or stops waiting):
        real input on the page meanwhile does not pause the task."""
        self._users_turn = max(0, self._users_turn + (1 if waiting else -1))
        if not self._closed:
            self._render()

    def _refuse_unless_running(self, what: str) -> None:
        if self.state is TaskState.STOPPED:
            raise ToolFailure(ErrorCode.USER_STOPPED, f"the user stopped the task; {what}")
        if self.state is TaskState.PAUSED:
            raise ToolFailure(
                ErrorCode.USER_TAKEOVER,
                f"the user took over the page; the task is paused and {what}",
            )

    def on_acting(self, entry: ElementEntry, handle: Any) -> None:
        """The executor's hook once the element passed its actionability checks (scrolled
        into view, stable, hit) and right before the act: the highlight goes where the
        element is now, fading out, in SDK UI."""
        if not self._closed:
            self._ui.highlight(handle, entry.label or entry.role, False)

    async def release_sensitive_values(self, request: PageToolRequest) -> bool:
        """``inspector.SensitiveRelease``: the agent asked for a snapshot with sensitive values
        (``maskSensitive: false``). Released under ``task`` and ``full``, the levels at which
        the user lets the agent act on those fields without asking (an unmasked screenshot is
        allowed there too); with ``requireConfirmation`` only after the user allows it on a
        card. Under ``per_action`` they stay masked, with no card: a snapshot is how the agent
        reads the page, and it works without the values (SPEC P5).
        Page-owner private fields are never released (the scanner withholds them)."""
        level = self.center.current_level(self.task_id)
        if level is Level.PER_ACTION:
            return False
        if request.require_confirmation:
            await self._confirm(
                _UnmaskedSubject("snapshot_unmasked"),
                None,
                Risk((RiskReason.SENSITIVE,)),
                _request.get(),
            )
        return True

    async def allow_unmasked(self, request: PageToolRequest) -> None:
        """``screenshot.UnmaskedPolicy``: an unmasked screenshot shows sensitive fields, so
        under ``per_action`` (or when the agent asks for confirmation) the user confirms it
        first; ``task`` and ``full`` allow it (SPEC X3, P5)."""
        if self.state is TaskState.STOPPED:
            raise ToolFailure(ErrorCode.USER_STOPPED, "the user stopped the task; nothing was done")
        if self.state is TaskState.PAUSED:
            raise ToolFailure(
                ErrorCode.USER_TAKEOVER, "the user took over the page; nothing was done"
            )
        level = self.center.current_level(self.task_id)
        if level is Level.PER_ACTION or request.require_confirmation:
            risk = Risk((RiskReason.SENSITIVE,))
            await self._confirm(_UnmaskedSubject("screenshot_unmasked"), None, risk, _request.get())

    async def _confirm(
        self, action: Any, subject: Subject | None, risk: Risk, context: RequestContext | None
    ) -> None:
        async with self._card_lock:
            timeout_s = self.center.policy.confirmation_timeout_ms / 1000
            if context is not None:
                timeout_s = min(timeout_s, context.deadline - self._clock() - DEADLINE_MARGIN_S)
            label = subject.label if subject else getattr(action, "name", "")
            audit = {"request_id": context.request_id if context else None, "action": action.action,
                     "target": label[:200], "risk": risk.level,
                     "risk_reasons": [r.value for r in risk.reasons] or None}
            if timeout_s < 1.0:
                self._record(AuditKind.CONFIRMATION, decision="timeout", **audit)
                raise ToolFailure(
                    ErrorCode.CONFIRMATION_TIMEOUT,
                    "not enough time left in this request for the user to confirm; nothing was "
                    "done. Allow a longer timeoutMs",
                )
            if self.state in (TaskState.STOPPED, TaskState.PAUSED):
                raise ToolFailure(
                    ErrorCode.USER_STOPPED
                    if self.state is TaskState.STOPPED
                    else ErrorCode.USER_TAKEOVER,
                    "the task was stopped or paused by the user; nothing was done",
                )
            nonce = secrets.token_urlsafe(16)
            future: asyncio.Future[CardAnswer] = asyncio.get_event_loop().create_future()
            self._pending = _PendingCard(nonce, self._clock(), future)
            self._move(TaskState.WAITING)
            self._ui.show_card(self._card(nonce, action, subject, risk, timeout_s))
            if subject is not None:
                self._ui.highlight(subject.handle, subject.label or subject.role, True)
            self._render()
            try:
                answer = await asyncio.wait_for(asyncio.shield(future), timeout_s)
            except TimeoutError:
                self._record(AuditKind.CONFIRMATION, decision="timeout", **audit)
                raise ToolFailure(
                    ErrorCode.CONFIRMATION_TIMEOUT,
                    f"the user did not answer within {round(timeout_s)} s; nothing was done",
                    element_id=subject.element_id if subject else None,
                ) from None
            finally:
                self._pending = None
                self._ui.close_card(nonce)
                self._ui.clear_highlight()
                if self.state is TaskState.WAITING:
                    self._move(TaskState.RUNNING)
                self._render()
        if answer in (CardAnswer.STOPPED, CardAnswer.TAKEOVER):
            self._record(AuditKind.CONFIRMATION, decision="withdrawn", **audit)
            code = (
                ErrorCode.USER_STOPPED if answer is CardAnswer.STOPPED else ErrorCode.USER_TAKEOVER
            )
            raise ToolFailure(
                code, "the user stopped or paused the task instead of answering; nothing was done"
            )
        if answer is CardAnswer.DENY:
            self._record(AuditKind.CONFIRMATION, decision="denied", **audit)
            raise ToolFailure(
                ErrorCode.USER_REJECTED,
                "the user denied this action; nothing was done",
                element_id=subject.element_id if subject else None,
            )
        self._record(
            AuditKind.CONFIRMATION,
            decision="allowed_for_task" if answer is CardAnswer.TASK else "allowed_once",
            **audit,
        )
        if answer is CardAnswer.TASK:
            self.center.grant(Level.TASK, task_id=self._open_task("grant").task_id)

    async def ask_user(self, request: PageToolRequest) -> PageToolResult:
        """``page_ask_user`` (SPEC U5): show the question, wait for the user's own answer (a
        choice or typed text, trusted input only) until the request's deadline."""
        ask = request.ask
        context = _request.get()
        if ask is None:
            raise ToolFailure(ErrorCode.INVALID_REQUEST, "page_ask_user needs a question")
        async with self._card_lock:
            timeout_s = (
                context.deadline - self._clock() - DEADLINE_MARGIN_S
                if context is not None
                else (request.timeout_ms / 1000)
            )
            if timeout_s < 1.0:
                raise ToolFailure(
                    ErrorCode.TIMEOUT, "not enough time left in this request to ask the user"
                )
            if self.state in (TaskState.STOPPED, TaskState.PAUSED):
                raise ToolFailure(
                    ErrorCode.USER_STOPPED
                    if self.state is TaskState.STOPPED
                    else ErrorCode.USER_TAKEOVER,
                    "the task was stopped or paused by the user; nothing was asked",
                )
            nonce = secrets.token_urlsafe(16)
            future: asyncio.Future[tuple[str, int | None] | CardAnswer] = (
                asyncio.get_event_loop().create_future()
            )
            choices = tuple(ask.choices or ())
            self._question = _PendingQuestion(nonce, self._clock(), choices, future)
            self._move(TaskState.WAITING)
            self._ui.chat("assistant", ask.question)
            self._ui.show_question(
                {
                    "nonce": nonce,
                    "title": self._t("question.title"),
                    "question": ask.question,
                    "choices": list(choices),
                    "timeoutText": self._t("question.timeout", seconds=round(timeout_s)),
                    "timeoutMs": round(timeout_s * 1000),
                    "armMs": round(CARD_ARM_S * 1000),
                }
            )
            self._render()
            try:
                answer = await asyncio.wait_for(asyncio.shield(future), timeout_s)
            except TimeoutError:
                self._ui.chat("system", self._t("question.timed_out"))
                raise ToolFailure(
                    ErrorCode.TIMEOUT,
                    f"the user did not answer within {round(timeout_s)} s; ask again later or "
                    "go on without the answer",
                ) from None
            finally:
                self._question = None
                self._ui.close_question(nonce)
                if self.state is TaskState.WAITING:
                    self._move(TaskState.RUNNING)
                self._render()
        if isinstance(answer, CardAnswer):
            code = (
                ErrorCode.USER_STOPPED if answer is CardAnswer.STOPPED else ErrorCode.USER_TAKEOVER
            )
            raise ToolFailure(code, "the user stopped or paused the task instead of answering")
        text, index = answer
        self._ui.chat("user", text)
        result: dict[str, Any] = {"answer": text}
        if index is not None:
            result["choiceIndex"] = index
        return PageToolResult(
            request_id=request.request_id, success=True, page_version="", result=result
        )

    def _answer_question(self, detail: dict[str, Any]) -> None:
        """The user's answer: the nonce of the question waited on, after the arming delay,
        and either a listed choice's index or non-empty typed text."""
        pending = self._question
        if (
            pending is None
            or pending.future.done()
            or not secrets.compare_digest(str(detail.get("nonce", "")), pending.nonce)
            or self._clock() - pending.shown_at < CARD_ARM_S
        ):
            return
        choice = detail.get("choice")
        if isinstance(choice, int | float) and not isinstance(choice, bool):
            index = int(choice)
            if 0 <= index < len(pending.choices):
                pending.future.set_result((pending.choices[index], index))
            return
        text = str(detail.get("text", "")).strip()
        if text:
            pending.future.set_result((text[:MAX_ANSWER_CHARS], None))

    def _card(
        self, nonce: str, action: Any, subject: Subject | None, risk: Risk, timeout_s: float
    ) -> dict[str, Any]:
        what = self._t(f"action.{action.action}")
        value = _action_value(action)
        if value is not None and (subject is not None and subject.sensitive):
            value = MASK
        reasons = [
            self._t(f"risk.{r.value}", origin=risk.form_origin)
            if r.value == "cross_origin_form"
            else self._t(f"risk.{r.value}")
            for r in risk.reasons
        ]
        return {
            "nonce": nonce,
            "title": self._t("card.title"),
            "action": what,
            "target": (
                f"{subject.role} \u201c{subject.label}\u201d" if subject.label else subject.role
            )
            if subject
            else self._t("card.target.site_tool", name=action.name)
            if isinstance(action, _SiteToolSubject)
            else self._t("card.target.page"),
            "valueLabel": self._t("card.value"),
            "value": value if value is not None else "",
            "risk": risk.level,
            "riskText": self._t(f"card.risk.{risk.level}")
            + (": " + "; ".join(reasons) if reasons else ""),
            "timeoutText": self._t("card.timeout", seconds=round(timeout_s)),
            "timeoutMs": round(timeout_s * 1000),
            "armMs": round(CARD_ARM_S * 1000),
        }

    # -- step log (the executor's on_step) -------------------------------------------------

    def on_step(self, event: str, detail: dict[str, Any]) -> None:
        context = _request.get()
        request_id = context.request_id if context else "request"
        if event == "step_started":
            self._step_index[request_id] = int(detail.get("index", 0))
            self._log(
                {
                    "id": f"{request_id}:{detail.get('index', 0)}",
                    "tool": f"page_{detail.get('action')}",
                    "target": "",
                    "outcome": self._t("log.pending"),
                    "ok": None,
                }
            )
            return
        index = int(detail.get("index", 0))
        if str(detail.get("action", "")) not in READ_ONLY_ACTIONS:
            self._acted()
        error = detail.get("error") or {}
        outcome = "ok" if detail.get("success") else str(error.get("code", "failed"))
        risk = self._step_risk.pop((request_id, index), None)
        # The ref's label, or for keys sent to the focused element, that element's label.
        label = detail.get("targetLabel") or self._step_label.pop((request_id, index), "")
        # A step that succeeded without any effect on the page says so in the log too.
        no_effect = outcome == "ok" and (detail.get("outcome") or {}).get("effect") == "none"
        shown = (
            self._t("log.no_effect")
            if no_effect
            else self._t("log.ok")
            if outcome == "ok"
            else outcome
        )
        self._log(
            {
                "id": f"{request_id}:{index}",
                "tool": f"page_{detail.get('action')}",
                "target": label,
                "outcome": shown,
                "ok": outcome == "ok",
                "durationMs": round(float(detail.get("durationMs", 0))),
            }
        )
        if outcome != "ok":
            self._ui.show_error(
                f"page_{detail.get('action')}: {outcome}: {error.get('message', '')}"
            )
        self._record(
            AuditKind.ACTION,
            request_id=context.request_id if context else None,
            action=str(detail.get("action", ""))[:40],
            target=str(label)[:200],
            outcome=outcome[:80],
            risk=risk.level if risk else None,
            duration_ms=float(detail.get("durationMs", 0)),
        )

    # -- the user's side ------------------------------------------------------------------

    def on_ui(self, kind: str, detail: dict[str, Any]) -> None:
        """One thing the user did in the panel. Untrusted input does nothing (SPEC U2)."""
        if self._closed or detail.get("trusted") is not True:
            self._render()  # put any control a script flipped back to the real state
            return
        if kind == "card":
            self._answer_card(str(detail.get("nonce", "")), str(detail.get("decision", "")))
        elif kind == "level":
            self._user_level(str(detail.get("level", "")))
        elif kind == "revoke":
            self.center.revoke()
            self._ui.chat("system", self._t("notice.revoked"))
        elif kind == "stop":
            self.stop()
        elif kind == "pause":
            self.pause("user")
        elif kind == "resume":
            self.resume()
        elif kind == "chat":
            self._chat(str(detail.get("text", "")), typed=detail.get("typed") is True)
        elif kind == "answer":
            self._answer_question(detail)
        elif kind == "conversation":
            self._conversation_control(str(detail.get("action", "")))

    def _answer_card(self, nonce: str, decision: str) -> None:
        pending = self._pending
        if (
            pending is None
            or pending.future.done()
            or not secrets.compare_digest(nonce, pending.nonce)
        ):
            return
        try:
            answer = CardAnswer(decision)
        except ValueError:
            return
        if answer not in USER_ANSWERS:  # only the supervisor withdraws a card
            return
        if self._clock() - pending.shown_at < CARD_ARM_S:
            return
        pending.future.set_result(answer)

    def _user_level(self, value: str) -> None:
        try:
            level = Level(value)
        except ValueError:
            return
        if level is self.center.level:
            self._render()
            return
        task_id = self._open_task("grant").task_id if level is Level.TASK else self.task_id
        self.center.grant(level, task_id=task_id)
        self._ui.chat("system", self._t("notice.level", level=self._t(f"level.{level.value}")))

    def stop(self) -> None:
        """The user's Stop (SPEC U3): the task ends; a running batch stops before its next step,
        a pending card is withdrawn, and a step still running after a short grace is cancelled."""
        self._withdraw_card(CardAnswer.STOPPED)
        running = self._task is not None and self._task.running > 0
        if self._task is not None and self._task.chat_message_id is not None:
            # The backend's answer to that message stops too: its stream and its tool call.
            self._send_chat_control(ChatAction.STOP.value)
        # Moved before the task ends, so ending it does not first show the task as idle.
        self._move(TaskState.STOPPED)
        self._record(AuditKind.STOP)
        self._end_task("stopped")
        self._ui.chat("system", self._t("notice.stopped"))
        self._render()
        if running:
            asyncio.get_event_loop().call_later(
                STOP_GRACE_S, self._cancel_running, "the user stopped the task"
            )

    def pause(self, reason: str) -> None:
        if self.state in (TaskState.PAUSED, TaskState.STOPPED):
            return
        self._withdraw_card(CardAnswer.TAKEOVER)
        self._move(TaskState.PAUSED)
        self._record(AuditKind.TAKEOVER, reason=reason)
        if reason == "input":
            self._ui.chat("system", self._t("notice.takeover"))
        self._render()

    def resume(self) -> None:
        if self.state not in (TaskState.PAUSED, TaskState.STOPPED):
            return
        self._move(TaskState.RUNNING if self._task is not None else TaskState.IDLE)
        self._record(AuditKind.RESUME)
        self._touch()
        self._render()

    def on_takeover(self) -> None:
        """Real user input on the page, outside the SDK UI (the watcher is armed only while a
        task runs, and never fires for the SDK's own synthetic events)."""
        if self._task is not None and self.state in (TaskState.RUNNING, TaskState.WAITING):
            self.pause("input")

    def _withdraw_card(self, answer: CardAnswer) -> None:
        pending = self._pending
        if pending is not None and not pending.future.done():
            pending.future.set_result(answer)
        question = self._question
        if question is not None and not question.future.done():
            question.future.set_result(answer)

    # -- chat ------------------------------------------------------------------------------

    def _chat(self, text: str, *, typed: bool = False) -> None:
        text = text.strip()
        if not text:
            return
        if self._question is not None:
            # A question waits: what the user types is its answer, if they typed it (a script
            # writing into the box is not the user answering).
            if typed:
                self._answer_question({"nonce": self._question.nonce, "text": text})
            return
        self._chat_counter += 1
        message_id = f"m{self._chat_counter}-{secrets.token_hex(3)}"
        if not self._send_chat(text[:8000], message_id):
            self._ui.chat("error", self._t("chat.not_connected"))
            return
        self._ui.chat("user", text)
        # Asking again is the user taking the controls back to the assistant.
        if self.state in (TaskState.PAUSED, TaskState.STOPPED):
            self._move(TaskState.IDLE)
            self._record(AuditKind.RESUME, reason="chat")
        task = self._open_task("chat")
        task.chat_message_id = message_id
        self._move(TaskState.RUNNING)
        self._render()

    def _conversation_control(self, action: str) -> None:
        """New conversation or Delete, from the panel's buttons."""
        if action not in (ChatAction.NEW.value, ChatAction.DELETE.value):
            return
        if not self._send_chat_control(action):
            self._ui.chat("error", self._t("chat.not_connected"))

    def load_history(self) -> None:
        """Ask the backend for the stored conversation; once per page load, when the runtime
        has first connected (the panel was opened, or an agent called: it booted)."""
        if not self._history_shown:
            self._send_chat_control(ChatAction.HISTORY.value)

    def on_chat_history(self, history: ChatHistory) -> None:
        if history.action is ChatAction.HISTORY:
            if self._history_shown:
                return
            self._history_shown = True
            lines = [self._history_line(entry) for entry in history.entries]
            shown = [line for line in lines if line is not None]
            if shown:
                shown.append({"role": "system", "text": self._t("chat.history_restored")})
                self._ui.restore_chat(shown)
            return
        self._history_shown = True
        self._streams.clear()
        self._ui.clear_chat()
        key = "notice.conversation_new" if history.action is ChatAction.NEW else (
            "notice.conversation_deleted"
        )
        self._ui.chat("system", self._t(key))

    def _history_line(self, entry: Any) -> dict[str, str] | None:
        if entry.role in ("user", "assistant"):
            return {"role": entry.role, "text": entry.text}
        if entry.role == "tool" and entry.tool:
            outcome = self._t("log.ok") if entry.success else (entry.code or "failed")
            return {
                "role": "tool",
                "text": self._t("chat.tool_finished", tool=entry.tool, outcome=outcome),
            }
        if entry.role == "system" and entry.code == "stopped":
            return {"role": "system", "text": self._t("chat.stopped_note")}
        return None

    def on_chat_event(self, event: ChatEvent) -> None:
        if event.kind is ChatEventKind.ASSISTANT_DELTA and event.text:
            # One bubble per model step, growing as the answer streams in.
            stream_id = f"{event.message_id or 'm'}:{event.step or 0}"
            text = self._streams.get(stream_id, "") + event.text
            self._streams[stream_id] = text
            self._ui.chat_entry(stream_id, "assistant", text)
        elif event.kind is ChatEventKind.ASSISTANT_TEXT and event.text:
            # The whole answer of the step replaces its streamed pieces.
            stream_id = f"{event.message_id or 'm'}:{event.step or 0}"
            self._streams.pop(stream_id, None)
            self._ui.chat_entry(stream_id, "assistant", event.text)
        elif event.kind is ChatEventKind.TOOL_STEP and event.tool:
            if event.phase == "started":
                self._ui.chat("tool", self._t("chat.tool_started", tool=event.tool))
            elif event.success is False:
                self._ui.chat(
                    "tool",
                    self._t("chat.tool_finished", tool=event.tool, outcome=event.code or "failed"),
                )
        elif event.kind is ChatEventKind.ERROR:
            self._ui.chat("error", event.text or (event.code or "error"))
            self._ui.show_error(event.text or (event.code or "error"))
        elif event.kind is ChatEventKind.NOT_CONFIGURED:
            self._ui.chat("system", self._t("chat.not_configured"))
        elif event.kind is ChatEventKind.DONE:
            prefix = f"{event.message_id or 'm'}:"
            for stream_id in [s for s in self._streams if s.startswith(prefix)]:
                del self._streams[stream_id]
            task = self._task
            if (
                task is not None
                and task.chat_message_id is not None
                and task.chat_message_id == event.message_id
            ):
                task.chat_message_id = None
                if task.running == 0:
                    self._end_task("chat_done")

    # -- lifecycle ---------------------------------------------------------------------------

    def session_changed(self, session_id: str) -> None:
        """A new backend session is a session switch: the task and any ``task`` grant end."""
        if self._session_id is not None and session_id != self._session_id:
            self._withdraw_card(CardAnswer.STOPPED)
            self._end_task("session_switch")
        self._session_id = session_id

    def user_navigated(self) -> None:
        """The user brought this page back from the back/forward cache: their own navigation,
        which ends the task and its ``task`` level (seed 004 §4.3, SPEC B7)."""
        if self._task is None:
            return
        self._withdraw_card(CardAnswer.STOPPED)
        self._end_task("navigation")
        self._ui.chat("system", self._t("notice.back_forward"))

    def close(self) -> None:
        self._closed = True
        self._withdraw_card(CardAnswer.STOPPED)
        if self._idle_timer is not None:
            self._idle_timer.cancel()
            self._idle_timer = None
        self._arm_takeover(False)


@dataclass(frozen=True, slots=True)
class _UnmaskedSubject:
    """What a card asks about for ``maskSensitive: false``: ``screenshot_unmasked`` or
    ``snapshot_unmasked`` (the card's wording, i18n ``action.*``)."""

    action: str


@dataclass(frozen=True, slots=True)
class _SiteToolSubject:
    """What a card asks about for a site tool: its name, and its arguments as the card shows
    them, with the values of parameters whose name or description reads as sensitive (a
    password, a card number) masked."""

    name: str
    arguments: str
    action: str = "site_tool"

    @classmethod
    def of(cls, tool: SiteToolView, arguments: dict[str, Any]) -> _SiteToolSubject:
        properties = tool.input_schema.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        shown: dict[str, Any] = {}
        for key, value in arguments.items():
            about = properties.get(key) if isinstance(properties.get(key), dict) else {}
            words = f"{key} {about.get('description', '')} {about.get('format', '')}"
            shown[key] = MASK if is_sensitive_name(words) else value
        text = json.dumps(shown, ensure_ascii=False) if shown else ""
        return cls(tool.name, text[:2000])


def _action_value(action: Any) -> str | None:
    if action.action == "site_tool":
        return str(action.arguments)
    if action.action == "fill":
        return str(action.value)
    if action.action == "select":
        return ", ".join(action.values)
    if action.action == "keyboard":
        return action.text if getattr(action, "text", None) else getattr(action, "key", None)
    if action.action == "scroll":
        return f"{getattr(action, 'direction', '')} {getattr(action, 'amount', '') or ''}".strip()
    return None
