"""Closing the shared listener without resetting a queued connection: plug() fills its queue
with one of our own first (DESIGN.md, "Closing the listening socket without a reset")."""

import errno
import fcntl
import socket
import struct
import termios
import time

import gevent

# Then a plug is tried again (its ack takes microseconds, or never comes).
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
    """Serve what is queued, then fill listener's queue with our own connection: returned for
    the caller to close after the listener, or None if no plug held by `until`."""
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
