"""The authorization center (SPEC P1-P3, P6; docs/security.md "Authorization levels").

Three levels: ``per_action`` (default: every acting step is confirmed by the user),
``task`` (until the task ends, a refresh, a session switch or revocation) and ``full``
(persisted in the page origin's ``localStorage``). The host's ``init`` may lower the
initial level and narrow the action scope, never raise either (P2); only the user raises
the level, in the panel, with real input.

Persisted grants (P3) are keyed by serverUrl, user, origin, agentId, action scope and
policy version; the record repeats every key field and is checked field by field on read,
so a record copied under another key, written by an older SDK or edited by hand is ignored
and removed. Nothing stored holds a token (the record's fields are listed in
``_RECORD_FIELDS`` and validated on write too).

Pure logic: storage and clock come in through small interfaces so this runs on CPython.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

# Bump when the meaning of a stored grant changes; older records are then ignored.
STORAGE_VERSION = 1
STORAGE_PREFIX = "mao-embed.grant."

# Every action an agent can ask for. ``observe`` and ``wait`` only read the page and are
# never confirmed, but they are still in the scope so a host can switch them off too.
ACTIONS: tuple[str, ...] = (
    "scroll",
    "focus",
    "hover",
    "drag",
    "fill",
    "select",
    "check",
    "uncheck",
    "click",
    "keyboard",
    "wait",
    "observe",
    # The page's own WebMCP tools (docs/site-tools.md); read-only ones run like reading.
    # In the scope, so a host can switch them off, and in a persisted grant's key, so a
    # grant given before site tools existed does not cover them.
    "site_tool",
)
READ_ONLY_ACTIONS = frozenset({"observe", "wait"})


class Level(StrEnum):
    PER_ACTION = "per_action"
    TASK = "task"
    FULL = "full"

    @property
    def rank(self) -> int:
        return _RANK[self]


_RANK = {Level.PER_ACTION: 0, Level.TASK: 1, Level.FULL: 2}


class Decision(StrEnum):
    ALLOW = "allow"
    CONFIRM = "confirm"
    DENY = "deny"


class Storage(Protocol):
    """``localStorage`` in the browser (``bridge.browser.BrowserStorage``); a dict in tests."""

    def get(self, key: str) -> str | None: ...
    def set(self, key: str, value: str) -> None: ...
    def remove(self, key: str) -> None: ...


class OptionsError(ValueError):
    """The host's ``authorization`` option is malformed; init fails with this message."""


@dataclass(frozen=True, slots=True)
class HostPolicy:
    """What the host's ``init({authorization: {...}})`` asked for, after validation."""

    level: Level = Level.FULL  # a ceiling on the *initial* level; FULL = no lowering
    actions: frozenset[str] = frozenset(ACTIONS)
    policy_version: str = "1"
    confirmation_timeout_ms: int = 60_000


def parse_host_policy(raw: dict[str, Any] | None) -> HostPolicy:
    """Validate ``init``'s ``authorization`` option. Unknown keys and unknown actions are
    errors rather than silently ignored: a typo in a narrowing must not widen anything."""
    if raw is None:
        return HostPolicy()
    if not isinstance(raw, dict):
        raise OptionsError("authorization must be an object")
    unknown = set(raw) - {"level", "actions", "policyVersion", "confirmationTimeoutMs"}
    if unknown:
        raise OptionsError(f"authorization has unknown keys: {', '.join(sorted(unknown))}")
    level = Level.FULL
    if "level" in raw:
        try:
            level = Level(raw["level"])
        except ValueError:
            raise OptionsError(f"authorization.level must be one of {', '.join(Level)}") from None
    actions = frozenset(ACTIONS)
    if "actions" in raw:
        listed = raw["actions"]
        if not isinstance(listed, list) or not all(isinstance(a, str) for a in listed):
            raise OptionsError("authorization.actions must be a list of action names")
        bad = sorted(set(listed) - set(ACTIONS))
        if bad:
            raise OptionsError(f"authorization.actions has unknown actions: {', '.join(bad)}")
        actions = frozenset(listed)
    policy_version = raw.get("policyVersion", "1")
    if (
        not isinstance(policy_version, (str, int))
        or isinstance(policy_version, bool)
        or not str(policy_version)
        or len(str(policy_version)) > 64
    ):
        raise OptionsError("authorization.policyVersion must be a short string")
    timeout = raw.get("confirmationTimeoutMs", 60_000)
    if not isinstance(timeout, int) or isinstance(timeout, bool) or not 1_000 <= timeout <= 600_000:
        raise OptionsError(
            "authorization.confirmationTimeoutMs must be an integer from 1000 to 600000"
        )
    return HostPolicy(level, actions, str(policy_version), timeout)


