"""fastpath.py: which requests it serves itself, and that what a client sees
is what gunicorn's own path gives for the same request."""

import re
import socket
import time

import pytest

from productpage.fastpath import MAX_FIELDS, parse_head


@pytest.mark.parametrize("head", [
    b"GET /productpage HTTP/1.1\r\nHost: x",
    b"HEAD /health HTTP/1.1\r\nHost: x\r\nUser-Agent: fortio.org/fortio-1.75.3",
    b"GET /api/v1/products/0?a=b%20c HTTP/1.0\r\nHost: x\r\nConnection: keep-alive",
    b"GET / HTTP/1.1",
    b"GET /productpage HTTP/1.1\r\nHost: x\r\nx-b3-traceid: abc\r\nCookie: session=1; b=2\r\nEmpty:",
])
def test_common_requests_take_the_fast_path(head):
    assert parse_head(head) is not None


@pytest.mark.parametrize("head", [
    b"POST /login HTTP/1.1\r\nHost: x\r\nContent-Length: 3",
    b"GET /productpage HTTP/1.1\r\nContent-Length: 0",
    b"GET /productpage HTTP/1.1\r\nTransfer-Encoding: chunked",
    b"GET /productpage HTTP/1.1\r\nExpect: 100-continue",
    b"GET /productpage HTTP/1.1\r\nUpgrade: h2c\r\nHTTP2-Settings: AAA",
    b"GET /productpage HTTP/1.1\r\nX-Forwarded-Proto: https",
    b"GET /productpage HTTP/1.1\r\nX_Forwarded: a",  # underscore
    b"GET /productpage HTTP/1.1\r\nHost : x",  # whitespace before the colon
    b"GET /productpage HTTP/1.1\r\nHost: x\r\n folded",  # obs-fold
    b"GET /productpage HTTP/1.1\r\nNoColon",
    b"GET /productpage HTTP/1.1\r\nX: a\x01b",  # control character
    b"GET /productpage HTTP/2.0",
    b"GET /productpage",
    b"GET  /productpage HTTP/1.1",
    b"GET http://x/productpage HTTP/1.1",
    b"GET * HTTP/1.1",
    b"OPTIONS * HTTP/1.1",
    b"GET //evil/x HTTP/1.1",
    b"GET /a#frag HTTP/1.1",
    b"GET /a b HTTP/1.1",
    b"get /productpage HTTP/1.1",
    b"DELETE /productpage HTTP/1.1",
    b"GET /" + b"a" * 5000 + b" HTTP/1.1",
    b"GET / HTTP/1.1" + b"\r\nX: y" * (MAX_FIELDS + 1),
])
def test_everything_else_goes_to_gunicorn(head):
    assert parse_head(head) is None


@pytest.mark.parametrize("head,close", [
    (b"GET / HTTP/1.1", False),
    (b"GET / HTTP/1.1\r\nConnection: close", True),
    (b"GET / HTTP/1.1\r\nConnection: keep-alive, close", True),
    (b"GET / HTTP/1.0", True),
    (b"GET / HTTP/1.0\r\nConnection: keep-alive", False),
    (b"GET / HTTP/1.0\r\nConnection: Keep-Alive", False),
])
def test_connection_semantics(head, close):
    assert parse_head(head).wants_close is close


