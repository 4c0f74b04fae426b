"""Closing the listening socket that the master and every worker share
without resetting a connection queued on it.

The kernel resets the connections still queued on a listening socket when
the last descriptor of it closes, and accepting until the queue is empty
does not close the race: clients whose keep-alive connection the drain just
ended reconnect at once, so a connection can always queue between the last
accept and the close. plug() stops new connections reaching the queue first:

1. listen(0): the queue now has room for one connection (Linux counts a
   queue full once it holds more than the backlog). A handshake that finds
   it full is dropped; its client retries the SYN a second later and, the
   socket closed by then, is refused: never reset.
2. Accept (and serve) everything queued, then connect a socket of our own
   (the plug) and send it one byte. That byte is acknowledged only by the
   server side of the plug's connection, which exists only once the kernel
   has queued it: so an acknowledged byte means the plug, and nothing else,
   holds the queue's one place (had another connection got there first,
   the plug's handshake would have been dropped, and we go round again).
3. Nobody accepts after that: the queue stays full until the last copy of
   the socket closes, whichever process holds it, and the one connection
   the kernel resets then is the plug.

Why a connection accepted by the kernel cannot be reset: let the last
successful accept() on the socket, by any worker, be at time T. That worker
then found the queue empty and plugged it (step 2) with no accept since T;
a connection queued after T would either have been accepted (contradicting
T) or have kept the plug out. The one gap is the kernel's own: it checks
the queue's room without a lock, so two handshakes completing at the same
instant on two CPUs may both enter.
"""

import errno
import fcntl
import socket
import struct
import termios
import time

import gevent

# How long one plug may take to be acknowledged before it is tried again
# (on loopback it takes microseconds, or never when another got there first).
PLUG_WAIT_SECONDS = 0.05
PLUG_POLL_SECONDS = 0.001


def _own_address(listener):
    host, port = listener.getsockname()[:2]
    if host in ("0.0.0.0", "::"):
        host = "127.0.0.1" if listener.family == socket.AF_INET else "::1"
    return host, port


def _unacknowledged(sock) -> int:
    # SIOCOUTQ (tcp(7)): bytes sent and not yet acknowledged.
    return struct.unpack("i", fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, b"\0" * 4))[0]


def accept_all(listener, serve):
    """Accept what is queued now and hand each connection to serve."""
    while True:
        try:
            client, addr = listener.accept()
        except OSError as err:
            if err.errno in (errno.EAGAIN, errno.EWOULDBLOCK):
                return
            raise
        serve(client, addr)


def _try_plug(address):
    plug = None
    try:
        plug = socket.create_connection(address, timeout=PLUG_WAIT_SECONDS)
        plug.sendall(b"\0")
        deadline = time.monotonic() + PLUG_WAIT_SECONDS
        while _unacknowledged(plug):
            if time.monotonic() > deadline:
                raise TimeoutError("plug not acknowledged")
            gevent.sleep(PLUG_POLL_SECONDS)
        return plug
    except OSError:
        if plug is not None:
            plug.close()
        return None


def plug(listener, serve, until: float):
    """Serve what is queued on listener and leave it full with a connection
    of our own (see the module's note); that socket, for the caller to close
    after the listener. None if no plug held by `until`."""
    listener.listen(0)
    listener.setblocking(False)
    address = _own_address(listener)
    while time.monotonic() < until:
        accept_all(listener, serve)
        held = _try_plug(address)
        if held is not None:
            return held
    accept_all(listener, serve)
    return None
