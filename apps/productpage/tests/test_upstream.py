"""The outbound pools (urllib3, upstream.py) against real loopback peers."""

import socket
import threading
import time

import pytest

from fakes import FakeBackend, RawServer
from productpage.upstream import UpstreamError, get
from productpage.upstream import pool as backend_pool


@pytest.fixture
def peer():
    fake = FakeBackend()
    fake.answer("/x", body=b'{"ok":true}')
    yield fake
    fake.close()


class Upstream:
    """A backend pool and get() on it, as backends.py uses them."""

    def __init__(self, **kwargs):
        self.pool = backend_pool("127.0.0.1", **kwargs)

    def get(self, path, headers=None):
        return get(self.pool, path, headers or {})


def pool(port, keepalive=True, max_requests=100, nodelay=True, timeout=2.0):
    return Upstream(
        port=port,
        keepalive=keepalive,
        max_requests=max_requests,
        nodelay=nodelay,
        timeout=timeout,
        max_idle=10,
    )


def test_connections_are_reused_and_retired_after_max_requests(peer):
    upstream = pool(peer.port, max_requests=3)
    for _ in range(7):
        reply = upstream.get("/x")
        assert (reply.status, reply.body) == (200, b'{"ok":true}')
    assert peer.per_connection() == [3, 3, 1]
    assert all("connection" not in r.headers for r in peer.seen())


def test_max_requests_one_means_a_connection_per_call(peer):
    upstream = pool(peer.port, max_requests=1)
    for _ in range(4):
        upstream.get("/x")
    assert peer.per_connection() == [1, 1, 1, 1]


def test_no_keepalive_opens_a_connection_per_call_and_says_close(peer):
    upstream = pool(peer.port, keepalive=False)
    for _ in range(5):
        assert upstream.get("/x").status == 200
    assert peer.per_connection() == [1] * 5
    assert [r.headers.get("connection") for r in peer.seen()] == ["close"] * 5


def test_headers_and_host_are_sent(peer):
    pool(peer.port).get("/x", {"x-request-id": b"abc", "end-user": "jösé".encode()})
    headers = peer.seen()[0].headers
    assert headers["host"] == f"127.0.0.1:{peer.port}"
    assert headers["x-request-id"] == "abc"
    assert headers["end-user"].encode("latin-1") == "jösé".encode()


