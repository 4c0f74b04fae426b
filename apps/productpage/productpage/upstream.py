"""Outbound HTTP: one urllib3 connection pool per backend, honouring the
UPSTREAM_* knobs and HTTP_NODELAY. A call sent on a reused connection that
the peer closed under it (no response, or a reset) is sent once more on a
new one, never otherwise (DESIGN.md, "How each knob is implemented")."""

import contextvars
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass

import urllib3
from urllib3.connection import HTTPConnection


class UpstreamError(Exception):
    """The call got no HTTP response (refused, reset, timed out, garbled)."""


@dataclass
class Reply:
    status: int
    body: bytes
    server_timing: str | None = None
    seconds: float = 0.0


# Whether the current call's connection had served a response before (set by request()).
_sent_on_reused = contextvars.ContextVar("sent_on_reused", default=False)
# The current call's time on the wire so far, each attempt's first send() (its connect included) to
# the answer's first byte: not the pool's checkout, nor urllib3's building of the request
# (DESIGN.md, "Server-Timing's clocks outermost and on the connection").
_on_wire = contextvars.ContextVar("on_wire", default=0.0)


class RetiringConnection(HTTPConnection):
    """urllib3's connection, closed after `retire_after` responses (each read
    whole: the pool preloads), so urllib3 finds it dropped and connects anew."""

    def __init__(self, *args, retire_after: int = 100, **kwargs):
        super().__init__(*args, **kwargs)
        self.retire_after = retire_after
        self.responses = 0

    def connect(self):
        super().connect()
        self.responses = 0

    def request(self, *args, **kwargs):
        _sent_on_reused.set(self.responses > 0)
        self.sent_at = None
        return super().request(*args, **kwargs)

    def send(self, data):
        self.sent_at = self.sent_at or time.perf_counter()
        super().send(data)

    def getresponse(self, *args, **kwargs):
        try:
            # The wait ends at the answer's first byte (at the read's timeout); parsing is ours.
            self.sock.settimeout(self.timeout)
            self.sock.recv(1, socket.MSG_PEEK)
        finally:
            _on_wire.set(_on_wire.get() + time.perf_counter() - self.sent_at)
        response = super().getresponse(*args, **kwargs)
        self.responses += 1
        if self.responses >= self.retire_after:
            self.close()
        return response


class BackendPool(urllib3.HTTPConnectionPool):
    """urllib3's pool for one backend, its connections RetiringConnection."""

    ConnectionCls = RetiringConnection


def pool(host, port, *, keepalive, max_requests, nodelay, timeout, max_idle) -> BackendPool:
    """The pool for one backend, calls going through get(); up to max_idle idle
    connections, so a worker serving that many pages never discards one."""
    return BackendPool(
        host,
        port,
        maxsize=max_idle,
        block=False,
        # connect, and each read, bounded by what is left of the call's time
        timeout=urllib3.Timeout(total=timeout),
        retries=False,
        # keep-alive off: the peer is told to close, and we close after the answer too
        headers=None if keepalive else {"Connection": "close"},
        socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1 if nodelay else 0)],
        retire_after=max_requests if keepalive else 1,
    )


def get(upstream: urllib3.HTTPConnectionPool, path: str, headers: Mapping[str, bytes]) -> Reply:
    """One GET, one attempt (but see the module's note on connections closed
    under a request): a Reply for any HTTP response, UpstreamError for none."""
    if upstream.headers:
        headers = {**upstream.headers, **headers}
    _on_wire.set(0.0)
    for attempt in (1, 2):
        _sent_on_reused.set(False)
        try:
            response = upstream.urlopen(
                "GET", path, headers=headers, retries=False, redirect=False, preload_content=True
            )
            timing = response.headers.get("Server-Timing")
            return Reply(response.status, response.data, timing, _on_wire.get())
        except (urllib3.exceptions.HTTPError, OSError) as err:
            if attempt == 1 and _closed_under_request(err) and _sent_on_reused.get():
                continue
            raise UpstreamError(f"{upstream.host}:{upstream.port}{path}: {err!r}") from err
    raise AssertionError("unreachable")


def _closed_under_request(err: Exception) -> bool:
    """The peer closed or reset the connection before any response: urllib3
    reports it as ProtocolError("Connection aborted.", <the socket error>)."""
    if not isinstance(err, urllib3.exceptions.ProtocolError) or len(err.args) < 2:
        return False
    return isinstance(err.args[1], (ConnectionResetError, BrokenPipeError))
