"""gunicorn's gevent worker with docs/contract.md's wire rules, through its
public methods: TCP_NODELAY, the head deadline, rules.py's checks, and the
drain (DESIGN.md, "How each knob is implemented", says how and why)."""

import contextlib
import signal
import socket
import time
from functools import partial

import gevent
from gevent import monkey
from gevent.event import Event
from gevent.pool import Pool
from gevent.server import StreamServer
from gevent.socket import wait_read
from gunicorn import util
from gunicorn.workers.ggevent import GeventWorker

from . import listener as listeners
from .rules import asks_to_close, check_head, has_body

# In a drain a connection is ended once it has been quiet this long: a
# client that sends on it meanwhile gets its answer with "Connection: close"
# (a client does not retry a request failed on a connection it never used,
# and one ended under its next request failed it; DESIGN.md, "A drain that
# resets nothing").
DRAIN_QUIET_SECONDS = 1.0
DRAIN_POLL_SECONDS = 0.05
MASTER_WAIT_SECONDS = 2.0  # then the stop is this worker's own (a reload)
MASTER_POLL_SECONDS = 0.002
HEARTBEAT_SECONDS = 1.0
LINGER_SECONDS = 1.0  # after a close, reading the client's rest
# Pipelined requests in a row (ratings' cap); the last says "Connection: close" (RFC 9112 9.3.2).
MAX_PIPELINED = 16

# select() itself, not gevent's: a zero-timeout poll that never yields.
_select = monkey.get_original("select", "select")


def _readable(sock) -> bool:
    try:
        return bool(_select([sock], [], [], 0)[0])
    except (OSError, ValueError):  # closed meanwhile
        return False


class HeadTimeout(Exception):
    def __str__(self):
        return "request head not complete in time"


class _Connection:
    """A client connection and, with keep-alive, gunicorn's head-reading context (timeout_ctx)."""

    __slots__ = (
        *("sock", "keepalive", "header_timeout", "accepted"),  # fixed at the accept
        *("requests", "pipelined", "request", "unreader", "head_timer", "began", "quiet_since"),
    )

    def __init__(self, sock, keepalive, header_timeout):
        self.sock = sock
        self.keepalive = keepalive
        self.header_timeout = header_timeout
        self.accepted = time.monotonic()
        self.requests = 0
        self.pipelined = 0
        self.request = None  # the one being served
        self.unreader = None  # gunicorn's read buffer
        self.head_timer = None
        self.began = None  # perf_counter() when the request's first byte was there
        self.quiet_since = self.accepted  # monotonic(): the accept, or the last answer's end

    def start_head_timer(self, deadline: float):
        self.stop_head_timer()
        self.head_timer = gevent.Timeout(max(deadline - time.monotonic(), 0.001), HeadTimeout())
        self.head_timer.start()

    def stop_head_timer(self):
        if self.head_timer is not None:
            self.head_timer.close()
            self.head_timer = None

    def next_request_arrived(self) -> bool:
        if self.unreader is not None and (pending := self.unreader.take_buffered()):
            self.unreader.unread(pending)
            return True
        return _readable(self.sock)

    def await_first_byte(self, until: float) -> bool:
        try:
            wait_read(self.sock.fileno(), timeout=max(until - time.monotonic(), 0.001))
        except TimeoutError:
            return False
        return True

    def __enter__(self):
        if not self.requests:
            deadline = self.accepted + self.header_timeout
            if not self.await_first_byte(deadline):
                raise StopIteration("no request")  # gunicorn closes quietly
        else:
            # Before anything yields: a client awaiting the answer sent nothing more.
            if self.next_request_arrived():
                self.pipelined += 1
            else:
                self.pipelined = 0
                if not self.await_first_byte(time.monotonic() + self.keepalive):
                    raise StopIteration("keep-alive timeout")
            deadline = time.monotonic() + self.header_timeout
        self.began = time.perf_counter()
        self.start_head_timer(deadline)
        return self

    def __exit__(self, *exc):
        self.stop_head_timer()
        return False


