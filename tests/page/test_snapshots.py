"""Snapshots and opaque element refs (SPEC R1-R3)."""

from __future__ import annotations

from typing import Any

import pytest
from mao_page.errors import ToolFailure
from mao_page.protocol import ErrorCode, PageToolRequest
from mao_page.snapshot import refs
from mao_page.snapshot import store as snapshots
from mao_page.snapshot.element import Element, key_of
from mao_page.snapshot.refs import suggest_replacement
from mao_page.snapshot.store import ElementEntry, Snapshot, SnapshotStore

from .page_rows import fact_row, scanned

URL = "https://shop.example/cart"


class FakeHandle:
    def __init__(self, name: str) -> None:
        self.name = name
        self.released = False

    def release(self) -> None:
        self.released = True


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _snapshot(store: SnapshotStore, epoch: int = 0, url: str = URL) -> Snapshot:
    return store.create(
        page_version="v1", navigation_epoch=epoch, url=url, title="Cart", mutations=0
    )


def _element(
    *, role: str = "button", label: str = "Buy", tag: str = "button", **fields: Any
) -> Element:
    # Labelled by text around it: these refs' names are not re-checked (refs.checked_name).
    return scanned(
        role=role, label=label, tag=tag, key=(tag, role, label), label_source="nearby", **fields
    )


def _add(snapshot: Snapshot, handle: FakeHandle, *, role: str = "button", label: str = "Buy",
         tag: str = "button", type: str = "", placeholder: str = "") -> str:
    element = _element(role=role, label=label, tag=tag, type=type, placeholder=placeholder)
    return SnapshotStore.add_all(snapshot, [(handle, element)])[0]


def _entry(
    element_id: str, *, role: str = "button", label: str = "Buy", tag: str = "button"
) -> ElementEntry:
    element = _element(role=role, label=label, tag=tag)
    return ElementEntry(element_id, FakeHandle(element_id), element)


def test_element_ids_are_unique_within_a_snapshot() -> None:  # SPEC R1
    snapshot = _snapshot(SnapshotStore())
    ids = [_add(snapshot, FakeHandle(str(i))) for i in range(500)]
    assert len(set(ids)) == 500


