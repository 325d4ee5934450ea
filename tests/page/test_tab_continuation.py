"""A task across the tab's pages, page side (SPEC B7, P1): what the supervisor hands over, how
the next page takes it up, and refs from an earlier page."""

from __future__ import annotations

from typing import Any

import pytest
from mao_page.errors import ToolFailure
from mao_page.protocol import ErrorCode
from mao_page.snapshot import refs
from mao_page.snapshot.store import SnapshotStore, document_of
from mao_page.supervision.authorization import (
    AuthorizationCenter,
    GrantStore,
    HostPolicy,
    Level,
)
from mao_page.supervision.risk import Target
from mao_page.supervision.supervisor import Supervisor

from .test_authorization import ENTRY, KEY, PAGE, REQUEST, DictStorage, RecordingUi


class LoggingUi(RecordingUi):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[dict[str, Any]] = []
        self.said: list[str] = []

    def log(self, entry: dict[str, Any]) -> None:
        self.lines.append(entry)

    def chat(self, role: str, text: str) -> None:
        self.said.append(text)


def make(policy: HostPolicy | None = None) -> tuple[Supervisor, LoggingUi, list[Any]]:
    ui = LoggingUi()
    published: list[Any] = []
    holder: dict[str, Supervisor] = {}
    center = AuthorizationCenter(
        GrantStore(DictStorage(), KEY), policy or HostPolicy(),
        on_change=lambda change: holder["s"].on_level_change(change),
    )
    supervisor = Supervisor(
        center=center, ui=ui, page_origin=PAGE,
        describe_target=lambda entry: Target(
            role=entry.role, label=entry.label, sensitive=entry.sensitive
        ),
        audit=lambda event: None, arm_takeover=lambda armed: None,
        send_chat=lambda text, message_id: True, cancel_running=lambda reason: None,
        publish_task=published.append, wall_clock=lambda: 1_000.0,
    )
    holder["s"] = supervisor
    return supervisor, ui, published


async def test_an_acting_step_publishes_the_task_with_its_level_log_and_time() -> None:
    supervisor, ui, published = make()
    supervisor.on_ui("level", {"level": "task", "trusted": True})
    assert supervisor.begin_request(REQUEST) is None
    supervisor.on_step("step_started", {"index": 0, "action": "fill"})
    await supervisor.authorize(REQUEST.actions[0], ENTRY)
    record = published[-1]
    assert record["taskId"] == supervisor.task_id and record["taskLevel"] is True
    assert record["actionAt"] == 1_000.0
    assert [entry["tool"] for entry in record["log"]] == ["page_fill"]
    assert record["log"][0]["ok"] is None  # still running when the page would unload


def test_an_ended_task_is_withdrawn() -> None:
    supervisor, _, published = make()
    supervisor.on_ui("level", {"level": "task", "trusted": True})
    supervisor.stop()
    assert published[-1] is None


def test_the_next_page_continues_the_task_its_level_and_its_log() -> None:
    supervisor, ui, _ = make()
    supervisor.continue_task(
        {
            "taskId": "t1", "taskLevel": True, "chatMessageId": "m1", "actionAt": 1.0,
            "log": [
                {"id": "r1:0", "tool": "page_fill", "target": "City", "outcome": "done",
                 "ok": True},
                {"id": "r2:0", "tool": "page_click", "target": "Save", "outcome": "running",
                 "ok": None},
            ],
        },
        "ses-1",
    )
    assert supervisor.task_id == "t1"
    assert supervisor.center.current_level("t1") is Level.TASK
    assert [line["outcome"] for line in ui.lines] == ["done", "opened the next page"]
    assert any("continues on this page" in text for text in ui.said)


def test_a_continued_task_ends_with_a_session_switch() -> None:
    supervisor, _, _ = make()
    supervisor.continue_task({"taskId": "t1", "taskLevel": True, "log": []}, "ses-1")
    supervisor.session_changed("ses-1")
    assert supervisor.task_id == "t1"
    supervisor.session_changed("ses-2")
    assert supervisor.task_id is None and supervisor.center.level is Level.PER_ACTION


def test_the_hosts_ceiling_still_holds_for_a_continued_task() -> None:  # SPEC P2
    supervisor, _, _ = make(HostPolicy(level=Level.PER_ACTION))
    supervisor.continue_task({"taskId": "t1", "taskLevel": True, "log": []}, "ses-1")
    assert supervisor.center.current_level("t1") is Level.PER_ACTION


def test_a_ref_from_an_earlier_page_of_the_tab_is_stale_because_it_navigated() -> None:
    earlier = SnapshotStore(document_tag="a1b2")
    snapshot = earlier.create(page_version="v", navigation_epoch=0, url="u", title="t",
                              mutations=0)
    assert document_of(snapshot.snapshot_id) == "a1b2"
    now = SnapshotStore(document_tag="c3d4")
    with pytest.raises(ToolFailure) as refusal:
        refs.snapshot_of(now, snapshot.snapshot_id)
    assert refusal.value.code is ErrorCode.STALE_REF
    assert refusal.value.details == {"reason": "navigated"}
    with pytest.raises(ToolFailure) as unknown:
        refs.snapshot_of(now, "s123456.c3d4")
    assert unknown.value.details is None  # this page's own unknown id: no navigation