class ProductpageWorker(GeventWorker):
    nodelay = True  # these two set by worker_class() before the fork
    header_timeout = 10.0
    listeners_closed_fd = None  # EOF once the master closed its listeners (post_fork)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.connections = {}  # greenlet -> _Connection
        self.stopping = None
        self.signal_watchers = []

    def init_signals(self):
        super().init_signals()
        # In gevent's loop, to react at once; SIGINT drains too.
        self.signal_watchers = [
            gevent.signal_handler(sig, self.handle_exit, sig, None)
            for sig in (signal.SIGTERM, signal.SIGINT)
        ]

    def handle_exit(self, sig, frame):
        super().handle_exit(sig, frame)
        if self.stopping is not None:
            self.stopping.set()

    def run(self):
        self.stopping = Event()
        servers = []
        for sock in self.sockets:
            sock.setblocking(1)
            server = StreamServer(
                sock, handle=partial(self.handle, sock), spawn=Pool(self.worker_connections)
            )
            if self.cfg.workers > 1:
                server.max_accept = 1  # an idle worker does not take them all
            server.start()
            servers.append(server)

        while self.alive:
            self.notify()
            self.stopping.wait(HEARTBEAT_SECONDS)

        self.force_close_requests()
        deadline = time.monotonic() + self.cfg.graceful_timeout
        last_copy = self.await_master()
        for sock, server in zip(self.sockets, servers, strict=True):
            self.close_listener(sock, server, last_copy, deadline)
        while time.monotonic() < deadline:
            if all(server.pool.free_count() == server.pool.size for server in servers):
                return
            self.end_waiting_connections()
            self.notify()
            gevent.sleep(DRAIN_POLL_SECONDS)
        self.log.warning("Worker graceful timeout (pid:%s)", self.pid)
        for server in servers:
            server.stop(timeout=1)

    def await_master(self) -> bool:
        """Whether the whole server stops (the master closed its listening
        sockets), this worker's copy then perhaps the last."""
        fd = self.listeners_closed_fd
        give_up = time.monotonic() + MASTER_WAIT_SECONDS
        while fd is not None and not _readable(fd):
            if time.monotonic() > give_up:
                return False
            gevent.sleep(MASTER_POLL_SECONDS)
        return True

    def close_listener(self, sock, server, last_copy, deadline):
        server.stop_accepting()
        plug = None
        if last_copy:
            plug = listeners.plug(sock, partial(server.pool.spawn, self.handle, sock), deadline)
            if plug is None:
                self.log.warning(
                    "Closing the listening socket unplugged: may reset queued connections"
                )
        # gunicorn's handler starts with the listener's getsockname(): start them all.
        while any(glet not in self.connections for glet in server.pool):
            gevent.sleep(0)
        server.close()
        if plug is not None:
            plug.close()

    def handle(self, listener, client, addr):
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1 if self.nodelay else 0)
        me = gevent.getcurrent()
        conn = self.connections[me] = _Connection(client, self.cfg.keepalive, self.header_timeout)
        try:
            if not self.cfg.keepalive:
                # gunicorn reads the one request without timeout_ctx.
                conn.start_head_timer(conn.accepted + self.header_timeout)
            # A stopping worker may end a lingering connection (handle_error).
            with contextlib.suppress(StopIteration):
                super().handle(listener, client, addr)
        finally:
            conn.stop_head_timer()
            self.connections.pop(me, None)

    def load_wsgi(self):
        """The application, told when the request's first byte was there (timing.timed)."""
        super().load_wsgi()
        app = self.wsgi

        def began_at(environ, start_response):
            if (conn := self.connections.get(gevent.getcurrent())) and conn.began:
                environ["productpage.request_began"] = conn.began
            return app(environ, start_response)

        self.wsgi = began_at

    def timeout_ctx(self):
        return self.connections.get(gevent.getcurrent()) or super().timeout_ctx()

    def handle_request(self, listener_name, req, sock, addr):
        conn = self.connections.get(gevent.getcurrent())
        if conn is None:
            return super().handle_request(listener_name, req, sock, addr)
        conn.stop_head_timer()  # the head is complete
        conn.unreader = req.unreader
        check_head(req)
        linger = has_body(req) or conn.pipelined >= MAX_PIPELINED - 1
        if linger or asks_to_close(req):
            req.force_close()
        conn.request = req
        conn.requests += 1
        try:
            return super().handle_request(listener_name, req, sock, addr)
        except StopIteration:  # "Connection: close": gunicorn closes now
            if linger:
                util.close_graceful(sock, timeout=LINGER_SECONDS)
            raise
        finally:
            conn.request = None
            conn.quiet_since = time.monotonic()

    def handle_error(self, req, client, addr, exc):
        conn = self.connections.get(gevent.getcurrent())
        if conn is not None:
            conn.stop_head_timer()
        if isinstance(exc, HeadTimeout):
            self.log.debug("Closing connection: %s", exc)
            with contextlib.suppress(OSError):
                util.write_error(client, 408, "Request Timeout", "")
        else:
            super().handle_error(req, client, addr, exc)
        if isinstance(exc, Exception):  # not a kill (GreenletExit)
            util.close_graceful(client, timeout=LINGER_SECONDS)

    def force_close_requests(self):
        # gunicorn gives "Connection: close" to those that start from now on.
        for conn in list(self.connections.values()):
            if conn.request is not None:
                conn.request.force_close()

    def end_waiting_connections(self):
        hub = gevent.get_hub()
        quiet_since = time.monotonic() - DRAIN_QUIET_SECONDS
        for glet, conn in list(self.connections.items()):
            if conn.quiet_since < quiet_since:
                hub.loop.run_callback(self.end_if_waiting, glet)

    def end_if_waiting(self, glet):
        # In gevent's hub: the connection's greenlet cannot run between check and throw.
        conn = self.connections.get(glet)
        if conn is None or conn.request is not None or _readable(conn.sock):
            return  # serving, or a request (or EOF) waits: answered with close
        # How gunicorn's loop ends a kept-alive connection: a clean close.
        glet.throw(StopIteration("worker stopping"))


def worker_class(nodelay: bool, header_timeout: float = 10.0):
    """The worker class for this start, its settings fixed before fork."""
    settings = {"nodelay": nodelay, "header_timeout": float(header_timeout)}
    return type("ProductpageWorker", (ProductpageWorker,), settings)
