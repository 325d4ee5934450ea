"""The shared heartbeat timer (SPEC W4): pings once per interval, finds silent pages."""

from __future__ import annotations

import asyncio

import pytest
from mao_embed.transport.heartbeat import Heartbeat


class FakePeer:
    def __init__(self, *, answers: bool = True) -> None:
        self.missed_pings = 0
        self.pings = 0
        self.timed_out = asyncio.Event()
        self._answers = answers

    def send_ping(self) -> None:
        self.pings += 1
        if self._answers:
            # What the receive loop does when the pong (or any frame) arrives.
            self.missed_pings = 0

    def heartbeat_timeout(self) -> None:
        self.timed_out.set()


async def test_silent_peer_times_out_when_its_ping_after_the_last_allowed_miss_is_due() -> None:
    heartbeat = Heartbeat(60.0, misses=3, slots=1)
    silent = FakePeer(answers=False)
    heartbeat.add(silent)
    for _ in range(3):
        heartbeat.tick()
    assert silent.pings == 3 and not silent.timed_out.is_set()
    heartbeat.tick()
    assert silent.timed_out.is_set() and silent.pings == 3
    assert len(heartbeat) == 0


async def test_answering_peer_is_never_timed_out() -> None:
    heartbeat = Heartbeat(60.0, misses=1, slots=1)
    alive = FakePeer()
    heartbeat.add(alive)
    for _ in range(20):
        heartbeat.tick()
    assert alive.pings == 20 and not alive.timed_out.is_set()
    heartbeat.remove(alive)


async def test_each_peer_is_pinged_once_per_round_of_slots_and_the_work_is_spread() -> None:
    heartbeat = Heartbeat(60.0, misses=3, slots=4)
    peers = [FakePeer() for _ in range(8)]
    for peer in peers:
        heartbeat.add(peer)
    pinged_per_tick = []
    for _ in range(4):
        before = sum(p.pings for p in peers)
        heartbeat.tick()
        pinged_per_tick.append(sum(p.pings for p in peers) - before)
    assert pinged_per_tick == [2, 2, 2, 2]
    assert [p.pings for p in peers] == [1] * 8
    for peer in peers:
        heartbeat.remove(peer)


async def test_removed_peer_is_not_pinged_again() -> None:
    heartbeat = Heartbeat(60.0, misses=3, slots=1)
    gone, stays = FakePeer(), FakePeer()
    heartbeat.add(gone)
    heartbeat.add(stays)
    heartbeat.tick()
    heartbeat.remove(gone)
    heartbeat.tick()
    assert (gone.pings, stays.pings) == (1, 2)
    heartbeat.remove(stays)


async def test_timer_finds_a_dead_peer_and_stops_when_nobody_is_left() -> None:
    heartbeat = Heartbeat(0.02, misses=2, slots=4)
    silent, alive = FakePeer(answers=False), FakePeer()
    heartbeat.add(silent)
    heartbeat.add(alive)
    await asyncio.wait_for(silent.timed_out.wait(), timeout=5)
    assert silent.pings == 2
    heartbeat.remove(alive)
    pings = alive.pings
    await asyncio.sleep(0.1)  # five intervals: a running timer would have pinged again
    assert alive.pings == pings and len(heartbeat) == 0


def test_rejects_settings_that_could_never_detect_anything() -> None:
    with pytest.raises(ValueError):
        Heartbeat(0, misses=3)
    with pytest.raises(ValueError):
        Heartbeat(1.0, misses=0)
