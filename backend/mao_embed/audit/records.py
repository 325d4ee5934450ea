"""What one audit record holds, and its form in the journal: one JSON array per line, its
values in ``COLUMNS`` order (SPEC B2, P6). Shared by the log (``log.py``) and the journal
(``journal.py``)."""

from __future__ import annotations

import json
import logging
import math
import time
from dataclasses import dataclass, fields
from enum import StrEnum
from typing import Any

logger = logging.getLogger(__name__)


class AuditEvent(StrEnum):
    SESSION_CONNECTED = "session_connected"
    SESSION_RESUMED = "session_resumed"
    SESSION_DISCONNECTED = "session_disconnected"
    CONNECTION_REFUSED = "connection_refused"
    FRAME_REJECTED = "frame_rejected"
    TOOL_CALL = "tool_call"
    CANCEL_SENT = "cancel_sent"
    RESULT_IGNORED = "result_ignored"
    # One panel chat message answered by the agent loop; code says how it ended.
    CHAT_TURN = "chat_turn"
    # The user started a new panel conversation (code "new") or deleted theirs ("deleted");
    # never what was said (SPEC U5).
    CHAT_CONVERSATION = "chat_conversation"
    # Reported by the page's authorization center (protocol ``audit_event``, SPEC P6).
    PAGE_AUTHORIZATION = "page_authorization"
    PAGE_ACTION = "page_action"
    # Cluster mode: an agent's tool call this instance took and the page's instance ran (that
    # instance records the ``tool_call``); detail names the page's instance.
    TOOL_CALL_RELAYED = "tool_call_relayed"
    # The page's runtime booted (SPEC E6): code is what started it (panel, agent, api, eager),
    # duration_ms how long it took, detail the mode (main-thread or worker).
    PAGE_BOOT = "page_boot"


EVENTS = frozenset(AuditEvent)


@dataclass(frozen=True, slots=True)
class AuditRecord:
    event: AuditEvent
    at: float = 0.0
    session_id: str | None = None
    user_id: str | None = None
    agent_id: str | None = None
    origin: str | None = None
    request_id: str | None = None
    tool: str | None = None
    code: str | None = None
    duration_ms: float | None = None
    detail: str | None = None
    # The instance that made the record (``serve --instance``; None outside a cluster), so
    # records of one session from several instances' logs can be told apart and merged.
    instance: str | None = None


COLUMNS = tuple(f.name for f in fields(AuditRecord))
# Given by the caller; ``instance`` is the log's own.
VALUE_COLUMNS = COLUMNS[2:-1]
Row = tuple[Any, ...]
ROW_LENGTH = len(COLUMNS)
# The largest record line; the journal reads at most this much per import transaction.
READ_CHUNK = 4 << 20


def row_of(event: AuditEvent, values: dict[str, Any], instance: str | None = None) -> Row:
    """One record as its row, in ``COLUMNS`` order, checked: a value the database could not
    store (or the journal could not give back) raises here, before anything is written,
    instead of being acknowledged and then refused by every import after it."""
    at = values.pop("at", None)
    given = [values.pop(name, None) for name in VALUE_COLUMNS]
    row = (event, time.time() if at is None else at, *given, instance)
    if values:
        raise TypeError(f"unknown audit record fields: {', '.join(sorted(values))}")
    if event not in EVENTS:
        raise ValueError(f"unknown audit event {event!r}")
    if not is_number(row[1]):
        raise TypeError(f"audit record time must be a finite number, not {row[1]!r}")
    for name, value in zip(VALUE_COLUMNS, row[2:-1], strict=True):
        if value is None:
            continue
        if isinstance(value, str):
            if not value.isascii():
                value.encode()  # a lone surrogate raises UnicodeEncodeError: SQLite refuses it
        elif name != "duration_ms" or not is_number(value):
            raise TypeError(f"audit record field {name} cannot be {value!r}")
    return row


def is_number(value: Any) -> bool:
    kind = type(value)
    if kind is float:
        return math.isfinite(value)
    return kind is int and -(2**63) <= value < 2**63  # bool is not: type(True) is bool


# A StrEnum member encodes as its value; ASCII output escapes every control character, so a
# line never contains a newline of its own.
_ENCODER = json.JSONEncoder(separators=(",", ":"))


def encode(row: Row) -> str:
    return _ENCODER.encode(row)


def decode_lines(data: bytes, source: str, offset: int) -> list[Row]:
    """The records in ``data``, complete lines each ending in a newline. All at once as one
    JSON array (~0.7 us per record against ~2.7 decoding line by line); line by line only if
    that fails, to skip just the lines that do not decode, each logged with its position."""
    try:
        rows = json.loads(b"[" + data[:-1].replace(b"\n", b",") + b"]")
    except ValueError:
        rows = None
    if rows is not None and all(map(is_row, rows)):
        return [row if len(row) == ROW_LENGTH else [*row, None] for row in rows]
    rows = []
    position = offset
    for line in data[:-1].split(b"\n"):
        if not line:  # a write that failed before its first byte, then a new line
            position += 1
            continue
        try:
            row = json.loads(line)
        except ValueError:
            row = None
        if is_row(row):
            rows.append(row if len(row) == ROW_LENGTH else [*row, None])
        else:
            logger.error("%s: an undecodable record at byte %d skipped", source, position)
        position += len(line) + 1
    return rows


def is_row(row: Any) -> bool:
    return (
        type(row) is list
        # One column short: written before records named their instance.
        and len(row) in (ROW_LENGTH, ROW_LENGTH - 1)
        and row[0] in EVENTS
        and is_number(row[1])
    )