@dataclass(frozen=True, slots=True)
class GrantKey:
    """Everything a persisted grant is isolated by (SPEC P3)."""

    server_url: str
    user_id: str
    origin: str
    agent_id: str
    scope: tuple[str, ...]  # sorted action names
    policy_version: str

    @classmethod
    def of(
        cls,
        *,
        server_url: str,
        user_id: str,
        origin: str,
        agent_id: str,
        actions: Iterable[str],
        policy_version: str,
    ) -> GrantKey:
        return cls(
            server_url.rstrip("/"),
            user_id,
            origin,
            agent_id,
            tuple(sorted(set(actions))),
            policy_version,
        )

    def fields(self) -> dict[str, Any]:
        return {
            "serverUrl": self.server_url,
            "user": self.user_id,
            "origin": self.origin,
            "agentId": self.agent_id,
            "scope": list(self.scope),
            "policyVersion": self.policy_version,
        }

    def storage_key(self) -> str:
        """``mao-embed.grant.<sha256 of the canonical key fields, 32 hex>``: bounded length,
        and the user id does not appear in the key list of the page's storage."""
        canonical = json.dumps(
            [STORAGE_VERSION, *self.fields().values()], separators=(",", ":"), ensure_ascii=False
        )
        return STORAGE_PREFIX + hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:32]


_RECORD_FIELDS = frozenset(
    {"v", "level", "serverUrl", "user", "origin", "agentId", "scope", "policyVersion", "grantedAt"}
)


def encode_grant(key: GrantKey, granted_at_ms: float) -> str:
    record = {
        "v": STORAGE_VERSION,
        "level": Level.FULL.value,
        **key.fields(),
        "grantedAt": round(granted_at_ms),
    }
    assert set(record) == _RECORD_FIELDS  # nothing else (a token above all) is ever stored
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False)


def decode_grant(key: GrantKey, raw: str | None) -> float | None:
    """The grant time of a valid stored full grant for ``key``, else None (invalid or absent)."""
    if not raw:
        return None
    try:
        record = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(record, dict) or set(record) != _RECORD_FIELDS:
        return None
    if record["v"] != STORAGE_VERSION or record["level"] != Level.FULL.value:
        return None
    if any(record[name] != value for name, value in key.fields().items()):
        return None
    granted = record["grantedAt"]
    if not isinstance(granted, (int, float)) or isinstance(granted, bool) or granted <= 0:
        return None
    return float(granted)


class GrantStore:
    """Full grants in browser storage, validated on every read."""

    def __init__(self, storage: Storage, key: GrantKey) -> None:
        self._storage = storage
        self.key = key

    def read(self) -> bool:
        raw = self._storage.get(self.key.storage_key())
        if raw is None:
            return False
        if decode_grant(self.key, raw) is None:
            self._storage.remove(self.key.storage_key())  # invalid: ignored, and not kept around
            return False
        return True

    def write(self, granted_at_ms: float) -> None:
        self._storage.set(self.key.storage_key(), encode_grant(self.key, granted_at_ms))

    def clear(self) -> None:
        self._storage.remove(self.key.storage_key())


