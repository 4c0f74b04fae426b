"""The gunicorn worker productpage runs: gevent (README, "Choosing the worker
model"), with what the stock GeventWorker lacks.

- HTTP_NODELAY on accepted sockets. gunicorn sets TCP_NODELAY on its
  listening socket and Linux copies it to every accepted socket, so `false`
  would silently stay on; gunicorn writes the response head and body with
  separate send() calls, exactly the case Nagle delays. The option is set
  explicitly, both ways, on every accepted socket.
- Drain on SIGTERM and SIGINT: stop accepting, let in-flight requests finish
  (their responses carry "Connection: close"), close kept-alive connections
  that wait for a next request at once instead of after their idle timeout,
  and exit when nothing is left or SHUTDOWN_TIMEOUT_SECONDS passed. The
  stock worker waits out idle keep-alive connections, polls once a second,
  and treats SIGINT as "quit now".
- Connections spread evenly over the workers (see balance.py).
- With HTTP_NODELAY=true, the response head goes out with the first body
  bytes in one send() (OneWriteResponse) instead of two: one system call
  and one TCP segment less per response. With false the two writes stay,
  since they are what Nagle's algorithm stalls on (the legacy profile).
- The common request (GET/HEAD, no body, ordinary header fields) is read,
  answered and written by fastpath.py; the first request of any other shape
  hands the connection to gunicorn's own loop, with the bytes already read
  put back in front (_Replay).
"""

import _socket
import gc
import os
import signal
import socket
import time
from functools import partial
from typing import Optional

import gevent
from gevent import socket as gsocket
from gevent.event import Event
from gevent.pool import Pool
from gevent.server import StreamServer
from gunicorn import util
from gunicorn.http import wsgi
from gunicorn.workers.ggevent import GeventWorker

from .balance import Balance
from .fastpath import MAX_HEAD, Responder, parse_head

# How often a stopping worker looks at what is still running.
_DRAIN_POLL_SECONDS = 0.05
# How often a worker that stopped accepting (it holds more connections than
# another) checks whether it may accept again; someone else accepts meanwhile.
_BALANCE_POLL_SECONDS = 0.01
_HEARTBEAT_SECONDS = 1.0
# How long a stopping worker waits for the first request on a connection
# that has not sent one yet. A client writes its request right after
# connecting; shutting such a connection down first would make the request
# arrive on a closed socket and reset it, and a client does not retry a
# request that failed on a connection it had never used.
_FIRST_REQUEST_GRACE_SECONDS = 1.0


def _shutdown(sock):
    """End a connection whose greenlet waits for the next request.

    shutdown() makes that greenlet read a clean end of stream and close the
    socket itself. gevent's own socket.shutdown() would instead cancel the
    wait with EBADF, which gunicorn logs as an error with a traceback, so
    the kernel call is made on a plain socket object sharing the descriptor.
    """
    raw = _socket.socket(fileno=sock.fileno())
    try:
        raw.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    finally:
        raw.detach()


# What a fast-path request that makes the application raise gets (Flask
# answers its own errors, so this is a bug in the server code).
_INTERNAL_ERROR = (b"HTTP/1.1 500 Internal Server Error\r\nConnection: close\r\n"
                   b"Content-Type: application/json\r\nContent-Length: 33\r\n\r\n"
                   b'{"error":"internal server error"}')
_RECV = 65536


class _Replay:
    """The client socket, with bytes the fast path already read put back in
    front of what recv() returns next (gunicorn reads through recv)."""

    def __init__(self, sock, data: bytes):
        self._sock = sock
        self._data = data

    def recv(self, size, *args):
        if self._data:
            data, self._data = self._data[:size], self._data[size:]
            return data
        return self._sock.recv(size, *args)

    def __getattr__(self, name):
        return getattr(self._sock, name)


def _has_pending_bytes(sock) -> bool:
    """Whether the peer sent bytes that nobody has read yet (a peek: they stay)."""
    raw = _socket.socket(fileno=sock.fileno())
    try:
        return bool(raw.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT))
    except OSError:  # BlockingIOError: nothing waiting; anything else: gone
        return False
    finally:
        raw.detach()


def set_nodelay(sock, on: bool):
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1 if on else 0)


