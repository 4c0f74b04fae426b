"""The real server (./serve, gunicorn, two gevent workers) over real sockets."""

import http.client
import json
import re
import socket
import time

import pytest
from test_metrics import sample

from productpage.metrics import MAX_RENDER_AGE_SECONDS
from service import serving_pid

ROUTES = [
    "/",
    "/index.html",
    "/productpage",
    "/api/v1/products",
    "/api/v1/products/0",
    "/api/v1/products/0/reviews",
    "/api/v1/products/0/ratings",
    "/health",
    "/metrics",
    "/static/productpage.css",
    "/static/book.svg",
    "/no/such/path",
    "/static/nope.css",
]


def framed(headers) -> bool:
    return "Content-Length" in headers or headers.get("Transfer-Encoding", "").lower() == "chunked"


def on_each_worker(service, action, want=2, tries=200):
    """Run action(sock) on fresh connections until every worker has served
    at least one; returns how many times it ran."""
    seen = set()
    runs = 0
    workers = service.workers()
    assert len(workers) == want
    while len(seen) < want and runs < tries:
        conn = service.connection()
        action(conn)
        seen.add(serving_pid(conn.sock, workers))
        conn.close()
        runs += 1
    assert seen == set(workers), "requests never reached every worker"
    return runs


def test_two_worker_processes(service):
    assert len(service.workers()) == 2


@pytest.mark.parametrize("path", ROUTES)
def test_every_response_is_framed_and_kept_alive(service, backends, path):
    conn = service.connection()
    for _ in range(2):
        conn.request("GET", path)
        response = conn.getresponse()
        response.read()
        assert framed(response.headers), path
        assert response.headers["Connection"] == "keep-alive"
    conn.close()


def test_keepalive_serves_two_requests_on_one_socket(service):
    conn = service.connection()
    conn.request("GET", "/health")
    first = conn.getresponse()
    assert first.read() == b"Product page is healthy"
    sock = conn.sock
    assert sock is not None, "server asked to close"
    conn.request("GET", "/api/v1/products")
    second = conn.getresponse()
    assert second.status == 200 and second.read().startswith(b'[{"id": 0')
    assert conn.sock is sock, "the second request needed a new connection"
    conn.close()