def _exchange(port, data: bytes, pause: float = 0.0, chunks: int = 1) -> bytes:
    """Send data (in `chunks` pieces), read until the server closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        step = max(1, len(data) // chunks)
        for i in range(0, len(data), step):
            sock.sendall(data[i:i + step])
            if pause:
                time.sleep(pause)
        out = b""
        while True:
            part = sock.recv(65536)
            if not part:
                return out
            out += part


def _responses(raw: bytes):
    """Split raw bytes into (status line, headers dict, body) by Content-Length."""
    out = []
    while raw:
        head, _, raw = raw.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        out.append((lines[0], headers, raw[:length]))
        raw = raw[length:]
    return out


def _comparable(response):
    status, headers, body = response
    headers = {k: v for k, v in headers.items() if k != "date"}
    return status, headers, body


@pytest.mark.parametrize("path", ["/health", "/productpage", "/api/v1/products/0",
                                  "/static/book.svg", "/no/such", "/logout"])
def test_same_answer_as_gunicorn(service, backends, path):
    """A GET with "Content-Length: 0" means the same as one without, but it
    takes gunicorn's path: both answers must match, header for header."""
    fast = _exchange(service.port, f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
    slow = _exchange(service.port, f"GET {path} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n"
                                   f"Connection: close\r\n\r\n".encode())
    (fast_one,) = _responses(fast)
    (slow_one,) = _responses(slow)
    assert _comparable(fast_one) == _comparable(slow_one)
    assert fast_one[1]["server"] == "gunicorn"
    assert re.match(r"\w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT\Z", fast_one[1]["date"])


def test_pipelined_requests_are_answered_in_order(service):
    raw = _exchange(service.port, b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
                                  b"GET /api/v1/products HTTP/1.1\r\nHost: x\r\n\r\n"
                                  b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    responses = _responses(raw)
    assert [r[2][:7] for r in responses] == [b"Product", b'[{"id":', b"Product"]
    assert [r[1]["connection"] for r in responses] == ["keep-alive", "keep-alive", "close"]


def test_a_head_split_into_pieces_is_served(service):
    raw = _exchange(service.port, b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                    pause=0.02, chunks=6)
    assert _responses(raw)[0][2] == b"Product page is healthy"


def test_connection_moves_to_gunicorn_and_keeps_working(service):
    """GET (fast), POST with a body (gunicorn), then GET again on the same
    connection, all pipelined: the bytes read ahead are not lost."""
    form = b"username=jason"
    raw = _exchange(service.port,
                    b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
                    b"POST /login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                    b"Content-Length: " + str(len(form)).encode() + b"\r\n\r\n" + form +
                    b"GET /api/v1/products HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    responses = _responses(raw)
    assert [r[0] for r in responses] == ["HTTP/1.1 200 OK", "HTTP/1.1 302 FOUND", "HTTP/1.1 200 OK"]
    assert "session=" in responses[1][1]["set-cookie"]
    assert responses[2][2].startswith(b'[{"id":')


@pytest.mark.parametrize("request_line,connection,closes", [
    (b"GET /health HTTP/1.0\r\n\r\n", "close", True),
    (b"GET /health HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", "keep-alive", False),
    (b"GET /health HTTP/1.1\r\n\r\n", "keep-alive", False),
])
def test_http10_and_keepalive(service, request_line, connection, closes):
    with socket.create_connection(("127.0.0.1", service.port), timeout=5) as sock:
        sock.sendall(request_line)
        data = b""
        while b"healthy" not in data:
            data += sock.recv(65536)
        status, headers, _ = _responses(data)[0]
        assert status.startswith(request_line.split(b"\r\n")[0].split(b" ")[2].decode() + " 200")
        assert headers["connection"] == connection
        sock.settimeout(0.5)
        try:
            rest = sock.recv(1)
        except socket.timeout:
            rest = None
        assert (rest == b"") is closes


def test_head_has_length_and_no_body(service):
    raw = _exchange(service.port, b"HEAD /api/v1/products HTTP/1.1\r\nHost: x\r\n\r\n"
                                  b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    head, _, rest = raw.partition(b"\r\n\r\n")
    assert b"Content-Length: " in head and int(re.search(rb"Content-Length: (\d+)", head).group(1)) > 0
    # The next response follows the HEAD response's head directly.
    assert rest.startswith(b"HTTP/1.1 200 OK")


def test_repeated_fields_are_joined_like_gunicorn(service, backends):
    """Two x-request-id fields reach the backend as one, comma-joined."""
    _exchange(service.port, b"GET /api/v1/products/0 HTTP/1.1\r\nHost: x\r\nx-request-id: a\r\n"
                            b"x-request-id: b\r\nConnection: close\r\n\r\n")
    (seen,) = backends.details.seen("/details/0")
    assert seen.headers["x-request-id"] == "a,b"
