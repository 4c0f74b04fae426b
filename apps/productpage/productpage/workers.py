"""gunicorn's stock gevent worker, with two additions through its public
methods (README, "How each knob is implemented"):

- HTTP_NODELAY on accepted sockets (`handle`). gunicorn sets TCP_NODELAY on
  its listening socket and Linux copies it to every accepted socket, so
  `false` needs an explicit 0.
- A prompt drain on SIGTERM and SIGINT (`init_signals`, `handle_exit`,
  `handle`, `handle_request`, gunicorn's `Request.force_close`). The stock worker ends idle keep-alive
  connections only when their idle timeout (60 s) or the shutdown timeout
  runs out, and treats SIGINT as "quit now". Here a connection that waits
  for its next request is ended as soon as the worker stops, one that has
  not sent its first request yet gets FIRST_REQUEST_GRACE_SECONDS to send
  it, and requests being served finish (gunicorn gives their responses
  `Connection: close`). Everything else (accepting, stopping to accept,
  waiting for the connections to end within graceful_timeout) is the stock
  GeventWorker's own `run`.
"""

import select
import signal
import socket
import time

import gevent
from gevent import monkey
from gevent.event import Event
from gunicorn.workers.ggevent import GeventWorker

# How long a stopping worker waits for the first request on a connection
# that has not sent one yet. A client writes its request right after
# connecting; a client does not retry a request that failed on a connection
# it had never used, so ending such a connection at once would fail it.
FIRST_REQUEST_GRACE_SECONDS = 1.0
# How often a stopping worker looks for connections to end.
DRAIN_POLL_SECONDS = 0.05


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

    def init_signals(self):
        super().init_signals()
        # Watched by gevent's loop, so the worker reacts at once; SIGINT
        # drains like SIGTERM (the base worker would quit at once).
        for sig in (signal.SIGTERM, signal.SIGINT):
            gevent.signal_handler(sig, self.handle_exit, sig, None)

    def handle_exit(self, sig, frame):
        super().handle_exit(sig, frame)
        if self.stopping is not None:
            self.stopping.set()

    def run(self):
        self.stopping = Event()
        gevent.spawn(self.end_waiting_connections)
        super().run()

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

    def end_waiting_connections(self):
        """While stopping: end every connection that waits for a request."""
        self.stopping.wait()
        # Requests being served get "Connection: close" (gunicorn gives it
        # to those that start from now on).
        for conn in list(self.connections.values()):
            if conn.request is not None:
                conn.request.force_close()
        hub = gevent.get_hub()
        deadline = time.monotonic() + self.cfg.graceful_timeout
        while time.monotonic() < deadline:
            quiet_since = time.monotonic() - FIRST_REQUEST_GRACE_SECONDS
            for glet, conn in list(self.connections.items()):
                if conn.requests or conn.accepted < quiet_since:
                    hub.loop.run_callback(self.end_if_waiting, glet)
            gevent.sleep(DRAIN_POLL_SECONDS)

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