@dataclass(frozen=True, slots=True)
class LevelChange:
    previous: Level
    level: Level
    reason: str  # "user", "revoked", "task_ended", "storage", "initial", "navigation"


class AuthorizationCenter:
    """The current level and scope, and the decision for each step.

    ``task`` grants belong to a task id; when that task ends the level falls back to
    ``per_action``. A ``full`` grant is re-read from storage at each decision, so a
    revocation in another tab of the same origin takes effect here too.
    """

    def __init__(
        self,
        store: GrantStore,
        policy: HostPolicy,
        *,
        on_change: Callable[[LevelChange], None] = lambda change: None,
        clock: Callable[[], float] = lambda: time.time() * 1000,
    ) -> None:
        self._store = store
        self.policy = policy
        self._on_change = on_change
        self._clock = clock
        self._task_id: str | None = None
        stored_full = store.read()
        # SPEC P2: the host can only lower the initial level; it starts from what the user
        # granted before (a persisted full grant) or per_action.
        granted = Level.FULL if stored_full else Level.PER_ACTION
        self.level = granted if granted.rank <= policy.level.rank else policy.level
        # A host lowering a stored full grant to ``task`` means "for the first task only".
        self._attach_next_task = self.level is Level.TASK

    @property
    def scope(self) -> frozenset[str]:
        return self.policy.actions

    def in_scope(self, action: str) -> bool:
        return action in self.policy.actions

    def decide(
        self, action: str, *, task_id: str | None, require_confirmation: bool = False
    ) -> Decision:
        if not self.in_scope(action):
            return Decision.DENY
        if action in READ_ONLY_ACTIONS:
            return Decision.ALLOW
        level = self.current_level(task_id)
        if require_confirmation or level is Level.PER_ACTION:
            return Decision.CONFIRM
        return Decision.ALLOW

    def current_level(self, task_id: str | None) -> Level:
        if self.level is Level.FULL and not self._store.read():
            self._set(Level.PER_ACTION, "storage")  # revoked elsewhere, or the record went bad
        if self.level is Level.TASK and self._attach_next_task and task_id is not None:
            self._task_id, self._attach_next_task = task_id, False
        if self.level is Level.TASK and (task_id is None or task_id != self._task_id):
            self._set(Level.PER_ACTION, "task_ended")
        return self.level

    # -- user decisions (only ever called for real user input, see supervisor) --------------

    def grant(self, level: Level, *, task_id: str | None) -> None:
        if level is Level.FULL:
            self._store.write(self._clock())
        elif self._store.read():
            self._store.clear()  # a downgrade from full is also a revocation of the stored grant
        self._task_id = task_id if level is Level.TASK else None
        self._attach_next_task = False
        self._set(level, "user")

    def revoke(self) -> None:
        self._store.clear()
        self._task_id = None
        self._attach_next_task = False
        self._set(Level.PER_ACTION, "revoked")

    def holds_task(self, task_id: str) -> bool:
        """Whether the ``task`` level belongs to ``task_id``."""
        return self.level is Level.TASK and self._task_id == task_id

    def continue_task(self, task_id: str) -> None:
        """The ``task`` level of a task that went on to the tab's next page (SPEC B7): the
        user granted it to this task on the previous page. The host's ceiling still holds."""
        if Level.TASK.rank > self.policy.level.rank or self.level is Level.FULL:
            return
        self._task_id = task_id
        self._attach_next_task = False
        self._set(Level.TASK, "navigation")

    def task_ended(self, task_id: str | None) -> None:
        if self.level is Level.TASK and (task_id is None or task_id == self._task_id):
            self._task_id = None
            self._set(Level.PER_ACTION, "task_ended")

    def _set(self, level: Level, reason: str) -> None:
        previous, self.level = self.level, level
        if previous is not level or reason in ("user", "revoked"):
            self._on_change(LevelChange(previous, level, reason))
