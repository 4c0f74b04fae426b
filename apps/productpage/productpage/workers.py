"""gunicorn's gevent worker, with what a prompt, lossless drain and hostile
clients need, through its public methods (DESIGN.md, "How each knob is
implemented" and "Hostile input"):

- HTTP_NODELAY on accepted sockets (`handle`). gunicorn sets TCP_NODELAY on
  its listening socket and Linux copies it to every accepted socket, so
  `false` needs an explicit 0.
- Drain on SIGTERM and SIGINT (`init_signals`, `handle_exit`, `run`,
  `handle`, `handle_request`, gunicorn's `Request.force_close`). The stock
  GeventWorker notices the signal up to 1 s late, closes its listening
  socket without taking the connections already queued on it (the kernel
  resets them), ends idle keep-alive connections only when their idle
  timeout (60 s) or the shutdown timeout runs out, and treats SIGINT as
  "quit now". Here the worker stops at once, accepts what is queued before
  closing its socket, ends a connection that waits for its next request at
  once, gives one that has not sent its first request yet
  FIRST_REQUEST_GRACE_SECONDS to send it, and lets requests being served
  finish (their responses say `Connection: close`). `run` is the stock one
  otherwise: the same gevent StreamServer and Pool per listening socket.
- HTTP_HEADER_TIMEOUT_SECONDS, an overall deadline for each request head
  (`handle`, `timeout_ctx`, `handle_request`, `handle_error`). The stock
  worker bounds a head only by the keep-alive timeout (a gevent.Timeout
  around reading it, none at all with keep-alive off) and reads with no
  per-read timeout: a client sending one byte now and then held its
  connection, and its slot in the worker's pool, for as long as it liked.
  Here a new connection must send its first head within the deadline of
  being accepted; on a kept-alive connection, once the next request's first
  byte is there (waited for up to the keep-alive timeout, as before), its
  head must be complete within the deadline. A connection that sent nothing
  is closed quietly, one that sent part of a head gets a 408 first (with
  keep-alive off, where gunicorn reads without timeout_ctx, always a 408).
- Request checks gunicorn's parser leaves to the application (`check_head`,
  called from `handle_request`): Host (missing in HTTP/1.1, or not
  `host[:port]`) and a Transfer-Encoding other than exactly `chunked` are
  answered by gunicorn's own 400 (its `handle_error`), connection closed.
- "close" in any Connection field (`asks_to_close`, from `handle_request`)
  closes the connection after the answer (gunicorn's `Request.force_close`).
- A request that carries a body (only POST /login reads one) is answered
  with `Connection: close` (gunicorn's `Request.force_close`), then the
  connection lingers for the client's last bytes (gunicorn's
  `util.close_graceful`): nothing after a body is ever read as a request,
  and no body is ever drained to reach one.
- At most MAX_PIPELINED requests in a row on one connection whose next
  request was already there when the previous answer was written
  (`timeout_ctx`, `handle_request`): the last of them is answered with
  `Connection: close` and the connection closed the same lingering way.
  gunicorn reads pipelined requests from its buffer and a gevent send only
  yields once the socket's buffers are full, which on loopback takes
  megabytes: 20 connections pipelining 1,000 `GET /metrics` each without
  reading got 19,771 of them rendered, both workers busy for 9 s.
"""

import contextlib
import re
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
from gunicorn.http.errors import InvalidHeader
from gunicorn.workers.ggevent import GeventWorker

# How long a stopping worker waits for the first request on a connection
# that has not sent one yet. A client writes its request right after
# connecting; a client does not retry a request that failed on a connection
# it had never used, so ending such a connection at once would fail it.
FIRST_REQUEST_GRACE_SECONDS = 1.0
# How often a stopping worker looks for connections to end.
DRAIN_POLL_SECONDS = 0.05
# At most this long to close a listening socket (see close_listener).
CLOSE_LISTENER_SECONDS = 1.0
# How often a stopping worker looks whether the master has closed its
# listening sockets (they share them) before closing its own copy.
MASTER_POLL_SECONDS = 0.002
# How often a running worker tells the master it is alive (stock: 1 s).
HEARTBEAT_SECONDS = 1.0
# How long a connection closed after a request with a body lingers to read
# what the client still sends (so that closing does not reset the answer).
LINGER_SECONDS = 1.0
# Requests in a row one connection may pipeline (send before reading the
# answer to the previous one). The last is answered with "Connection: close";
# RFC 9112 9.3.2: the client retries the rest on a new connection. No client
# of this project pipelines; those that can (old curl, old browsers) sent a
# few. The same cap as ratings'.
MAX_PIPELINED = 16

