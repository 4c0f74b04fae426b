"""gunicorn's gevent worker, with what a prompt, lossless drain needs, through
its public methods (README, "How each knob is implemented"):

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
"""

import signal
import socket
import time
from functools import partial

import gevent
from gevent import monkey
from gevent.event import Event
from gevent.pool import Pool
from gevent.server import StreamServer
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
# How often a running worker tells the master it is alive (stock: 1 s).
HEARTBEAT_SECONDS = 1.0


def set_nodelay(sock, on: bool):
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1 if on else 0)


class _Connection:
    __slots__ = ("sock", "accepted", "requests", "request")

    def __init__(self, sock):
        self.sock = sock
        self.accepted = time.monotonic()
        self.requests = 0
        self.request = None  # the one being served


class ProductpageWorker(GeventWorker):
    # Set per start by worker_class() before gunicorn forks the workers.
    nodelay = True

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
        self.signal_watchers = [gevent.signal_handler(sig, self.handle_exit, sig, None)
                                for sig in (signal.SIGTERM, signal.SIGINT)]

    def handle_exit(self, sig, frame):
        super().handle_exit(sig, frame)
        if self.stopping is not None:
            self.stopping.set()

    def run(self):
        self.stopping = Event()
        servers = []
        for listener in self.sockets:
            listener.setblocking(1)
            server = StreamServer(listener, handle=partial(self.handle, listener),
                                  spawn=Pool(self.worker_connections))
            if self.cfg.workers > 1:
                # The workers share the listening socket: one connection
                # per wake-up, so that an idle worker does not take them all.
                server.max_accept = 1
            server.start()
            servers.append(server)

        while self.alive:
            self.notify()
            self.stopping.wait(HEARTBEAT_SECONDS)

        for listener, server in zip(self.sockets, servers):
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
            took = self.take_backlog(listener, server)
            starting = any(glet not in self.connections for glet in server.pool)
            if not took and not starting:
                break
            gevent.sleep(0)  # the new greenlets start
        else:
            self.log.warning("Closing the listening socket with connections still starting")
        server.close()  # nothing yielded since the last accept found the queue empty

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
        self.connections[me] = _Connection(client)
        try:
            super().handle(listener, client, addr)
        finally:
            self.connections.pop(me, None)

    def handle_request(self, listener_name, req, sock, addr):
        conn = self.connections.get(gevent.getcurrent())
        if conn is None:
            return super().handle_request(listener_name, req, sock, addr)
        conn.request = req
        conn.requests += 1
        try:
            return super().handle_request(listener_name, req, sock, addr)
        finally:
            conn.request = None

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


def worker_class(nodelay: bool):
    """The worker class for this start, its settings fixed before fork."""
    return type("ProductpageWorker", (ProductpageWorker,), {"nodelay": nodelay})
