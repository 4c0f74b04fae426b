"""A connection pool for one backend, honouring the UPSTREAM_* knobs.

urllib3 and requests cannot retire a connection after N requests, and cost
more CPU per call than this page can afford, so the pool is our own: a LIFO
of idle connections (see http1.py), each retired after `max_requests` uses.
"""

from collections import deque
from dataclasses import dataclass
from functools import partial
from typing import Callable, Iterable, Tuple

from .http1 import Connection, PeerClosed, ProtocolError

# Idle connections kept per backend; more concurrent calls than this still
# work, the surplus connections are closed when returned.
MAX_IDLE = 64

# How a kept-alive connection shows that the peer closed it while it sat
# idle: the request never reached the application, so it is sent again on a
# new connection, which is not a second attempt.
_STALE = (PeerClosed, ConnectionResetError, BrokenPipeError)
# What a call without an HTTP response raises, turned into UpstreamError.
_FAILURES = (OSError, ProtocolError, ValueError)


class UpstreamError(Exception):
    """The call got no HTTP response (refused, reset, timed out, garbled)."""


@dataclass
class Reply:
    status: int
    body: bytes


class Upstream:
    """GET requests to one host:port."""

    def __init__(self, host: str, port: int, *, keepalive: bool, max_requests: int,
                 nodelay: bool, timeout: float):
        self.host = host
        self.port = port
        self.keepalive = keepalive
        self.max_requests = max_requests
        self.nodelay = nodelay
        self.timeout = timeout
        self._idle = deque()

    def get(self, path: str, headers: Iterable[Tuple[str, bytes]] = ()) -> Reply:
        """One attempt: a Reply for any HTTP response, UpstreamError for none."""
        return self.start(path, headers)()

    def start(self, path: str, headers: Iterable[Tuple[str, bytes]] = ()) -> Callable[[], Reply]:
        """Send the request now and return a function that reads its reply
        (what get() returns or raises). Requests started before any of them
        is read are served side by side, without a thread or greenlet each.
        """
        conn = self._checkout()
        reused = conn.uses > 0
        try:
            conn.send(path, headers, close=not self.keepalive)
        except BaseException as err:
            conn.close()
            if isinstance(err, _STALE) and reused:
                return partial(self._on_new, path, headers)
            if isinstance(err, _FAILURES):
                return partial(_fail, self._error(path, err), err)
            raise
        return partial(self._finish, conn, reused, path, headers)

    def _finish(self, conn: Connection, reused: bool, path: str, headers) -> Reply:
        try:
            return self._receive(conn)
        except _STALE as err:
            if not reused:
                raise self._error(path, err) from err
        except _FAILURES as err:
            raise self._error(path, err) from err
        return self._on_new(path, headers)

    def _on_new(self, path: str, headers) -> Reply:
        """The request again on a new connection: the kept-alive one it was
        sent on had been closed by the peer while idle."""
        conn = self._new()
        try:
            try:
                conn.send(path, headers, close=not self.keepalive)
            except BaseException:
                conn.close()
                raise
            return self._receive(conn)  # closes conn itself on failure
        except _FAILURES as err:
            raise self._error(path, err) from err

    def _error(self, path: str, err: BaseException) -> UpstreamError:
        return UpstreamError(f"{self.host}:{self.port}{path}: {err!r}")

    def close(self):
        while self._idle:
            self._idle.pop().close()

    def _new(self) -> Connection:
        return Connection(self.host, self.port, self.nodelay, self.timeout)

    def _checkout(self) -> Connection:
        try:
            return self._idle.pop()
        except IndexError:
            return self._new()

    def _receive(self, conn: Connection) -> Reply:
        try:
            status, body, reusable = conn.receive(close=not self.keepalive)
        except BaseException:
            conn.close()
            raise
        if (reusable and self.keepalive and conn.uses < self.max_requests
                and len(self._idle) < MAX_IDLE):
            self._idle.append(conn)
        else:
            conn.close()
        return Reply(status, body)


def _fail(error: UpstreamError, cause: BaseException):
    raise error from cause