# RFC 9110 7.2 / RFC 3986 3.2.2: Host = uri-host [ ":" port ], uri-host an
# IP-literal, an IPv4 address or a reg-name (possibly empty).
_HOST = re.compile(
    r"(?:\[(?:[0-9A-Fa-f:.]+|v[0-9A-Fa-f]+\.[A-Za-z0-9\-._~!$&'()*+,;=:]+)\]"
    r"|(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})*)"
    r"(?::[0-9]*)?"
)


class HeadTimeout(Exception):
    """A request head was not complete within HTTP_HEADER_TIMEOUT_SECONDS."""

    def __str__(self):
        return "request head not complete in time"


def set_nodelay(sock, on: bool):
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1 if on else 0)


def check_head(req):
    """What RFC 9112/9110 make a 400 and gunicorn's parser lets through.

    Raises gunicorn's InvalidHeader, which its worker answers with its own
    400 and a closed connection. (Repeated Host, Content-Length and
    Transfer-Encoding, Content-Length with Transfer-Encoding, a
    Content-Length that is not decimal digits, obs-fold, and control
    characters in a field value are gunicorn's own 400s already.)
    """
    host = None
    for name, value in req.headers:
        if name == "HOST":
            host = value
        elif name == "TRANSFER-ENCODING" and value.lower() != "chunked":
            # gunicorn also takes "identity, chunked" and "gzip, chunked";
            # nothing here needs them, and every hop must agree on framing.
            raise InvalidHeader("TRANSFER-ENCODING", req=req)
    if host is None:
        if req.version >= (1, 1):
            raise InvalidHeader("HOST", req=req)  # RFC 9112 3.2: MUST be 400
    elif not _HOST.fullmatch(host):
        raise InvalidHeader("HOST", req=req)


def asks_to_close(req) -> bool:
    """RFC 9112 9.6: "close" among the options of any Connection field.
    gunicorn's should_close looks at the first field only, and only for a
    whole value of "close": "keep-alive, close", or a second field saying
    close, kept the connection and served a request pipelined behind."""
    for name, value in req.headers:
        if name == "CONNECTION" and any(
            o.strip(" \t").lower() == "close" for o in value.split(",")
        ):
            return True
    return False


def has_body(req) -> bool:
    for name, value in req.headers:
        if name == "TRANSFER-ENCODING" or (name == "CONTENT-LENGTH" and value != "0"):
            return True
    return False


class _Connection:
    __slots__ = ("sock", "accepted", "requests", "pipelined", "request", "unreader", "head_timer")

    def __init__(self, sock):
        self.sock = sock
        self.accepted = time.monotonic()
        self.requests = 0
        self.pipelined = 0  # requests in a row that were there before the previous answer was out
        self.request = None  # the one being served
        self.unreader = None  # gunicorn's read buffer of this connection
        self.head_timer = None

    def start_head_timer(self, deadline: float):
        self.stop_head_timer()
        self.head_timer = gevent.Timeout(max(deadline - time.monotonic(), 0.001), HeadTimeout())
        self.head_timer.start()

    def stop_head_timer(self):
        if self.head_timer is not None:
            self.head_timer.close()
            self.head_timer = None

    def has_buffered_bytes(self) -> bool:
        """Whether gunicorn already read bytes of the next request (pipelined)."""
        if self.unreader is None:
            return False
        pending = self.unreader.take_buffered()
        if pending:
            self.unreader.unread(pending)
        return bool(pending)

    def await_first_byte(self, until: float) -> bool:
        """Wait until the client sent something (or closed); False at `until`."""
        try:
            wait_read(self.sock.fileno(), timeout=max(until - time.monotonic(), 0.001))
        except TimeoutError:
            return False
        return True


