"""Which incoming headers reach the backends, and the cross-client desync
they once caused through details' WEBrick (productpage -> a real details)."""

import http.client
import re
import shutil
import socket
import subprocess
import threading
import time

import pytest

from fakes import RawServer
from productpage.backends import (
    FORWARD_HEADERS,
    MAX_FORWARDED_FIELD,
    MAX_FORWARDED_TOTAL,
    outgoing_headers,
)
from service import APP_DIR, base_env, free_port


def environ(**headers):
    return {"HTTP_" + name.upper(): value for name, value in headers.items()}


def test_well_formed_headers_are_forwarded_byte_for_byte():
    env = environ(
        x_request_id="r-1",
        cookie="a=b; c=d",
        user_agent="Mozilla/5.0 (X11) caf\xe9",
        authorization="Bearer t\tx",
    )
    assert outgoing_headers(env, "jösé") == {
        "end-user": "jösé".encode(),
        "x-request-id": b"r-1",
        "authorization": b"Bearer t\tx",
        "user-agent": b"Mozilla/5.0 (X11) caf\xe9",
        "cookie": b"a=b; c=d",
    }


@pytest.mark.parametrize("value", ["a\r\nb", "a\nb", "a\rb", "a\0b", "a\x7fb", "a\x0bb", "\u0100"])
def test_malformed_values_are_dropped(value):
    assert outgoing_headers(environ(cookie=value, x_request_id="ok"), None) == {
        "x-request-id": b"ok"
    }


def test_user_name_with_a_line_break_is_not_forwarded():
    assert outgoing_headers({}, "jason\r\nx-evil: 1") == {}


@pytest.mark.parametrize("length", [4094, 4095, 4096, 4097, 8190, 8191, 8192, 8193])
def test_a_line_near_webrick_boundaries_is_dropped(length):
    # The header line as the attack sent it: "Cookie: " + value, `length` bytes.
    value = "c" * (length - len("Cookie: "))
    assert "cookie" not in outgoing_headers(environ(cookie=value), None)


def test_field_bound_is_name_plus_value():
    fits = "c" * (MAX_FORWARDED_FIELD - len("cookie"))
    assert outgoing_headers(environ(cookie=fits), None) == {"cookie": fits.encode()}
    assert outgoing_headers(environ(cookie=fits + "c"), None) == {}
    # On the wire ("name: value\r\n") a forwarded line stays well below 4095.
    assert MAX_FORWARDED_FIELD + len(": \r\n") < 4095
    assert MAX_FORWARDED_TOTAL + 2 * len(": \r\n") * len(FORWARD_HEADERS) < 8191


def test_total_bound_drops_the_last_in_order_first():
    big = "v" * 3900
    env = environ(x_request_id="r-1", authorization=big, jwt=big, user_agent="curl/8", cookie=big)
    out = outgoing_headers(env, "jason")
    # end-user, x-request-id, authorization and jwt fit; then only what is
    # still small enough: user-agent yes, cookie no.
    assert list(out) == ["end-user", "x-request-id", "authorization", "jwt", "user-agent"]
    assert sum(len(k) + len(v) for k, v in out.items()) <= MAX_FORWARDED_TOTAL


def test_dropped_headers_through_the_app(client, backends):
    client.get(
        "/api/v1/products/0",
        headers={"Cookie": "c" * 4088, "x-request-id": "r-9", "Authorization": "/health HTTP/1.1"},
    )
    (seen,) = backends.details.seen()
    assert "cookie" not in seen.headers
    assert seen.headers["x-request-id"] == "r-9"
    assert seen.headers["authorization"] == "/health HTTP/1.1"


# --- the desync itself, against the real details service ------------------

DETAILS_SERVE = APP_DIR.parent / "details" / "serve"


def _details_available() -> bool:
    if not DETAILS_SERVE.exists() or shutil.which("ruby") is None:
        return False
    check = subprocess.run(
        ["ruby", "-e", "require 'webrick'; require 'prometheus/client'"], capture_output=True
    )
    return check.returncode == 0