def test_concurrent_calls_use_separate_connections(peer):
    peer.answer("/x", body=b"{}", delay=0.2)
    upstream = pool(peer.port)
    threads = [threading.Thread(target=upstream.get, args=("/x",)) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(peer.per_connection()) == [1, 1, 1]
    upstream.get("/x")
    assert len(peer.per_connection()) == 3, "an idle pooled connection is reused"


@pytest.mark.parametrize("nodelay", [True, False])
def test_nodelay_is_set_both_ways(peer, nodelay):
    upstream = pool(peer.port, nodelay=nodelay)
    upstream.get("/x")
    conn = upstream.pool.pool.get_nowait()  # the idle connection just used
    assert conn.sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == int(nodelay)
    conn.close()


class Canned(RawServer):
    """A raw server: answers request i with responses[i] (the last repeats),
    then closes the connection when close_after is true."""

    def __init__(self, responses, close_after=False, drip=None):
        self.responses = list(responses)
        self.close_after = close_after
        self.drip = drip
        self.requests = 0
        super().__init__()

    def handle(self, sock):
        with sock:
            buf = b""
            while True:
                while b"\r\n\r\n" not in buf:
                    data = sock.recv(4096)
                    if not data:
                        return
                    buf += data
                buf = buf.split(b"\r\n\r\n", 1)[1]
                response = self.responses[min(self.requests, len(self.responses) - 1)]
                self.requests += 1
                try:
                    if self.drip:
                        for byte in response:
                            sock.sendall(bytes([byte]))
                            time.sleep(self.drip)
                    else:
                        sock.sendall(response)
                except OSError:
                    return  # the client gave up
                if self.close_after:
                    return


@pytest.mark.parametrize(
    "raw,body,reused",
    [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", b"hello", True),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            b"3;ext=1\r\nhel\r\n2\r\nlo\r\n0\r\nTrailer: x\r\n\r\n",
            b"hello",
            True,
        ),
        (
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok",
            b"ok",
            True,
        ),
        (b"HTTP/1.1 204 No Content\r\n\r\n", b"", True),
        (b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", b"ok", False),
        (b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", b"ok", False),
        (b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok", b"ok", True),
    ],
)
def test_response_framings(raw, body, reused):
    server = Canned([raw])
    upstream = pool(server.port)
    assert upstream.get("/").body == body
    assert upstream.get("/").body == body
    assert server.connections == (1 if reused else 2)
    server.close()


def test_body_delimited_by_close():
    server = Canned([b"HTTP/1.1 200 OK\r\n\r\nuntil close"], close_after=True)
    assert pool(server.port).get("/").body == b"until close"
    server.close()


@pytest.mark.parametrize(
    "raw",
    [
        b"garbage\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    ],
)
def test_garbled_response_is_an_error(raw):
    server = Canned([raw], close_after=True)
    with pytest.raises(UpstreamError):
        pool(server.port).get("/")
    server.close()


def test_pooled_connection_closed_by_peer_is_replaced_transparently():
    # Claims keep-alive, then closes: the next call finds a dead pooled socket.
    server = Canned([b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"], close_after=True)
    upstream = pool(server.port)
    assert upstream.get("/").body == b"ok"
    time.sleep(0.05)
    assert upstream.get("/").body == b"ok"
    assert (server.connections, server.requests) == (2, 2)
    server.close()


class ClosesUnderSecondRequest(RawServer):
    """Answers the first request of each connection with keep-alive, then
    reads the second and closes without an answer (or, with silent, never
    answers it): a backend that drains while a pooled connection's request
    is on the wire."""

    def __init__(self, silent=False):
        self.silent = silent
        self.requests = 0
        super().__init__()

    def handle(self, sock):
        with sock:
            buf = b""
            for n in (1, 2):
                while b"\r\n\r\n" not in buf:
                    data = sock.recv(4096)
                    if not data:
                        return
                    buf += data
                buf = buf.split(b"\r\n\r\n", 1)[1]
                self.requests += 1
                if n == 1:
                    sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                elif self.silent:
                    time.sleep(2)


def test_pooled_connection_closed_under_the_request_is_sent_once_more():
    server = ClosesUnderSecondRequest()
    upstream = pool(server.port)
    assert upstream.get("/").body == b"ok"
    assert upstream.get("/").body == b"ok", "sent again on a new connection"
    assert (server.connections, server.requests) == (2, 3)
    server.close()


def test_pooled_connection_timing_out_is_not_sent_again():
    server = ClosesUnderSecondRequest(silent=True)
    upstream = pool(server.port, timeout=0.3)
    assert upstream.get("/").body == b"ok"
    with pytest.raises(UpstreamError):
        upstream.get("/")
    assert (server.connections, server.requests) == (1, 2)
    server.close()


def test_fresh_connection_closed_without_answer_is_not_retried():
    server = Canned([b""], close_after=True)
    with pytest.raises(UpstreamError):
        pool(server.port).get("/")
    assert server.connections == 1
    server.close()


def test_refused_connection_is_an_error():
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    listener.close()
    with pytest.raises(UpstreamError):
        pool(port).get("/")


def test_timeout_bounds_a_silent_peer():
    listener = socket.create_server(("127.0.0.1", 0))  # accepts, never answers
    started = time.monotonic()
    with pytest.raises(UpstreamError):
        pool(listener.getsockname()[1], timeout=0.3).get("/")
    assert 0.25 < time.monotonic() - started < 0.8
    listener.close()


class Unsolicited(RawServer):
    """A raw server that answers each request, then sends a second,
    unsolicited response on the same connection: right behind the first
    (one write), a moment later, or with a body larger than any read
    buffer. This is what details' WEBrick did when a header line made it
    see two requests in one."""

    def __init__(self, mode):
        self.mode = mode
        self.requests = 0
        super().__init__()

    def handle(self, sock):
        with sock:
            buf = b""
            while True:
                while b"\r\n\r\n" not in buf:
                    try:
                        data = sock.recv(4096)
                    except OSError:  # the client closed it with bytes unread
                        return
                    if not data:
                        return
                    buf += data
                buf = buf.split(b"\r\n\r\n", 1)[1]
                self.requests += 1
                body = b'{"n":%d}' % self.requests
                answer = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
                extra = b"unsolicited" * (6000 if self.mode == "large" else 1)
                stray = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(extra), extra)
                try:
                    if self.mode == "after":
                        sock.sendall(answer)
                        time.sleep(0.05)
                        sock.sendall(stray)
                    else:
                        sock.sendall(answer + stray)
                except OSError:
                    return


@pytest.mark.parametrize("mode", ["together", "after", "large"])
def test_a_pooled_connection_with_unsolicited_bytes_is_never_reused(mode):
    """urllib3 checks a pooled connection before reusing it
    (is_connection_dropped: readable means dropped): the next call must get
    its own answer, never the stray one."""
    server = Unsolicited(mode)
    upstream = pool(server.port)
    assert upstream.get("/").body == b'{"n":1}'
    time.sleep(0.2)  # the stray answer has arrived
    assert upstream.get("/").body == b'{"n":2}'
    time.sleep(0.2)
    assert upstream.get("/").body == b'{"n":3}'
    if mode != "together":
        # The stray bytes were waiting on the socket: a new connection each time.
        assert server.connections == 3
    server.close()
