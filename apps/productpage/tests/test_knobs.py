"""HTTP knobs that need a server of their own (one process per configuration)."""

import http.client
import re
import socket
import time
from pathlib import Path

import pytest
from test_server import ROUTES, framed


def read_until_closed(sock, timeout=5.0) -> float:
    """Seconds until the server closes sock (EOF or reset)."""
    sock.settimeout(timeout)
    started = time.monotonic()
    try:
        while sock.recv(65536):
            pass
    except ConnectionResetError:
        pass
    return time.monotonic() - started


def test_keepalive_off_closes_after_every_framed_response(start_service):
    svc = start_service(HTTP_KEEPALIVE="false")
    for path in ROUTES + ["/login"]:
        method = "POST" if path == "/login" else "GET"
        with socket.create_connection(("127.0.0.1", svc.port), timeout=5) as sock:
            sock.sendall(
                f"{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n".encode()
            )
            response = http.client.HTTPResponse(sock, method=method)
            response.begin()
            response.read()
            assert response.headers["Connection"] == "close", path
            assert framed(response.headers), path
            # The server, not the client, ends the connection.
            assert read_until_closed(sock) < 1.0, path


def test_keepalive_off_raw_second_request_gets_nothing(start_service):
    svc = start_service(HTTP_KEEPALIVE="false")
    with socket.create_connection(("127.0.0.1", svc.port), timeout=5) as sock:
        sock.sendall(
            b"GET /health HTTP/1.1\r\nHost: x\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\n\r\n"
        )
        data = b""
        sock.settimeout(5)
        while chunk := sock.recv(65536):
            data += chunk
    assert data.count(b"HTTP/1.1 200") == 1
    assert b"Content-Length: 23\r\n" in data and data.endswith(b"Product page is healthy")


def test_idle_keepalive_connection_closed_after_timeout(start_service):
    svc = start_service(HTTP_KEEPALIVE_TIMEOUT_SECONDS="1")
    conn = svc.connection()
    conn.request("GET", "/health")
    assert conn.getresponse().read()
    idle = read_until_closed(conn.sock, timeout=10)
    assert 0.7 < idle < 3.0
    conn.close()


def median_keepalive_latency(svc, path="/health", n=9) -> float:
    conn = svc.connection()
    times = []
    for _ in range(n):
        started = time.monotonic()
        conn.request("GET", path)
        conn.getresponse().read()
        times.append(time.monotonic() - started)
    conn.close()
    # The first requests of a connection are ACKed at once (TCP quick-ack).
    return sorted(times[3:])[len(times[3:]) // 2]


def test_nodelay_off_really_leaves_nagle_on(start_service):
    """gunicorn sends head and body separately: with Nagle on and the client's
    delayed ACK each kept-alive response stalls ~40 ms (the WEBrick effect)."""
    slow = start_service(HTTP_NODELAY="false")
    fast = start_service(HTTP_NODELAY="true")
    assert median_keepalive_latency(slow) > 0.030
    assert median_keepalive_latency(fast) < 0.020


def test_upstream_keepalive_off_opens_a_connection_per_call(start_service, backends):
    svc = start_service(UPSTREAM_KEEPALIVE="false")
    for _ in range(4):
        assert svc.request("GET", "/productpage")[0] == 200
    for fake in (backends.details, backends.reviews):
        assert fake.per_connection() == [1, 1, 1, 1]
        assert {r.headers.get("connection") for r in fake.seen()} == {"close"}


def test_upstream_connections_retired_after_max_requests(start_service, backends):
    svc = start_service(UPSTREAM_MAX_REQUESTS_PER_CONNECTION="2")
    for _ in range(5):
        assert svc.request("GET", "/productpage")[0] == 200
    for fake in (backends.details, backends.reviews):
        assert fake.per_connection() == [2, 2, 1]
        assert all("connection" not in r.headers for r in fake.seen())


def test_access_log_and_log_level(start_service, tmp_path):
    svc = start_service(ACCESS_LOG="TRUE", LOG_LEVEL="warn", TMPDIR=str(tmp_path))
    svc.request("GET", "/api/v1/products")
    svc.request("POST", "/health")
    stamp = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"
    deadline = time.monotonic() + 5
    while "POST /health" not in svc.stdout() and time.monotonic() < deadline:
        time.sleep(0.05)
    lines = svc.stdout().splitlines()
    # Before ours: the test harness's readiness probes.
    assert all(
        re.fullmatch(stamp + r" productpage GET /health 200 \d+\.\d{3}", line)
        for line in lines[:-2]
    )
    assert re.fullmatch(stamp + r" productpage GET /api/v1/products 200 \d+\.\d{3}", lines[-2])
    assert re.fullmatch(stamp + r" productpage POST /health 405 \d+\.\d{3}", lines[-1])
    assert "[INFO]" not in svc.stderr()

    # Metrics live in a fresh directory under $TMPDIR, removed at exit.
    (metrics_dir,) = list(Path(tmp_path).glob("productpage-metrics-*"))
    assert any(metrics_dir.iterdir())
    assert svc.stop() == 0
    assert not metrics_dir.exists()


@pytest.mark.parametrize("workers", ["1", "3"])
def test_web_concurrency_sets_worker_processes(start_service, workers):
    svc = start_service(WEB_CONCURRENCY=workers)
    assert len(svc.workers()) == int(workers)
