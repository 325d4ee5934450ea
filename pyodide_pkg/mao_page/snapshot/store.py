"""Snapshots and opaque element refs (SPEC R1-R3).

The map snapshotId -> elementId -> element lives only here, in page memory. Ids are random
(no index that leaks structure). Retention is bounded by count and age; an evicted snapshot
releases its element handles. When a ref may still be used is ``refs``' rule.
"""

from __future__ import annotations

import random
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import chain
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

if TYPE_CHECKING:
    from .element import Element

MAX_SNAPSHOTS = 8
SNAPSHOT_TTL_S = 15 * 60


class Handle(Protocol):
    def release(self) -> None: ...


class ElementEntry(NamedTuple):
    """What a ref stands for: the element as the scan described it (``element.Element``, the
    one element model) and what only a ref has, its id and the live handles to act through.
    What names it (role, label, tag, type, and whether its value is masked) reads through;
    when the ref goes stale is ``refs``' rule. A NamedTuple: one is made per ref an agent uses
    (and per listed element for a stale ref's suggestion), and a frozen dataclass's
    ``__init__`` (an ``object.__setattr__`` per field) cost more in Pyodide."""

    element_id: str
    handle: Any
    element: Element
    # A custom checkbox or radio: the hidden real input whose state the label stands for
    # (``handle`` is then the label, the thing to click).
    control: Any = None

    @property
    def role(self) -> str:
        return self.element.role

    @property
    def label(self) -> str:
        return self.element.label

    @property
    def tag(self) -> str:
        return self.element.tag

    @property
    def type(self) -> str:
        return self.element.type

    @property
    def sensitive(self) -> bool:
        """Whether its value is masked: a sensitive field or a page owner's private one."""
        return self.element.sensitive or self.element.private


class Refs(Mapping[str, ElementEntry]):
    """A snapshot's refs: elementId -> ``ElementEntry``. Entries are given whole
    (``add_entries``) or made on first use (``add_records``): a whole-page snapshot lists
    thousands of elements and an agent acts on a few (docs/performance.md)."""

    __slots__ = ("_given", "_positions", "_make", "_made", "_handles")

    def __init__(self) -> None:
        self._given: dict[str, ElementEntry] = {}
        # ``add_records``: id -> position for ``_make``, the entries made so far, and every
        # handle they hold (released with the snapshot, made or not).
        self._positions: dict[str, int] = {}
        self._make: Callable[[str, int], ElementEntry] | None = None
        self._made: dict[str, ElementEntry] = {}
        self._handles: list[Handle] = []

    def add_entries(self, entries: list[ElementEntry]) -> None:
        self._given.update((entry.element_id, entry) for entry in entries)

    def add_records(
        self,
        element_ids: list[str],
        make: Callable[[str, int], ElementEntry],
        handles: list[Handle],
    ) -> None:
        """Refs whose entries ``make(element_id, position)`` builds when first asked for;
        ``handles``: every handle those entries hold."""
        if self._make is not None:
            raise ValueError("a snapshot takes one set of records")
        self._positions = dict(zip(element_ids, range(len(element_ids)), strict=True))
        self._make = make
        self._handles = handles

    def __getitem__(self, element_id: str) -> ElementEntry:
        entry = self._made.get(element_id) or self._given.get(element_id)
        if entry is not None:
            return entry
        position = self._positions[element_id]  # KeyError also once released
        assert self._make is not None  # set with the positions, cleared with them
        entry = self._made[element_id] = self._make(element_id, position)
        return entry

    def __contains__(self, element_id: object) -> bool:
        return element_id in self._positions or element_id in self._given

    def __iter__(self) -> Iterator[str]:
        return chain(self._given, self._positions)

    def __len__(self) -> int:
        return len(self._given) + len(self._positions)

    def release(self) -> None:
        for entry in self._given.values():
            entry.handle.release()
            if entry.control is not None:
                entry.control.release()
        for handle in self._handles:
            handle.release()
        self._given.clear()
        self._positions.clear()
        self._made.clear()
        self._make = None
        self._handles = []


@dataclass(slots=True)
class Snapshot:
    snapshot_id: str
    page_version: str
    navigation_epoch: int
    url: str
    title: str
    created: float
    mutations: int
    entries: Refs = field(default_factory=Refs)

    def release(self) -> None:
        self.entries.release()


# Ids come from a generator seeded from the OS once per process: in Pyodide every
# ``secrets`` call crosses into JavaScript (crypto.getRandomValues), which costs more than the
# rest of adding an element. Ids only need to be unguessable in position, not secret.
_ids = random.Random(secrets.randbits(128))


