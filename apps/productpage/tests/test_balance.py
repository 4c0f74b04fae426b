"""Connection balancing between workers (balance.py)."""

import time

from productpage.balance import STALE_SECONDS, Balance


def live(balance, *slots):
    for slot in slots:
        balance.beat(slot)


def test_the_least_loaded_worker_always_accepts():
    balance = Balance(3)
    live(balance, 0, 1, 2)
    balance.add(0, 2)
    balance.add(1, 1)
    balance.add(2, 1)
    assert not balance.may_accept(0)
    assert balance.may_accept(1) and balance.may_accept(2)
    balance.add(1, 1)
    balance.add(2, 1)
    assert balance.may_accept(0), "all equal: everyone accepts"


def test_a_lone_worker_always_accepts():
    balance = Balance(2)
    live(balance, 0)
    balance.add(0, 50)
    assert balance.may_accept(0)


def test_stale_or_released_workers_do_not_hold_others_back(monkeypatch):
    balance = Balance(2)
    live(balance, 0, 1)
    balance.add(0, 3)
    assert not balance.may_accept(0)
    now = time.monotonic()
    monkeypatch.setattr(time, "monotonic", lambda: now + STALE_SECONDS + 0.1)
    balance.beat(0)
    assert balance.may_accept(0), "slot 1 stopped beating (hung or dead)"
    monkeypatch.undo()
    live(balance, 0, 1)
    assert not balance.may_accept(0)
    balance.release(1)
    assert balance.may_accept(0)


def test_slots_are_reused_after_release():
    balance = Balance(2)
    assert balance.assign_slot(set()) == 0
    assert balance.assign_slot({0}) == 1
    assert balance.assign_slot({0, 1}) is None
    assert balance.assign_slot({1}) == 0