def test_session_survives_a_change_of_worker(service, backends):
    status, headers, _ = service.request(
        "POST",
        "/login",
        body="username=jason&passwd=x",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert status == 302 and headers["Location"] == "/productpage"
    cookie = headers["Set-Cookie"].split(";")[0]

    def signed_in(conn):
        conn.request("GET", "/productpage", headers={"Cookie": cookie})
        html = conn.getresponse().read().decode()
        assert "Signed in as <b>jason</b>" in html

    on_each_worker(service, signed_in)
    assert {r.headers.get("end-user") for r in backends.details.seen()} == {"jason"}


def test_metrics_add_up_across_workers(service):
    def health_count():
        _, _, body = service.request("GET", "/metrics")
        return (
            sample(
                body.decode(), "http_requests_total", method="GET", route="/health", status="200"
            )
            or 0
        )

    time.sleep(MAX_RENDER_AGE_SECONDS)  # no render older than the requests before
    before = health_count()

    def health(conn):
        conn.request("GET", "/health")
        assert conn.getresponse().read() == b"Product page is healthy"

    runs = on_each_worker(service, health)
    time.sleep(MAX_RENDER_AGE_SECONDS)  # each worker renders anew
    assert health_count() - before == runs


def test_metrics_through_the_server(service):
    _, headers, body = service.request("GET", "/metrics")
    assert headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    assert b"http_request_duration_seconds_bucket" in body


def test_details_and_reviews_are_fetched_concurrently(service, backends):
    backends.details.answer("/details/0", body={"author": "William Shakespeare"}, delay=0.3)
    backends.reviews.answer("/reviews/0", body={"podname": "p", "reviews": []}, delay=0.3)
    started = time.monotonic()
    status, _, body = service.request("GET", "/productpage")
    elapsed = time.monotonic() - started
    assert status == 200 and b"William Shakespeare" in body and b"Book Reviews" in body
    assert 0.3 <= elapsed < 0.5


def test_backend_call_timeout_is_three_seconds(service, backends):
    backends.details.answer("/details/0", delay=5)
    started = time.monotonic()
    status, _, body = service.request("GET", "/productpage")
    elapsed = time.monotonic() - started
    assert status == 200 and b"Error fetching product details" in body
    assert b"Book Reviews" in body
    assert 2.9 < elapsed < 3.6
    assert len(backends.details.seen()) == 1


def test_headers_propagate_through_the_real_server(service, backends):
    service.request(
        "GET",
        "/productpage",
        headers={"x-request-id": "r-42", "b3": "abc-def-1", "end-user": "mallory"},
    )
    for fake in (backends.details, backends.reviews):
        (seen,) = fake.seen()
        assert seen.headers["x-request-id"] == "r-42" and seen.headers["b3"] == "abc-def-1"
        assert "end-user" not in seen.headers


@pytest.mark.parametrize(
    "method", ["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "BREW"]
)
def test_unknown_path_is_json_404_for_every_method(service, method):
    status, headers, body = service.request(method, "/no/such/path")
    assert (status, body) == (404, b'{"error":"not found"}')
    assert headers["Content-Type"] == "application/json"


@pytest.mark.parametrize(
    "path,method,allow",
    [
        ("/productpage", "POST", "GET, HEAD"),
        ("/productpage", "DELETE", "GET, HEAD"),
        ("/productpage", "OPTIONS", "GET, HEAD"),
        ("/health", "PUT", "GET, HEAD"),
        ("/login", "GET", "POST"),
        ("/login", "HEAD", "POST"),
        ("/logout", "POST", "GET, HEAD"),
        ("/api/v1/products/0", "PATCH", "GET, HEAD"),
        ("/metrics", "BREW", "GET, HEAD"),
        ("/static/productpage.css", "POST", "GET, HEAD"),
    ],
)
def test_known_path_wrong_method_is_json_405_with_allow(service, path, method, allow):
    status, headers, body = service.request(method, path)
    assert status == 405
    assert headers["Allow"] == allow
    assert headers["Content-Type"] == "application/json"
    assert body == (b"" if method == "HEAD" else b'{"error":"method not allowed"}')


@pytest.mark.parametrize(
    "path", ["/productpage", "/health", "/api/v1/products", "/static/productpage.css", "/nope"]
)
def test_head_answers_like_get_without_a_body(service, path):
    conn = service.connection()
    conn.request("GET", path)
    get = conn.getresponse()
    get_body = get.read()
    conn.request("HEAD", path)
    head = conn.getresponse()
    assert head.status == get.status
    assert head.headers["Content-Length"] == str(len(get_body))
    assert head.read() == b""
    # Had HEAD sent a body, it would now be read as this response's status line.
    conn.request("GET", "/health")
    assert conn.getresponse().read() == b"Product page is healthy"
    conn.close()


def test_static_files(service):
    status, headers, body = service.request("GET", "/static/productpage.css")
    assert status == 200 and headers["Content-Type"].startswith("text/css") and b".navbar" in body
    status, headers, _ = service.request("GET", "/static/book.svg")
    assert status == 200 and headers["Content-Type"].startswith("image/svg+xml")
    status, _, body = service.request("GET", "/static/../app.py")
    assert (status, body) == (404, b'{"error":"not found"}')


@pytest.mark.parametrize(
    "path",
    [
        "/static//etc/passwd",
        "/static//productpage.css",
        "/static///etc/passwd",
        "//productpage",
        "//static/book.svg",
        "/api/v1/products//reviews",
        "/api/v1//products",
        "/api/v1/products/0/",
        "/productpage/",
        "/health//",
        "/static/%2e%2e/app.py",
        "/static/..%2fapp.py",
    ],
)
@pytest.mark.parametrize("method", ["GET", "HEAD", "OPTIONS", "POST"])
def test_non_canonical_paths_are_json_404_never_a_redirect(service, path, method):
    status, headers, body = service.request(method, path, headers={"Host": "evil.example"})
    if method in ("GET", "HEAD") or "//" in path or path.endswith("/"):
        assert status == 404
        assert body == (b"" if method == "HEAD" else b'{"error":"not found"}')
    else:
        # /static/../app.py has the static route's shape: 405 for POST.
        assert status == 405
    assert headers["Content-Type"] == "application/json"
    assert "Location" not in headers


def test_curl_style_login_without_referer_or_redirects(service):
    """curl -X POST -d username=jason -d passwd=x http://host/login"""
    status, headers, _ = service.request("POST", "/login?username=jason")
    assert status == 302 and headers["Location"] == "/productpage"
    assert "HttpOnly" in headers["Set-Cookie"] and "Path=/" in headers["Set-Cookie"]


def test_listens_only_on_listen_address(service):
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.2", service.port), timeout=2).close()


def test_no_per_request_output_by_default(service):
    service.request("GET", "/health")
    assert service.stdout() == ""
    assert "GET /health" not in service.stderr()


def test_startup_logs_at_info(service):
    assert re.search(r"\[INFO\] Listening at: http://127\.0\.0\.1:\d+", service.stderr())


def test_products_json_through_the_server(service):
    status, headers, body = service.request("GET", "/api/v1/products")
    assert status == 200 and headers["Content-Type"] == "application/json"
    assert json.loads(body)[0]["title"] == "The Comedy of Errors"


def test_garbage_request_gets_a_framed_error(service):
    with socket.create_connection(("127.0.0.1", service.port), timeout=5) as sock:
        sock.sendall(b"NOT HTTP AT ALL\r\n\r\n")
        response = http.client.HTTPResponse(sock)
        response.begin()
        assert response.status == 400
        assert framed(response.headers)


def test_app_time_starts_at_the_request_first_byte(service):
    """`app` covers gunicorn's read and parse of the head (docs/contract.md,
    "Server-Timing"): a head sent in two parts 0.3 s apart, on a new
    connection and again on the kept-alive one, is answered with app >= 150 ms
    (the worker may see the first part late on a busy machine)."""
    with socket.create_connection(("127.0.0.1", service.port), timeout=5) as sock:
        for _ in range(2):
            sock.sendall(b"GET /health HTTP/1.1\r\n")
            time.sleep(0.3)
            sock.sendall(b"Host: x\r\n\r\n")
            response = http.client.HTTPResponse(sock)
            response.begin()
            assert response.read() == b"Product page is healthy"
            app = re.search(r"(?:^|, )app;dur=([0-9.]+)", response.headers["Server-Timing"])
            assert app and float(app.group(1)) >= 150.0, response.headers["Server-Timing"]
