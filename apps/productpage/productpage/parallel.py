"""Run one call alongside the current one (details next to reviews).

Under gunicorn's gevent worker the socket module is patched and a greenlet
is the cheap way; anywhere else (tests driving the Flask app in-process) a
thread pool does the same job.
"""

from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable


def _gevent_active() -> bool:
    try:
        from gevent import monkey
    except ImportError:
        return False
    return monkey.is_module_patched("socket")


class Parallel:
    def __init__(self, threads: int = 32):
        self._gevent = _gevent_active()
        if self._gevent:
            import gevent
            self._spawn = gevent.spawn
        else:
            self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="parallel")

    def start(self, fn: Callable, *args) -> Callable[[], Any]:
        """Start fn(*args) and return a function that waits for its result."""
        if self._gevent:
            return self._spawn(fn, *args).get
        return self._pool.submit(fn, *args).result