class _RepeatingDraws:
    """A generator whose draws for many ids at once repeat (24-bit blocks from 0-2); single
    draws count up."""

    def __init__(self) -> None:
        self.single = 0

    def getrandbits(self, bits: int) -> int:
        if bits == 24:
            self.single += 1
            return self.single
        return int("".join(f"{i % 3:06x}" for i in range(bits // 24)), 16)


def test_element_ids_added_at_once_are_unique_even_when_draws_repeat(
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # SPEC R1
    monkeypatch.setattr(snapshots, "_ids", _RepeatingDraws())
    snapshot = _snapshot(SnapshotStore())
    taken = _add(snapshot, FakeHandle("first"))
    handles = [FakeHandle(str(i)) for i in range(40)]
    ids = SnapshotStore.add_all(snapshot, [(h, _element()) for h in handles])
    assert len(set(ids)) == 40 and taken not in ids
    assert [snapshot.entries[element_id].handle for element_id in ids] == handles


def test_ids_are_valid_protocol_refs() -> None:  # SPEC R1, W1
    store = SnapshotStore()
    snapshot = _snapshot(store)
    element_id = _add(snapshot, FakeHandle("a"))
    request = PageToolRequest.model_validate(
        {
            "requestId": "r1",
            "sessionId": "s",
            "tool": "page_click",
            "actions": [
                {"action": "click", "snapshotId": snapshot.snapshot_id, "elementId": element_id}
            ],
        }
    )
    assert request.actions[0].element_id == element_id


def test_element_ids_do_not_encode_position() -> None:  # SPEC R1: opaque, no index leaks
    store = SnapshotStore()
    first, second = _snapshot(store), _snapshot(store)
    first_ids = [_add(first, FakeHandle(str(i))) for i in range(20)]
    second_ids = [_add(second, FakeHandle(str(i))) for i in range(20)]
    # The same elements added in the same order get unrelated ids in another snapshot.
    assert first_ids != second_ids
    assert not any(
        str(position) == element_id.lstrip("e") for position, element_id in enumerate(first_ids)
    )


def test_snapshot_ids_are_unique() -> None:  # SPEC R1
    store = SnapshotStore(max_snapshots=100)
    ids = {_snapshot(store).snapshot_id for _ in range(100)}
    assert len(ids) == 100


def test_resolve_returns_the_entry_behind_a_ref() -> None:  # SPEC R1
    store = SnapshotStore()
    snapshot = _snapshot(store)
    handle = FakeHandle("buy")
    element_id = _add(snapshot, handle)
    found_snapshot, entry = refs.entry_of(
        store, snapshot.snapshot_id, element_id, navigation_epoch=0, url=URL
    )
    assert found_snapshot is snapshot
    assert entry.handle is handle


def test_unknown_snapshot_is_a_stale_ref() -> None:  # SPEC R2
    store = SnapshotStore()
    with pytest.raises(ToolFailure) as failure:
        refs.entry_of(store, "s-never", "e1", navigation_epoch=0, url=URL)
    assert failure.value.code is ErrorCode.STALE_REF


@pytest.mark.parametrize(
    ("epoch", "url"), [(1, URL), (0, URL + "#step-2")], ids=["reload", "spa-route"]
)
def test_ref_from_before_a_navigation_is_a_stale_ref(epoch: int, url: str) -> None:  # SPEC R2
    store = SnapshotStore()
    snapshot = _snapshot(store)
    element_id = _add(snapshot, FakeHandle("buy"))
    with pytest.raises(ToolFailure) as failure:
        refs.entry_of(store, snapshot.snapshot_id, element_id, navigation_epoch=epoch, url=url)
    assert failure.value.code is ErrorCode.STALE_REF
    assert failure.value.details == {"reason": "navigated"}
    assert failure.value.element_id == element_id


def test_unknown_element_in_a_live_snapshot_is_not_found() -> None:  # SPEC A6
    store = SnapshotStore()
    snapshot = _snapshot(store)
    _add(snapshot, FakeHandle("buy"))
    with pytest.raises(ToolFailure) as failure:
        refs.entry_of(store, snapshot.snapshot_id, "e-missing", navigation_epoch=0, url=URL)
    assert failure.value.code is ErrorCode.NOT_FOUND
    assert failure.value.to_error().element_id == "e-missing"


def test_oldest_snapshot_is_evicted_beyond_the_count_and_releases_its_handles() -> None:  # SPEC R2
    store = SnapshotStore(max_snapshots=2)
    oldest = _snapshot(store)
    handles = [FakeHandle("a"), FakeHandle("b")]
    element_id = _add(oldest, handles[0])
    _add(oldest, handles[1])
    _snapshot(store)
    assert not any(h.released for h in handles)
    _snapshot(store)
    assert all(h.released for h in handles)
    with pytest.raises(ToolFailure) as failure:
        refs.entry_of(store, oldest.snapshot_id, element_id, navigation_epoch=0, url=URL)
    assert failure.value.code is ErrorCode.STALE_REF


def test_snapshot_expires_after_its_ttl_and_releases_its_handles() -> None:  # SPEC R2
    clock = FakeClock()
    store = SnapshotStore(clock=clock, ttl_s=60)
    snapshot = _snapshot(store)
    handle = FakeHandle("buy")
    element_id = _add(snapshot, handle)
    clock.now += 60
    refs.entry_of(store, snapshot.snapshot_id, element_id, navigation_epoch=0, url=URL)
    clock.now += 1
    with pytest.raises(ToolFailure) as failure:
        refs.entry_of(store, snapshot.snapshot_id, element_id, navigation_epoch=0, url=URL)
    assert failure.value.code is ErrorCode.STALE_REF
    assert handle.released


def test_latest_is_the_newest_live_snapshot() -> None:  # SPEC R3
    clock = FakeClock()
    store = SnapshotStore(clock=clock, ttl_s=60)
    _snapshot(store)
    newest = _snapshot(store)
    assert store.latest() is newest
    clock.now += 61
    assert store.latest() is None


def test_invalidate_all_releases_every_handle() -> None:  # SPEC R2
    store = SnapshotStore()
    handles = [FakeHandle("a"), FakeHandle("b")]
    _add(_snapshot(store), handles[0])
    _add(_snapshot(store), handles[1])
    store.invalidate_all()
    assert all(h.released for h in handles)
    assert list(store) == []


def test_replacement_is_suggested_for_a_unique_match() -> None:  # SPEC R3
    stale = _entry("e-old", label="Checkout")
    fresh = [
        _entry("e1", label="Cart"),
        _entry("e2", label="Checkout"),
        _entry("e3", role="link", label="Checkout", tag="a"),
    ]
    assert suggest_replacement(stale, fresh) == "e2"


def test_no_replacement_when_the_match_is_ambiguous() -> None:  # SPEC R3
    stale = _entry("e-old", label="Delete")
    fresh = [_entry("e1", label="Delete"), _entry("e2", label="Delete")]
    assert suggest_replacement(stale, fresh) is None


def test_no_replacement_when_nothing_matches() -> None:  # SPEC R3
    stale = _entry("e-old", label="Delete")
    assert suggest_replacement(stale, [_entry("e1", label="Edit")]) is None


class _StillPage:
    """Just enough of ``page.Page`` for ``Inspector.resolve``: a page that never changes."""

    def counters(self) -> tuple[int, int, float, str, str]:
        return 0, 0, 1000.0, URL, "Cart"

    def is_connected(self, handle: object) -> bool:
        raise AssertionError("a placeholder must be refused before the DOM is touched")


@pytest.mark.parametrize(("opaque", "code"), [("cross_origin_frame", ErrorCode.CROSS_ORIGIN_FRAME),
                                              ("closed_shadow_root", ErrorCode.CLOSED_SHADOW_ROOT)])
def test_placeholders_are_refused_with_their_own_code(
    opaque: str, code: ErrorCode
) -> None:  # SPEC S6
    from mao_page.snapshot.inspector import Inspector

    store = SnapshotStore()
    snapshot = store.create(
        page_version="0.0", navigation_epoch=0, url=URL, title="Cart", mutations=0
    )
    frame = _element(role="iframe", label="Pay", tag="iframe", opaque=opaque)
    [element_id] = SnapshotStore.add_all(snapshot, [(FakeHandle("frame"), frame)])
    with pytest.raises(ToolFailure) as failure:
        Inspector(_StillPage(), store).resolve(snapshot.snapshot_id, element_id)  # type: ignore[arg-type]
    assert failure.value.code == code


def test_no_replacement_is_suggested_from_a_placeholder() -> None:  # SPEC R3
    entry = _entry("e1", role="iframe", label="Pay", tag="iframe")
    frame = _element(role="iframe", label="Pay", tag="iframe", opaque="cross_origin_frame")
    placeholder = ElementEntry("e2", FakeHandle("e2"), frame)
    assert suggest_replacement(entry, [placeholder]) is None


def _records(snapshot: Snapshot, handles: list[FakeHandle]) -> tuple[list[str], list[int]]:
    """Refs added as records, with the positions their entries were made for."""
    made: list[int] = []

    def make(element_id: str, position: int) -> ElementEntry:
        made.append(position)
        return ElementEntry(element_id, handles[position], _element(label=f"Buy {position}"))

    ids = SnapshotStore.new_ids(snapshot, len(handles))
    snapshot.entries.add_records(ids, make, handles)  # type: ignore[arg-type]
    return ids, made


def test_released_refs_make_no_entry_and_list_none() -> None:  # SPEC R2
    store = SnapshotStore()
    snapshot = _snapshot(store)
    ids, made = _records(snapshot, [FakeHandle(str(i)) for i in range(3)])
    snapshot.release()
    assert (len(snapshot.entries), list(snapshot.entries), ids[0] in snapshot.entries) == (
        0,
        [],
        False,
    )
    with pytest.raises(KeyError):
        snapshot.entries[ids[0]]
    assert made == []


def test_a_ref_added_as_a_record_resolves_to_its_entry_made_once() -> None:  # SPEC R1
    store = SnapshotStore()
    snapshot = _snapshot(store)
    handles = [FakeHandle(str(i)) for i in range(5)]
    ids, made = _records(snapshot, handles)
    assert made == [] and len(snapshot.entries) == 5 and list(snapshot.entries) == ids
    _found, entry = refs.entry_of(store, snapshot.snapshot_id, ids[3], navigation_epoch=0, url=URL)
    again = refs.entry_of(store, snapshot.snapshot_id, ids[3], navigation_epoch=0, url=URL)[1]
    assert (
        entry is again
        and entry.handle is handles[3]
        and entry.label == "Buy 3"
        and entry.element_id == ids[3]
    )
    assert made == [3]
    with pytest.raises(ToolFailure) as failure:
        refs.entry_of(store, snapshot.snapshot_id, "e-missing", navigation_epoch=0, url=URL)
    assert failure.value.code is ErrorCode.NOT_FOUND


def test_refs_added_as_records_release_every_handle_made_or_not() -> None:  # SPEC R2
    store = SnapshotStore(max_snapshots=1)
    snapshot = _snapshot(store)
    handles = [FakeHandle(str(i)) for i in range(4)]
    ids, _made = _records(snapshot, handles)
    given = FakeHandle("given")
    _add(snapshot, given)
    refs.entry_of(store, snapshot.snapshot_id, ids[0], navigation_epoch=0, url=URL)
    _snapshot(store)  # evicts the first
    assert all(handle.released for handle in handles) and given.released
    with pytest.raises(ToolFailure) as failure:
        refs.entry_of(store, snapshot.snapshot_id, ids[1], navigation_epoch=0, url=URL)
    assert failure.value.code is ErrorCode.STALE_REF


class _ChangedPage(_StillPage):
    """A page whose element is still there with its aria-label changed to ``label``."""

    def __init__(self, label: str) -> None:
        self.row = fact_row("button", aria_label=label)

    def is_connected(self, handle: object) -> bool:
        return True

    def row_of(self, handle: object) -> list[object]:
        return self.row


def test_a_changed_key_makes_the_ref_stale_with_a_suggestion_and_no_entry() -> None:  # SPEC R2, R3
    store = SnapshotStore()
    snapshot = _snapshot(store)
    key = key_of(fact_row("button", aria_label="Buy"), "button")
    ref = (FakeHandle("buy"), scanned(label="Buy", key=key, label_source="nearby"))
    [element_id] = SnapshotStore.add_all(snapshot, [ref])
    entry = snapshot.entries[element_id]
    still = _ChangedPage("Buy")
    assert refs.live_problem(still, entry) == (still.row, "")  # type: ignore[arg-type]
    fresh = ("s-fresh", [_entry("e-new", label="Buy"), _entry("e-other", label="Cart")])
    changed = _ChangedPage("Delete account")
    with pytest.raises(ToolFailure) as failure:
        refs.resolve(changed, store, snapshot.snapshot_id, element_id, lambda: fresh)
    assert failure.value.code is ErrorCode.STALE_REF
    assert failure.value.details["reason"] == "the element's role, type or label changed"
    assert failure.value.details["suggestion"] == {
        "snapshotId": "s-fresh", "elementId": "e-new", "label": "Buy", "role": "button",
    }
