"""Hostile input and slow clients against the real server, on raw sockets.

Every exchange is bounded in time: a server that hangs fails the test
instead of hanging it.
"""

import re
import resource
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


# --- request lines gunicorn must refuse at once ------------------------------


@pytest.mark.parametrize(
    "data",
    [
        b"GET /health\r\n",  # HTTP/0.9
        b"GET /health\n",
        b"GET /health HTTP/1.1\nHost: x\n\n",  # bare LF
        b"GET /health HTTP/1.1\r\nHost: x\n\r\n",
        b"GET /health HTTP/1.1\r\nHost: x\r\nX: y\n\r\n",
        b"GET /health HTTP/1.1\r\nHost: x\r\n\n",
    ],
)
def test_http09_and_bare_lf_are_refused_within_a_second(service, data):
    got = talk(service.port, data, wait=2.0)
    assert got.closed and got.seconds < 1.0, got.data
    assert got.data == b"" or got.statuses == [400], got.data


# --- RFC 9112/9110 MUST-400s ------------------------------------------------


@pytest.mark.parametrize(
    "head",
    [
        b"GET /health HTTP/1.1\r\n\r\n",  # no Host in HTTP/1.1
        b"GET /health HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",  # two Hosts
        b"GET /health HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n",
        b"GET /health HTTP/1.1\r\nHost: a b\r\n\r\n",  # not host[:port]
        b"GET /health HTTP/1.1\r\nHost: a/b\r\n\r\n",
        b"GET /health HTTP/1.1\r\nHost: user@a\r\n\r\n",
        b"GET /health HTTP/1.1\r\nHost: a:80:80\r\n\r\n",
        b"GET /health HTTP/1.1\r\nHost: a:http\r\n\r\n",
        b"GET /health HTTP/1.1\r\nHost: [::1\r\n\r\n",
        b"GET /health HTTP/1.1\r\nHost: a?b\r\n\r\n",
        b"GET /health HTTP/1.1\r\nHost: a%zz\r\n\r\n",
        b"GET /health HTTP/1.1\r\nHost: \\evil\r\n\r\n",
        b"GET /health HTTP/1.1\r\nHost: caf\xc3\xa9\r\n\r\n",
        b"GET /health HTTP/1.1\r\nHost: x\r\nX: a\x00b\r\n\r\n",  # NUL in a value
        b"GET /health HTTP/1.1\r\nHost: x\r\nX: a\rb\r\n\r\n",  # bare CR in a value
        b"GET /health HTTP/1.1\r\nHost: x\r\nX: a\x7fb\r\n\r\n",
        b"GET /health HTTP/1.1\r\nHost: x\r\nX : y\r\n\r\n",  # space before the colon
    ],
)
def test_must_400s(service, head):
    got = talk(service.port, head + b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
    assert got.statuses == [400], got.data
    assert b"Connection: close\r\n" in got.data and got.closed and got.seconds < 2


@pytest.mark.parametrize(
    "head",
    [
        b"GET /health HTTP/1.0\r\n\r\n",
        b"GET /health HTTP/1.1\r\nHost:\r\n\r\n",  # empty: allowed (RFC 9112 3.2)
        b"GET /health HTTP/1.1\r\nHost: productpage:9080\r\n\r\n",
        b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        b"GET /health HTTP/1.1\r\nHost: [::1]:9080\r\n\r\n",
        b"GET /health HTTP/1.1\r\nHost: productpage.bookinfo.svc.cluster.local\r\n\r\n",
        b"GET /health HTTP/1.1\r\nHost: xn--caf-dma.example\r\n\r\n",
    ],
)
def test_good_hosts_are_served(service, head):
    got = talk(service.port, head, idle=0.3)
    assert got.statuses == [200], got.data


# --- framing: never a second request from a body ---------------------------

FRAMINGS = {
    "cl and te": b"Content-Length: 40\r\nTransfer-Encoding: chunked\r\n",
    "te and cl": b"Transfer-Encoding: chunked\r\nContent-Length: 40\r\n",
    "two cl": b"Content-Length: 5\r\nContent-Length: 40\r\n",
    "two equal cl": b"Content-Length: 5\r\nContent-Length: 5\r\n",
    "cl list": b"Content-Length: 5, 40\r\n",
    "cl -1": b"Content-Length: -1\r\n",
    "cl 5abc": b"Content-Length: 5abc\r\n",
    "cl hex": b"Content-Length: 0x5\r\n",
    "cl +5": b"Content-Length: +5\r\n",
    "cl 1 0": b"Content-Length: 1 0\r\n",
    "cl superscript": b"Content-Length: \xb2\r\n",
    "te folded": b"Transfer-Encoding:\r\n chunked\r\n",
    "te folded tab": b"Transfer-Encoding: identity\r\n\tchunked\r\n",
    "te after vt": b"\x0bTransfer-Encoding: chunked\r\n",
    "te space name": b"Transfer-Encoding : chunked\r\n",
    "te gzip chunked": b"Transfer-Encoding: gzip, chunked\r\n",
    "te identity chunked": b"Transfer-Encoding: identity, chunked\r\n",
    "te chunked twice": b"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
    "te chunked chunked": b"Transfer-Encoding: chunked, chunked\r\n",
    "te identity": b"Transfer-Encoding: identity\r\n",
    "te unknown": b"Transfer-Encoding: xchunked\r\n",
}


@pytest.mark.parametrize("path", ["/login", "/productpage", "/health"])
@pytest.mark.parametrize("name", list(FRAMINGS))
def test_ambiguous_framing_is_refused_and_closed(service, path, name):
    body = b"5\r\nhello\r\n0\r\n\r\n" + SMUGGLED
    head = b"POST %s HTTP/1.1\r\nHost: x\r\n%s\r\n" % (path.encode(), FRAMINGS[name])
    got = talk(service.port, head + body)
    # 501 is gunicorn's answer to a coding it does not know (RFC 9112 6.1).
    assert got.statuses in ([400], [501]), got.data
    assert got.closed and got.seconds < 2.5, got.data


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


def test_a_request_with_a_body_closes_the_connection(service):
    data = (
        b"POST /health HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s"
        % (len(SMUGGLED), SMUGGLED)
    ) + b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
    got = talk(service.port, data)
    assert got.statuses == [405], got.data
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


# --- login on the wire -----------------------------------------------------


def form_post(body: bytes, extra: bytes = b"") -> bytes:
    return (
        b"POST /login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
        b"Content-Length: %d\r\n%s\r\n%s" % (len(body), extra, body)
    )


def test_login_limits_on_the_wire(service, fakes):
    fakes.healthy()
    got = talk(service.port, form_post(b"username=" + b"u" * 257))
    assert got.statuses == [400] and b"username too long" in got.data and got.closed
    got = talk(service.port, form_post(b"username=u&passwd=" + b"p" * 16384))
    assert got.statuses == [413] and b"request body too large" in got.data and got.closed
    # Refused before reading: a body of 1 GB is never sent.
    got = talk(
        service.port, b"POST /login HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000\r\n\r\n"
    )
    assert got.statuses == [413] and got.closed and got.seconds < 2
    got = talk(service.port, form_post(b"username=" + b"u" * 256))
    assert got.statuses == [302] and b"Set-Cookie: session=" in got.data and got.closed
    cookie = re.search(rb"Set-Cookie: (session=[^;]+);", got.data).group(1)
    assert len(cookie) < 1200
    got = talk(
        service.port,
        b"GET /productpage HTTP/1.1\r\nHost: x\r\nCookie: %s\r\n\r\n" % cookie,
        idle=1.0,
        wait=6.0,
    )
    assert got.statuses == [200] and b"u" * 256 in got.data


def test_login_redirect_on_the_wire(service):
    got = talk(service.port, form_post(b"username=u", b"Referer: http://evil.example/x\r\n"))
    assert b"Location: /productpage\r\n" in got.data
    got = talk(service.port, form_post(b"username=u", b"Referer: http://x/productpage?u=test\r\n"))
    assert b"Location: /productpage?u=test\r\n" in got.data


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


def test_a_connection_that_sends_nothing_is_closed_quietly(quick):
    with socket.create_connection(("127.0.0.1", quick.port), timeout=5) as sock:
        data, closed_after = read_until_closed(sock, 4)
    assert data == b""
    assert closed_after is not None and 0.8 < closed_after < 1.6


def test_a_slow_head_is_closed_with_408_at_its_deadline(quick):
    with socket.create_connection(("127.0.0.1", quick.port), timeout=5) as sock:
        started = time.monotonic()
        sock.sendall(b"GET /health HTTP/1.1\r\n")
        data = b""
        # One header line every 0.2 s: each read is quick, the head never ends.
        sock.settimeout(0.2)
        try:
            while time.monotonic() - started < 4:
                try:
                    sock.sendall(b"X-Slow: 1\r\n")
                except OSError:
                    break
                try:
                    chunk = sock.recv(65536)
                except TimeoutError:
                    continue
                if not chunk:
                    break
                data += chunk
        except ConnectionResetError:
            pass
        elapsed = time.monotonic() - started
    assert data.startswith(b"HTTP/1.1 408 Request Timeout\r\n"), data
    assert 0.8 < elapsed < 2.0


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
    answer_len = None
    with socket.create_connection(("127.0.0.1", quick.port), timeout=5) as sock:
        for _ in range(2):
            sock.sendall(health)
            data = b""
            while not data.endswith(b"Product page is healthy"):
                data += sock.recv(65536)
            assert data.startswith(b"HTTP/1.1 200 ")
            answer_len = len(data)
            time.sleep(1.5)
        # Pipelined: both answered.
        sock.sendall(health * 2)
        data = b""
        while len(data) < 2 * answer_len:
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


def open_slow(port, n):
    """n connections that each sent the start of a head and stop there."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < n + 512:
        want = n + 512 if hard == resource.RLIM_INFINITY else min(n + 512, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    socks = []
    for _ in range(n):
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")
        socks.append(sock)
    return socks


def health_seconds(port) -> float:
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=15) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        sock.settimeout(15)
        assert sock.recv(65536).startswith(b"HTTP/1.1 200 ")
    return time.monotonic() - started


def test_2000_slow_heads_do_not_stop_health(start_service):
    """Two workers of 1024 connections each (the defaults): 2000 slow heads
    leave room, and /health on new connections answers at once."""
    svc = start_service(WEB_CONCURRENCY="2")
    socks = open_slow(svc.port, 2000)
    try:
        time.sleep(0.5)  # all accepted
        times = [health_seconds(svc.port) for _ in range(10)]
        assert max(times) < 1.0, times
    finally:
        for sock in socks:
            sock.close()


def test_beyond_the_connection_limit_new_connections_wait_for_a_slot(start_service):
    """HTTP_MAX_CONNECTIONS full of slow heads: a new connection waits in the
    listen backlog until the head deadline frees a slot, then is served."""
    svc = start_service(HTTP_MAX_CONNECTIONS="20", HTTP_HEADER_TIMEOUT_SECONDS="2")
    socks = open_slow(svc.port, 20)
    try:
        time.sleep(0.3)
        waited = health_seconds(svc.port)
        assert 1.2 < waited < 3.5
        for sock in socks:
            data, _ = read_until_closed(sock, 3)
            assert data.startswith(b"HTTP/1.1 408 ")
    finally:
        for sock in socks:
            sock.close()