class _NextHead:
    """The worker's timeout_ctx: with keep-alive on, gunicorn reads each
    request of a connection inside it. Waits for the request's first byte,
    up to the keep-alive timeout on a kept-alive connection (as the stock
    worker does) or up to HTTP_HEADER_TIMEOUT_SECONDS from the accept for the
    first request; a connection that sent nothing by then is ended quietly.
    Then the head must be complete by the deadline (HeadTimeout, a 408)."""

    __slots__ = ("conn", "keepalive", "header_timeout")

    def __init__(self, conn, keepalive, header_timeout):
        self.conn = conn
        self.keepalive = keepalive
        self.header_timeout = header_timeout

    def __enter__(self):
        conn = self.conn
        if not conn.requests:
            deadline = conn.accepted + self.header_timeout
            if not conn.await_first_byte(deadline):
                # How gunicorn's loop ends a connection: closed, nothing logged.
                raise StopIteration("no request")
        else:
            # Looked at right after the previous answer was written, before
            # anything yields: a client that waits for its answer cannot
            # have sent the next request yet.
            if conn.has_buffered_bytes() or _readable(conn.sock):
                conn.pipelined += 1
            else:
                conn.pipelined = 0
                if not conn.await_first_byte(time.monotonic() + self.keepalive):
                    raise StopIteration("keep-alive timeout")
            deadline = time.monotonic() + self.header_timeout
        conn.start_head_timer(deadline)
        return self

    def __exit__(self, *exc):
        self.conn.stop_head_timer()
        return False


