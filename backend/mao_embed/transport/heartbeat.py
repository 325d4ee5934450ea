"""One heartbeat timer for every page connection (SPEC W4).

Each connection is pinged every ``interval_s``; a connection that has let ``misses`` pings go
unanswered when its next one is due is dead. Any frame from the page counts as an answer
(``HeartbeatPeer.missed_pings`` is reset by the receive loop).

A task sleeping per connection cost an idle session a task, a coroutine frame, a future and
a timer, and because pages connect in bursts their pings went out in bursts too: hundreds
of pings and pongs in the same few milliseconds every interval, in the middle of whatever
tool calls were running, which showed as tail latency under load. Here connections are
dealt round-robin into ``slots`` groups and one timer visits one group per
``interval_s / slots``: every
connection is still pinged once per interval, and the work is spread evenly over it.
A new connection's first ping comes within one interval of joining, not exactly one
interval after; the page only needs pings to keep coming (it gives up after three silent
intervals).
"""

from __future__ import annotations

import asyncio
from typing import Protocol

DEFAULT_SLOTS = 16


class HeartbeatPeer(Protocol):
    """What the heartbeat needs from a connection. Both calls must not block: they start
    whatever sending they need on their own, so a slow page cannot hold up the others."""

    missed_pings: int

    def send_ping(self) -> None: ...

    def heartbeat_timeout(self) -> None: ...


class Heartbeat:
    """Pings registered peers once per interval and times out the silent ones.

    ``tick`` does one slot's work and is what the timer calls; tests call it directly.
    The timer runs only while peers are registered.
    """

    def __init__(self, interval_s: float, misses: int, *, slots: int = DEFAULT_SLOTS) -> None:
        if interval_s <= 0 or misses < 1 or slots < 1:
            raise ValueError("interval_s > 0, misses >= 1 and slots >= 1 are required")
        self._interval_s = interval_s
        self._misses = misses
        # Insertion-ordered dicts used as sets: pings go out in joining order.
        self._slots: list[dict[HeartbeatPeer, None]] = [{} for _ in range(slots)]
        self._slot_of: dict[HeartbeatPeer, int] = {}
        self._next_slot_for_peer = 0
        self._next_slot_to_visit = 0
        self._timer: asyncio.TimerHandle | None = None
        self._due = 0.0

    def __len__(self) -> int:
        return len(self._slot_of)

    def add(self, peer: HeartbeatPeer) -> None:
        if peer in self._slot_of:
            return
        slot = self._next_slot_for_peer
        self._next_slot_for_peer = (slot + 1) % len(self._slots)
        self._slots[slot][peer] = None
        self._slot_of[peer] = slot
        if self._timer is None:
            loop = asyncio.get_running_loop()
            self._due = loop.time()
            self._schedule(loop)

    def remove(self, peer: HeartbeatPeer) -> None:
        slot = self._slot_of.pop(peer, None)
        if slot is not None:
            del self._slots[slot][peer]
        if not self._slot_of and self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def tick(self) -> None:
        """Visit the next slot: time out peers with ``misses`` unanswered pings, ping the rest."""
        slot = self._slots[self._next_slot_to_visit]
        self._next_slot_to_visit = (self._next_slot_to_visit + 1) % len(self._slots)
        for peer in list(slot):
            if peer.missed_pings >= self._misses:
                self.remove(peer)
                peer.heartbeat_timeout()
            else:
                peer.missed_pings += 1
                peer.send_ping()

    def _schedule(self, loop: asyncio.AbstractEventLoop) -> None:
        # Absolute due times, so a late tick does not push every later one back.
        self._due += self._interval_s / len(self._slots)
        self._timer = loop.call_at(self._due, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        self.tick()
        if self._slot_of and self._timer is None:
            loop = asyncio.get_running_loop()
            # After a stall longer than a whole tick, start again from now rather than
            # running the missed ticks back to back.
            self._due = max(self._due, loop.time() - self._interval_s / len(self._slots))
            self._schedule(loop)
