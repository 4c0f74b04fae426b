"""The serving layer's own mechanisms against the real server, on raw
sockets: which requests close their connection, the pipelining cap, the
limits gunicorn is given, and the head deadline's timer. The wire rules
every service shares are tested in tests/e2e (the contract's wire table).

Every exchange is bounded in time: a server that hangs fails the test
instead of hanging it.
"""

import re
import socket
import time

import pytest

from fakes import Bookinfo
from service import Service

SMUGGLED = b"GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"


@pytest.fixture(scope="module")
def fakes():
    backends = Bookinfo()
    yield backends
    backends.close()


@pytest.fixture(scope="module")
def service(fakes):
    """The real server with the default knobs (two workers), for this module
    alone: what it logs about hostile requests stays out of other tests'."""
    svc = Service({**fakes.env(), "WEB_CONCURRENCY": "2"})
    yield svc
    svc.cleanup()


@pytest.fixture(scope="module")
def quick(fakes):
    """A server whose heads must be complete within 1 s (keep-alive 60 s)."""
    svc = Service({**fakes.env(), "WEB_CONCURRENCY": "1", "HTTP_HEADER_TIMEOUT_SECONDS": "1"})
    yield svc
    svc.cleanup()


STATUS = re.compile(rb"HTTP/1\.[01] (\d{3}) ")


class Exchange:
    """What the server sent back, and whether and when it closed."""

    def __init__(self, data: bytes, closed: bool, seconds: float):
        self.data = data
        self.closed = closed
        self.seconds = seconds

    @property
    def statuses(self):
        """The status of each response, reading them one after the other by
        their Content-Length (every response here has one)."""
        statuses, rest = [], self.data
        while rest:
            head, sep, rest = rest.partition(b"\r\n\r\n")
            match = STATUS.match(head)
            assert sep and match, self.data
            statuses.append(int(match.group(1)))
            length = re.search(rb"\r\nContent-Length: (\d+)", head, re.IGNORECASE)
            rest = rest[int(length.group(1)) if length else 0 :]
        return statuses