class OneWriteResponse(wsgi.Response):
    """A gunicorn response whose head is sent together with the first body
    bytes written through write(), in one send().

    Only write() defers the head: sendfile() and close() (a response without
    body bytes) call send_headers() outside it and send the head at once, as
    gunicorn does. Whatever write() returns or raises, a head still pending
    is sent before it returns, so nothing is ever left unsent.
    """

    _defer_head = False
    _head = None

    def send_headers(self):
        if not self._defer_head or self.headers_sent:
            return super().send_headers()
        tosend = self.default_headers()
        tosend.extend(["%s: %s\r\n" % (k, v) for k, v in self.headers])
        self._head = util.to_bytestring("%s\r\n" % "".join(tosend), "latin-1")
        self.headers_sent = True

    def write(self, arg):
        self._defer_head = not self.headers_sent
        try:
            super().write(arg)
        finally:
            self._defer_head = False
            head, self._head = self._head, None
            if head is not None:
                util.write(self.sock, head)

    def _emit_body(self, data):
        head, self._head = self._head, None
        if head is not None and not self.chunked:
            util.write(self.sock, head + data)
            return
        if head is not None:
            util.write(self.sock, head)
        super()._emit_body(data)


CUT_OFF_MARKER = "shutdown-cut-off"


def mark_cut_off():
    """Tell the master that requests were abandoned, so that it exits 1
    (docs/configuration.md): a file in the per-start directory both share."""
    shared = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if shared:
        open(os.path.join(shared, CUT_OFF_MARKER), "w").close()