@pytest.fixture(scope="module")
def real_details():
    if not _details_available():
        pytest.skip("the details service (ruby, WEBrick) is not available")
    port = free_port()
    proc = subprocess.Popen(
        [str(DETAILS_SERVE)],
        cwd="/",
        env=base_env({"PORT": str(port), "LISTEN_ADDRESS": "127.0.0.1"}),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 20
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            assert proc.poll() is None and time.monotonic() < deadline, "details did not start"
            time.sleep(0.05)
    yield port
    proc.terminate()
    proc.wait(10)


def _get(conn, path, headers):
    conn.request("GET", path, headers=headers)
    response = conn.getresponse()
    return response.status, response.read()


def run_victims_and_attacks(port, victims=10, requests=20, attackers=2):
    """Victim threads each ask for their own product ids, one after the other
    on a kept-alive connection; attacker threads meanwhile send Cookie lines
    on WEBrick's 4096-byte boundaries, the next header line being a request
    line for details. Returns the victims' wrong answers."""
    lengths = [4095, 4096, 8191, 8192, 4094, 4097]
    wrong, failures = [], []
    lock = threading.Lock()

    def connection():
        return http.client.HTTPConnection("127.0.0.1", port, timeout=10)

    def attacker(a):
        conn = connection()
        for k in range(requests):
            length = lengths[(a + k) % len(lengths)]
            headers = {
                "Cookie": "c" * (length - len("Cookie: ")),
                "Authorization": "/health HTTP/1.1",
            }
            try:
                _get(conn, "/api/v1/products/0", headers)
            except OSError as err:
                failures.append(("attack", err))
                conn = connection()
        conn.close()

    def victim(v):
        conn = connection()
        for k in range(requests):
            product = 1000 + v * requests + k
            try:
                status, body = _get(conn, f"/api/v1/products/{product}", {})
            except OSError as err:
                failures.append(("victim", err))
                conn = connection()
                continue
            if status != 200 or not re.match(rb'\{"id":%d,' % product, body):
                with lock:
                    wrong.append((product, status, body[:80]))
        conn.close()

    threads = [threading.Thread(target=victim, args=(v,)) for v in range(victims)] + [
        threading.Thread(target=attacker, args=(a,)) for a in range(attackers)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not failures
    return wrong


def test_no_client_gets_another_clients_answer(real_details, start_service):
    """200 victim requests and 40 attacks through productpage to the real
    details. (With details' own timing the stray answer mostly arrives
    before urllib3 checks the pooled connection again: see the next test
    for the window held open.)"""
    svc = start_service(
        WEB_CONCURRENCY="1", DETAILS_HOSTNAME="127.0.0.1", DETAILS_SERVICE_PORT=str(real_details)
    )
    assert run_victims_and_attacks(svc.port) == []


class LikeWebrick(RawServer):
    """A details stand-in that reads header lines as WEBrick 1.8.1 does, in
    pieces of at most 4096 bytes, so that a longer line ends the head early
    and its rest is read as the next request on the connection. It answers
    that "request" (405) 50 ms late, as a busy or Nagle-delayed details
    would: long enough for productpage to reuse the connection meanwhile."""

    BODY = (
        '{"id":%d,"author":"William Shakespeare","year":1595,"type":"paperback",'
        '"pages":200,"publisher":"PublisherA","language":"English",'
        '"ISBN-10":"1234567890","ISBN-13":"123-1234567890"}'
    )

    def __init__(self):
        self.split_heads = 0
        super().__init__()

    def handle(self, sock):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with sock, sock.makefile("rb") as reader:
            try:
                while True:
                    line = reader.readline(4096)
                    if not line:
                        return
                    while True:
                        header = reader.readline(4096)
                        if not header or header in (b"\r\n", b"\n"):
                            break
                        if not header.endswith(b"\n"):
                            self.split_heads += 1
                    match = re.fullmatch(rb"GET /details/(\d+) HTTP/1\.1\r\n", line)
                    if match:
                        status, body = b"200 OK", (self.BODY % int(match.group(1))).encode()
                    else:
                        time.sleep(0.05)
                        status, body = b"405 Method Not Allowed", b'{"error":"method not allowed"}'
                    sock.sendall(
                        b"HTTP/1.1 %s\r\nContent-Type: application/json\r\n"
                        b"Content-Length: %d\r\n\r\n%s" % (status, len(body), body)
                    )
            except OSError:
                return


def test_no_client_gets_another_clients_answer_when_the_stray_answer_is_late(start_service):
    details = LikeWebrick()
    try:
        svc = start_service(
            WEB_CONCURRENCY="1",
            DETAILS_HOSTNAME="127.0.0.1",
            DETAILS_SERVICE_PORT=str(details.port),
        )
        assert run_victims_and_attacks(svc.port) == []
        # No head ever reached details split: the long lines were not forwarded.
        assert details.split_heads == 0
    finally:
        details.close()
