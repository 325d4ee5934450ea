"""What every action module works with: the page, the resolved target, settling and the
per-step record the batch runner turns into the step result."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..bridge.page import Page
from ..errors import ToolFailure
from ..protocol import ErrorCode, PageDialog
from ..snapshot.store import ElementEntry
from .settle import SettlePolicy, guarded, settle

if TYPE_CHECKING:
    from ..snapshot.inspector import Inspector
    from .changes import ChangeTracker

# Called once per step on the element about to be acted on, after the actionability checks
# (scrolled into view, stable, hit test passed) and before the act: where the element really
# is now, so the target highlight is drawn there, not where it was before scrolling.
# Arguments: the ref's entry and the element acted on (a custom checkbox's label).
ActingListener = Callable[[ElementEntry, Any], None]


@dataclass(frozen=True, slots=True)
class Target:
    """The live element behind a step's ref: the snapshot entry and a fresh fact row (of the
    real input, for a custom checkbox whose ``entry.handle`` is the label)."""

    entry: ElementEntry
    row: list[Any]
    snapshot_id: str = ""  # the snapshot the ref came from (a drag's second ref is in it too)

    @property
    def handle(self) -> Any:
        return self.entry.handle

    @property
    def name(self) -> str:
        """How messages name the element: its role and label."""
        return f'{self.entry.role} "{self.entry.label}"' if self.entry.label else self.entry.role

    def failure(
        self, code: ErrorCode, message: str, details: dict[str, Any] | None = None
    ) -> ToolFailure:
        return ToolFailure(code, message, element_id=self.entry.element_id, details=details)


@dataclass(slots=True)
class StepRecord:
    """What the guarded writes of one step produced besides its outcome."""

    dialogs: list[PageDialog] = field(default_factory=list)
    act_s: float = 0.0
    settle_s: float = 0.0
    timed: bool = False
    # SPEC U4: the corner the SDK panel moved to because it covered the target ("": it
    # did not move).
    panel_moved_to: str = ""
    # SPEC A7: the target was shown by a :hover rule of an element hovered earlier, which the
    # pointer hovered again first ("": it did not).
    hovered_host: str = ""


class ActionContext:
    def __init__(
        self,
        page: Page,
        inspector: Inspector,
        policy: SettlePolicy,
        on_acting: ActingListener,
        changes: ChangeTracker,
    ) -> None:
        self.page = page
        self.inspector = inspector
        self.policy = policy
        self.on_acting = on_acting
        self.changes = changes
        self.step = StepRecord()

    async def settle(self, *, short: bool = False) -> dict[str, Any]:
        return await settle(self.page, self.policy, short=short)

    async def guarded(self, perform: Callable[[], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
        """One write with page dialogs answered and recorded, then settling (SPEC A4, A6)."""
        result = await guarded(self.page, self.policy, perform)
        self.step.dialogs.extend(result.dialogs)
        self.step.act_s += result.act_s
        self.step.settle_s += result.settle_s
        self.step.timed = True
        return result.outcome