def talk(port, data: bytes, wait: float = 3.0, idle: float = None) -> Exchange:
    """Send data and read until the server closes the connection or `wait`
    seconds pass; with `idle`, also stop once a response arrived and
    nothing more came for that long."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        started = time.monotonic()
        if data:
            sock.sendall(data)
        received = b""
        while True:
            left = started + wait - time.monotonic()
            if left <= 0:
                return Exchange(received, False, time.monotonic() - started)
            sock.settimeout(min(left, idle) if idle and received else left)
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                if idle and received:
                    return Exchange(received, False, time.monotonic() - started)
                continue
            except ConnectionResetError:
                return Exchange(received, True, time.monotonic() - started)
            if not chunk:
                return Exchange(received, True, time.monotonic() - started)
            received += chunk


# --- framing: never a second request from a body ---------------------------


@pytest.mark.parametrize(
    "body",
    [
        b"5zz\r\nhello\r\n0\r\n\r\n",  # chunk size not hex
        b"5 \r\nhello\r\n0\r\n\r\n",  # blank after the size
        b"5\r\nhelloXX0\r\n\r\n",  # no CRLF after the chunk data
        b"5\nhello\n0\n\n",  # bare LF in chunk lines
        b"ffffffffffffffffffff\r\nhello\r\n",  # huge chunk size
        b"fffffff\r\n",  # huge, and nothing follows
    ],
)
@pytest.mark.parametrize("path", ["/login", "/productpage"])
def test_chunked_bodies_are_never_parsed_for_requests(service, body, path):
    """Only /login reads a body, and only with a Content-Length (411
    otherwise); every request with a body is answered with
    `Connection: close`. So whatever a chunked body holds, it is answered
    at once and nothing in it is ever read as a request."""
    head = b"POST %s HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" % path.encode()
    got = talk(service.port, head + body + SMUGGLED)
    assert got.statuses == ([411] if path == "/login" else [405]), got.data
    assert b"Connection: close\r\n" in got.data and got.closed and got.seconds < 2


def test_content_length_zero_keeps_the_connection(service):
    data = (
        b"POST /health HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"
        b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
    )
    got = talk(service.port, data, idle=0.5)
    assert got.statuses == [405, 200], got.data
    assert not got.closed


def test_pipelining_is_capped_per_connection(service):
    """A client that sends requests without reading the answers gets the
    first MAX_PIPELINED, the last with Connection: close, then a close."""
    from productpage.serving.worker import MAX_PIPELINED

    got = talk(
        service.port, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n" * (MAX_PIPELINED * 4), wait=5
    )
    assert got.statuses == [200] * MAX_PIPELINED, got.statuses
    assert got.data.count(b"Connection: close\r\n") == 1
    assert got.closed and got.seconds < 3


def test_pipelining_below_the_cap_keeps_the_connection(service):
    from productpage.serving.worker import MAX_PIPELINED

    got = talk(
        service.port, b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n" * (MAX_PIPELINED - 1), idle=0.5
    )
    assert got.statuses == [200] * (MAX_PIPELINED - 1), got.statuses
    assert b"Connection: close" not in got.data and not got.closed


# --- line limits --------------------------------------------------------------


def test_header_line_limit(service):
    # gunicorn's limit_request_field_size: 8190 bytes, CRLF included.
    line = b"X: " + b"a" * (8190 - 5) + b"\r\n"
    assert len(line) == 8190
    got = talk(service.port, b"GET /health HTTP/1.1\r\nHost: x\r\n" + line + b"\r\n", idle=0.3)
    assert got.statuses == [200]
    line = b"X: " + b"a" * (8190 - 4) + b"\r\n"
    got = talk(service.port, b"GET /health HTTP/1.1\r\nHost: x\r\n" + line + b"\r\n")
    assert got.statuses == [431] and got.closed


def test_request_line_limit(service):
    target = b"/health?" + b"q" * 4200
    got = talk(service.port, b"GET " + target + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    assert got.statuses == [414] and got.closed


def test_login_refuses_a_huge_body_before_reading_it(service):
    # Flask's MAX_CONTENT_LENGTH: a body of 1 GB is never sent.
    got = talk(
        service.port, b"POST /login HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000\r\n\r\n"
    )
    assert got.statuses == [413] and got.closed and got.seconds < 2


# --- slow clients ---------------------------------------------------------------


def test_slow_login_body_gets_408(start_service):
    svc = start_service(HTTP_HEADER_TIMEOUT_SECONDS="1")
    with socket.create_connection(("127.0.0.1", svc.port), timeout=5) as sock:
        sock.sendall(
            b"POST /login HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n"
            b"Content-Type: application/x-www-form-urlencoded\r\n\r\nusername="
        )
        started = time.monotonic()
        data = sock.recv(65536)
        assert data.startswith(b"HTTP/1.1 408 ")
        assert 0.8 < time.monotonic() - started < 2.0


def read_until_closed(sock, wait: float):
    """(bytes received, seconds until the server closed), or (bytes, None)."""
    started = time.monotonic()
    data = b""
    sock.settimeout(wait)
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except TimeoutError:
        return data, None
    except ConnectionResetError:
        pass
    return data, time.monotonic() - started


def test_the_first_head_counts_from_the_accept(quick):
    with socket.create_connection(("127.0.0.1", quick.port), timeout=5) as sock:
        time.sleep(0.7)
        sock.sendall(b"GET /health HTTP/1.1\r\n")
        data, closed_after = read_until_closed(sock, 4)
    assert data.startswith(b"HTTP/1.1 408 ")
    assert closed_after is not None and closed_after < 0.6


def test_keepalive_idle_is_not_the_head_deadline(quick):
    """Between requests a connection may idle up to the keep-alive timeout;
    the head deadline starts at the next request's first byte."""
    health = b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
    body = b"Product page is healthy"
    with socket.create_connection(("127.0.0.1", quick.port), timeout=5) as sock:
        for _ in range(2):
            sock.sendall(health)
            data = b""
            while not data.endswith(body):
                data += sock.recv(65536)
            assert data.startswith(b"HTTP/1.1 200 ")
            time.sleep(1.5)
        # Pipelined: both answered. (Counted by their bodies: the heads'
        # lengths vary, Server-Timing's durations having more or fewer digits.)
        sock.sendall(health * 2)
        data = b""
        while data.count(body) < 2:
            data += sock.recv(65536)
        assert Exchange(data, False, 0).statuses == [200, 200]
        # A head begun and not finished: 408 a second later.
        started = time.monotonic()
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")
        data, closed_after = read_until_closed(sock, 4)
        assert data.startswith(b"HTTP/1.1 408 ")
        assert 0.8 < time.monotonic() - started < 1.6


def test_head_deadline_with_keepalive_off(start_service):
    svc = start_service(HTTP_KEEPALIVE="false", HTTP_HEADER_TIMEOUT_SECONDS="1")
    with socket.create_connection(("127.0.0.1", svc.port), timeout=5) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")
        data, closed_after = read_until_closed(sock, 4)
    assert data.startswith(b"HTTP/1.1 408 ")
    assert closed_after is not None and 0.8 < closed_after < 1.6
    with socket.create_connection(("127.0.0.1", svc.port), timeout=5) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        data, closed_after = read_until_closed(sock, 4)
    assert data.startswith(b"HTTP/1.1 200 ") and closed_after is not None
