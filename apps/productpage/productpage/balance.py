"""Spread client connections evenly over gunicorn's worker processes.

All workers accept from one listening socket, and on Linux the same worker
tends to win every race while idle: measured, 10 connections opened by a
load generator landed 8/2 or 9/1 on two workers, so one core did nearly all
the work under keep-alive. Here each worker publishes how many connections
it holds in memory shared by all workers (mapped by the master before it
forks), and a worker stops accepting while it holds more than the least
loaded live worker. The least loaded one never stops, so someone always
accepts; a worker whose heartbeat is older than STALE_SECONDS (hung, dead,
not started) is ignored, so it cannot make the others stop.
"""

import ctypes
import time
from multiprocessing.sharedctypes import RawArray
from typing import Optional

STALE_SECONDS = 3.0


class Balance:
    def __init__(self, slots: int):
        self.slots = slots
        self._connections = RawArray(ctypes.c_long, slots)
        self._heartbeat = RawArray(ctypes.c_double, slots)

    # master side

    def assign_slot(self, used) -> Optional[int]:
        """A slot for a worker about to be forked; `used` are the live ones'."""
        for slot in range(self.slots):
            if slot not in used:
                return slot
        return None

    def release(self, slot: Optional[int]):
        if slot is not None:
            self._heartbeat[slot] = 0.0
            self._connections[slot] = 0

    # worker side (each worker writes only its own slot)

    def beat(self, slot: int):
        self._heartbeat[slot] = time.monotonic()

    def add(self, slot: int, delta: int):
        self._connections[slot] += delta

    def may_accept(self, slot: int) -> bool:
        now = time.monotonic()
        others = [self._connections[i] for i in range(self.slots)
                  if i != slot and now - self._heartbeat[i] < STALE_SECONDS]
        return not others or self._connections[slot] <= min(others)