class ProductpageWorker(GeventWorker):
    nodelay = True
    balance: Optional[Balance] = None
    # Set by the master before fork (server.py, pre_fork hook).
    slot: Optional[int] = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Client sockets between requests (waiting for the next one), those
        # accepted but without a first request yet (with when), and the
        # requests being served.
        self._idle = set()
        self._fresh = {}
        self._in_flight = set()
        # Wakes the run loop: to stop, or to poll faster after pausing accept.
        self._wake = None
        self._servers = []
        self._accepting = True
        self._responder = None
        self._listener_names = {}

    def init_process(self):
        if self.nodelay:
            # gunicorn's base_async builds each response through wsgi.create,
            # which looks the class up in its module: this worker process only.
            wsgi.Response = OneWriteResponse
        super().init_process()

    def load_wsgi(self):
        super().load_wsgi()
        self._responder = Responder(self.wsgi, self.cfg, one_write=self.nodelay)
        # Everything loaded so far (Flask, Jinja, gevent, the app: ~40k
        # objects) lives as long as the worker. Left in the collector's
        # generations, every full collection walks it again, 11-13 ms on
        # the bench machine, during which all of the worker's requests wait;
        # frozen, a full collection walks only what requests left behind.
        gc.freeze()

    def init_signals(self):
        super().init_signals()
        # Watched by gevent's loop: a plain Python handler would only run once
        # the hub next returns to Python, up to a heartbeat (1 s) later.
        for sig in (signal.SIGTERM, signal.SIGINT):
            gevent.signal_handler(sig, self.handle_exit, sig, None)

    def handle_exit(self, sig, frame):
        self.alive = False
        # Their responses are not written yet: tell those clients to go.
        for req in self._in_flight:
            req.must_close = True
        if self._wake is not None:
            self._wake.set()

    def handle(self, listener, client, addr):
        set_nodelay(client, self.nodelay)
        self._count_connection(+1)
        self._fresh[client] = time.monotonic()
        replay = None
        try:
            try:
                pending = self._serve_common(listener, client, addr)
            except OSError:
                # Reset, broken pipe: the client is gone, as gunicorn ignores.
                pending = None
            if pending is None:
                client.close()
                return
            client.settimeout(None)
            # Not idle: the request gunicorn reads next is already in hand.
            replay = _Replay(client, pending)
            self._fresh.pop(client, None)
            self._idle.discard(client)
            super().handle(listener, replay, addr)
        finally:
            self._fresh.pop(client, None)
            self._idle.discard(client)
            if replay is not None:
                self._idle.discard(replay)
            self._count_connection(-1)

    def _serve_common(self, listener, client, addr) -> Optional[bytes]:
        """Serve requests of the common shape (fastpath.py) on this
        connection. Returns None when the connection is done, or the bytes
        read but not served when gunicorn should take over."""
        server = self._listener_names.get(listener)
        if server is None:
            server = self._listener_names[listener] = listener.getsockname()
        responder = self._responder
        # gunicorn's idle timeout: for every request head, none without keep-alive.
        client.settimeout(self.cfg.keepalive or None)
        buf = b""
        while True:
            end = buf.find(b"\r\n\r\n")
            while end < 0:
                if len(buf) > MAX_HEAD:
                    return buf
                try:
                    data = client.recv(_RECV)
                except socket.timeout:
                    return None
                if not data:
                    return None
                buf += data
                end = buf.find(b"\r\n\r\n")
            req = parse_head(buf[:end])
            env = None if req is None else responder.environ(req, client, addr, server)
            if env is None:
                return buf
            buf = buf[end + 4:]
            self._fresh.pop(client, None)
            self._idle.discard(client)
            self._in_flight.add(req)
            try:
                try:
                    parts, close = responder(req, env, closing=not self.alive)
                except Exception:
                    self.log.exception("Error handling request %s %s", req.method, req.target)
                    client.sendall(_INTERNAL_ERROR)
                    return None
                for part in parts:
                    client.sendall(part)
            finally:
                self._in_flight.discard(req)
                self._idle.add(client)
            if close:
                return None

    def handle_request(self, listener_name, req, sock, addr):
        self._idle.discard(sock)
        self._in_flight.add(req)
        try:
            return super().handle_request(listener_name, req, sock, addr)
        finally:
            self._in_flight.discard(req)
            self._idle.add(sock)

    def run(self):
        self._wake = Event()
        for listener in self.sockets:
            listener.setblocking(1)
            server = StreamServer(listener, handle=partial(self.handle, listener),
                                  spawn=Pool(self.worker_connections))
            # One connection per wake-up, so that a worker that should stop
            # accepting can do so before it takes a second one.
            server.max_accept = 1
            server.start()
            self._servers.append(server)

        while self.alive:
            self.notify()
            if self._balanced():
                self.balance.beat(self.slot)
                self._rebalance()
            self._wake.wait(_HEARTBEAT_SECONDS if self._accepting else _BALANCE_POLL_SECONDS)
            self._wake.clear()
        self._drain()

    def _drain(self):
        for listener, server in zip(self.sockets, self._servers):
            server.stop_accepting()
            self._take_backlog(listener, server)
            server.close()
        deadline = time.monotonic() + self.cfg.graceful_timeout
        while time.monotonic() < deadline:
            self._close_idle()
            if all(server.pool.free_count() == server.pool.size for server in self._servers):
                return
            self.notify()
            gevent.sleep(_DRAIN_POLL_SECONDS)
        self.log.warning("Shutdown timeout: abandoning %d connection(s)",
                         sum(s.pool.size - s.pool.free_count() for s in self._servers))
        mark_cut_off()
        for server in self._servers:
            server.stop(timeout=1)

    def _take_backlog(self, listener, server):
        """Serve the connections already queued on the listening socket.

        The workers share one listening socket, and the kernel resets every
        connection still in its accept queue when the last worker closes it:
        clients that connected just before the drain would see a reset
        instead of an answer (or a refusal they could retry elsewhere).
        Accepted now, they get their response with Connection: close.
        """
        sock = server.socket  # the raw socket gevent's server reads from
        sock.setblocking(False)
        while True:
            try:
                fd, addr = sock._accept()
            except OSError:  # BlockingIOError: the queue is empty
                return
            client = gsocket.socket(sock.family, sock.type, sock.proto, fileno=fd)
            server.pool.spawn(self.handle, listener, client, addr)

    def _close_idle(self):
        # A request already waiting in the socket (a kept-alive client that
        # sent just now, or a connection taken from the backlog whose
        # greenlet has not run yet) is served, with "Connection: close", by
        # its greenlet; shutting the socket down with the request unread
        # would reset the connection instead. A connection without a first
        # request gets a moment to send it (_FIRST_REQUEST_GRACE_SECONDS).
        quiet_since = time.monotonic() - _FIRST_REQUEST_GRACE_SECONDS
        waiting = [sock for sock, accepted in self._fresh.items() if accepted < quiet_since]
        for sock in list(self._idle) + waiting:
            if not _has_pending_bytes(sock):
                _shutdown(sock)

    def _balanced(self) -> bool:
        return self.balance is not None and self.slot is not None

    def _count_connection(self, delta: int):
        if self._balanced():
            self.balance.add(self.slot, delta)
            self._rebalance()

    def _rebalance(self):
        if not self.alive:
            return
        accept = self.balance.may_accept(self.slot)
        if accept == self._accepting:
            return
        self._accepting = accept
        for server in self._servers:
            if accept:
                server.start_accepting()
            else:
                server.stop_accepting()
        if not accept:
            self._wake.set()


def worker_class(nodelay: bool, balance: Optional[Balance]):
    """The worker class for this start, its settings fixed before fork."""
    return type("ProductpageWorker", (ProductpageWorker,), {"nodelay": nodelay, "balance": balance})