class ProductpageWorker(GeventWorker):
    # Set per start by worker_class() before gunicorn forks the workers.
    nodelay = True
    header_timeout = 10.0
    # The read end of the master's pipe (server.DrainingArbiter), readable
    # (end-of-file) once the master has closed its listening sockets; set by
    # the post_fork hook. None: no such master, nothing to wait for.
    listeners_closed_fd = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # The greenlet serving each open connection, and what it is doing.
        self.connections = {}
        self.stopping = None
        self.signal_watchers = []

    def init_signals(self):
        super().init_signals()
        # Watched by gevent's loop, so the worker reacts at once; SIGINT
        # drains like SIGTERM (the base worker would quit at once).
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
        for listener in self.sockets:
            listener.setblocking(1)
            server = StreamServer(
                listener, handle=partial(self.handle, listener), spawn=Pool(self.worker_connections)
            )
            if self.cfg.workers > 1:
                # The workers share the listening socket: one connection
                # per wake-up, so that an idle worker does not take them all.
                server.max_accept = 1
            server.start()
            servers.append(server)

        while self.alive:
            self.notify()
            self.stopping.wait(HEARTBEAT_SECONDS)

        for listener, server in zip(self.sockets, servers, strict=True):
            self.close_listener(listener, server)
        self.force_close_requests()
        deadline = time.monotonic() + self.cfg.graceful_timeout
        while time.monotonic() < deadline:
            if all(server.pool.free_count() == server.pool.size for server in servers):
                return
            self.end_waiting_connections()
            self.notify()
            gevent.sleep(DRAIN_POLL_SECONDS)
        self.log.warning("Worker graceful timeout (pid:%s)", self.pid)
        for server in servers:
            server.stop(timeout=1)

    def close_listener(self, listener, server):
        """Stop accepting and close the listening socket, dropping no
        connection on the way. The kernel resets the connections still
        queued on a socket when it closes, so they are accepted first; and
        gunicorn's handler asks the listening socket for its name when it
        starts, so every accepted connection's greenlet must have started
        before the socket closes (else: EBADF, and the request is reset)."""
        server.stop_accepting()
        listener.settimeout(0.0)
        deadline = time.monotonic() + CLOSE_LISTENER_SECONDS
        while time.monotonic() < deadline:
            # Looked at before the queue is taken: once the master's copy is
            # closed, nothing can queue on a copy no worker takes from.
            master_closed = self.master_listeners_closed()
            took = self.take_backlog(listener, server)
            starting = any(glet not in self.connections for glet in server.pool)
            if not took and not starting:
                if master_closed:
                    break
                # A stop sent to the whole process group: the master closes
                # its copy a moment later; until then take what queues.
                gevent.sleep(MASTER_POLL_SECONDS)
                continue
            gevent.sleep(0)  # the new greenlets start
        else:
            self.log.warning("Closing the listening socket with connections still starting")
        server.close()  # nothing yielded since the last accept found the queue empty

    def master_listeners_closed(self) -> bool:
        fd = self.listeners_closed_fd
        return fd is None or _readable(fd)

    def take_backlog(self, listener, server) -> int:
        """Accept the connections queued on the listening socket (served
        with "Connection: close"); how many there were."""
        taken = 0
        while True:
            try:
                client, addr = listener.accept()
            except OSError:  # BlockingIOError: the queue is empty
                return taken
            server.pool.spawn(self.handle, listener, client, addr)
            taken += 1

    def handle(self, listener, client, addr):
        set_nodelay(client, self.nodelay)
        me = gevent.getcurrent()
        conn = self.connections[me] = _Connection(client)
        try:
            if not self.cfg.keepalive:
                # gunicorn reads the one request without timeout_ctx: the
                # deadline runs from the accept, whether a byte came or not.
                conn.start_head_timer(conn.accepted + self.header_timeout)
            # A stopping worker may end the connection while it lingers after
            # an error (handle_error) with StopIteration; gunicorn has closed it.
            with contextlib.suppress(StopIteration):
                super().handle(listener, client, addr)
        finally:
            conn.stop_head_timer()
            self.connections.pop(me, None)

    def timeout_ctx(self):
        conn = self.connections.get(gevent.getcurrent())
        if conn is None:
            return super().timeout_ctx()
        return _NextHead(conn, self.cfg.keepalive, self.header_timeout)

    def handle_request(self, listener_name, req, sock, addr):
        conn = self.connections.get(gevent.getcurrent())
        if conn is None:
            return super().handle_request(listener_name, req, sock, addr)
        conn.stop_head_timer()  # the head is complete
        conn.unreader = req.unreader
        check_head(req)
        body = has_body(req)
        linger = body or conn.pipelined >= MAX_PIPELINED - 1
        if linger or asks_to_close(req):
            req.force_close()
        conn.request = req
        conn.requests += 1
        try:
            return super().handle_request(listener_name, req, sock, addr)
        except StopIteration:
            # The response said "Connection: close": gunicorn closes now.
            if linger:
                util.close_graceful(sock, timeout=LINGER_SECONDS)
            raise
        finally:
            conn.request = None

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
            # gunicorn closes the connection next: linger first, so that what
            # the client still sends does not make the kernel reset the answer.
            util.close_graceful(client, timeout=LINGER_SECONDS)

    def force_close_requests(self):
        # Requests being served get "Connection: close"; gunicorn gives it
        # to those that start from now on.
        for conn in list(self.connections.values()):
            if conn.request is not None:
                conn.request.force_close()

    def end_waiting_connections(self):
        """End every connection that waits for a request (one without a
        first request yet after its grace time)."""
        hub = gevent.get_hub()
        quiet_since = time.monotonic() - FIRST_REQUEST_GRACE_SECONDS
        for glet, conn in list(self.connections.items()):
            if conn.requests or conn.accepted < quiet_since:
                hub.loop.run_callback(self.end_if_waiting, glet)

    def end_if_waiting(self, glet):
        # Runs in gevent's hub, while every other greenlet is paused: the
        # check and the throw cannot be split by the connection's greenlet.
        conn = self.connections.get(glet)
        if conn is None or conn.request is not None or _readable(conn.sock):
            # Serving, or a request (or the client's close) is already
            # waiting to be read: its greenlet reads it and, the worker
            # stopping, answers it with "Connection: close".
            return
        # StopIteration is how gunicorn's connection loop ends a kept-alive
        # connection (it catches it around reading the next request and
        # closes the socket): a clean close, no error logged or written.
        glet.throw(StopIteration("worker stopping"))


# select() itself, not gevent's cooperative version: a zero-timeout poll
# that never yields to other greenlets.
_select = monkey.get_original("select", "select")


def _readable(sock) -> bool:
    try:
        return bool(_select([sock], [], [], 0)[0])
    except (OSError, ValueError):  # closed meanwhile
        return False


def worker_class(nodelay: bool, header_timeout: float = 10.0):
    """The worker class for this start, its settings fixed before fork."""
    return type(
        "ProductpageWorker",
        (ProductpageWorker,),
        {"nodelay": nodelay, "header_timeout": float(header_timeout)},
    )