def _new_ids(prefix: str, count: int, taken: set[str] | dict[str, Any]) -> list[str]:
    """``count`` distinct ids, none in ``taken``. One draw and one format for all of them
    (docs/performance.md)."""
    digits = f"{_ids.getrandbits(24 * count):0{6 * count}x}"
    ids = [prefix + digits[i:i + 6] for i in range(0, 6 * count, 6)]
    unique = set(ids)
    if len(unique) == count and unique.isdisjoint(taken):
        return ids
    # Among thousands of 24-bit ids a repeat is likely enough: draw again for the later copies.
    seen = set(taken)
    for position, candidate in enumerate(ids):
        while candidate in seen:
            candidate = f"{prefix}{_ids.getrandbits(24):06x}"
        seen.add(candidate)
        ids[position] = candidate
    return ids


def document_of(snapshot_id: str) -> str | None:
    """The document tag a snapshot id carries (``s1a2b3c.9f3e`` -> ``9f3e``), or None."""
    head, dot, tag = snapshot_id.partition(".")
    return tag if dot and head.startswith("s") and tag else None


class SnapshotStore:
    """Snapshots of one document. ``document_tag`` (random per document, from the loader)
    ends every snapshot id, so a ref from another document of the same tab is known for what
    it is: stale because the tab navigated (SPEC B7, ``refs.snapshot_of``)."""

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.monotonic,
        max_snapshots: int = MAX_SNAPSHOTS,
        ttl_s: float = SNAPSHOT_TTL_S,
        document_tag: str = "",
    ) -> None:
        self._snapshots: OrderedDict[str, Snapshot] = OrderedDict()
        self._clock = clock
        self._max = max_snapshots
        self._ttl = ttl_s
        self.document_tag = document_tag
        self._suffix = f".{document_tag}" if document_tag else ""

    def create(
        self, *, page_version: str, navigation_epoch: int, url: str, title: str, mutations: int
    ) -> Snapshot:
        self._expire()
        snapshot = Snapshot(
            snapshot_id=_new_ids("s", 1, self._snapshots)[0] + self._suffix,
            page_version=page_version,
            navigation_epoch=navigation_epoch,
            url=url,
            title=title,
            created=self._clock(),
            mutations=mutations,
        )
        self._snapshots[snapshot.snapshot_id] = snapshot
        while len(self._snapshots) > self._max:
            _, oldest = self._snapshots.popitem(last=False)
            oldest.release()
        return snapshot

    @staticmethod
    def add_all(snapshot: Snapshot, refs: list[tuple[Any, ...]]) -> list[str]:
        """New refs in ``snapshot``, one per tuple of ``ElementEntry``'s fields after the id
        (in its order; trailing ones may be left to their defaults); returns the ids in order."""
        ids = SnapshotStore.new_ids(snapshot, len(refs))
        SnapshotStore.add_entries(
            snapshot,
            [
                ElementEntry(element_id, *fields)
                for element_id, fields in zip(ids, refs, strict=True)
            ],
        )
        return ids

    @staticmethod
    def new_ids(snapshot: Snapshot, count: int) -> list[str]:
        """``count`` element ids that ``snapshot`` does not use yet, for ``add_entries``. All at
        once, as a whole-page snapshot adds thousands."""
        return _new_ids("e", count, snapshot.entries)

    @staticmethod
    def add_entries(snapshot: Snapshot, entries: list[ElementEntry]) -> None:
        """Refs made with ids from ``new_ids``, the entries built by the caller."""
        snapshot.entries.add_entries(entries)

    def latest(self) -> Snapshot | None:
        self._expire()
        return next(reversed(self._snapshots.values()), None)

    def find(self, snapshot_id: str) -> Snapshot | None:
        """The snapshot, or None when it is unknown, expired or evicted (``refs.snapshot_of``
        refuses a ref to it)."""
        self._expire()
        return self._snapshots.get(snapshot_id)

    def invalidate_all(self) -> None:
        for snapshot in self._snapshots.values():
            snapshot.release()
        self._snapshots.clear()

    def __iter__(self) -> Iterator[Snapshot]:
        return iter(self._snapshots.values())

    def _expire(self) -> None:
        now = self._clock()
        for snapshot_id in [
            s.snapshot_id for s in self._snapshots.values() if now - s.created > self._ttl
        ]:
            self._snapshots.pop(snapshot_id).release()
