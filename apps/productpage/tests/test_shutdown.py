"""SIGTERM/SIGINT: finish in-flight requests, close idle keep-alive
connections, exit 0 within SHUTDOWN_TIMEOUT_SECONDS."""

import collections
import http.client
import json
import os
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from fakes import DETAILS
from productpage.serving.worker import DRAIN_QUIET_SECONDS
from service import SERVE, base_env, free_port


def in_flight(svc, path):
    """Start GET path in a thread; returns a dict filled in when it finishes."""
    result = {}

    def run():
        try:
            conn = svc.connection(timeout=15)
            conn.request("GET", path)
            response = conn.getresponse()
            result.update(
                status=response.status,
                body=response.read(),
                connection=response.headers["Connection"],
            )
        except OSError as err:
            result.update(error=err)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, result


def read_to_close(sock) -> bytes:
    """Everything the server sends until it closes; a reset raises
    ConnectionResetError."""
    reply = b""
    while data := sock.recv(65536):
        reply += data
    return reply


def assert_served_then_closed(reply):
    head = reply.split(b"\r\n\r\n", 1)[0].lower()
    assert head.startswith(b"http/1.1 200"), reply
    assert b"connection: close" in head, reply


def wait_for(predicate, timeout=5.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.001)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_drains_then_exits_0(start_service, backends, sig):
    svc = start_service(WEB_CONCURRENCY="2", SHUTDOWN_TIMEOUT_SECONDS="8")
    backends.details.answer("/details/0", body=DETAILS, delay=1.5)

    idle = svc.connection()
    idle.request("GET", "/health")
    idle.getresponse().read()

    thread, result = in_flight(svc, "/api/v1/products/0")
    wait_for(lambda: backends.details.seen())

    signalled = time.monotonic()
    svc.signal(sig)

    # The idle kept-alive connection is closed once quiet for
    # DRAIN_QUIET_SECONDS, not after 60 s.
    idle.sock.settimeout(5)
    assert idle.sock.recv(1) == b""
    assert time.monotonic() - signalled < DRAIN_QUIET_SECONDS + 1.0

    thread.join(10)
    assert result.get("status") == 200, result
    assert json.loads(result["body"]) == DETAILS
    assert result["connection"] == "close"

    assert svc.proc.wait(8) == 0
    assert 1.0 < time.monotonic() - signalled < 4.0, svc.stderr()


def test_shutdown_timeout_bounds_the_drain(start_service, backends):
    svc = start_service(SHUTDOWN_TIMEOUT_SECONDS="1")
    backends.details.answer("/details/0", body=DETAILS, delay=2.8)
    thread, result = in_flight(svc, "/api/v1/products/0")
    wait_for(lambda: backends.details.seen())

    signalled = time.monotonic()
    svc.signal(signal.SIGTERM)
    assert svc.proc.wait(10) == 1, "a drain cut short must not exit 0"
    assert time.monotonic() - signalled < 2.5
    thread.join(10)
    assert "status" not in result, "the request outlived the shutdown timeout"


def test_sigterm_while_workers_boot_is_not_lost():
    """A worker inherits the master's handlers at fork; a SIGTERM it gets
    before setting its own must still stop it (else: wait for the timeout)."""
    svc_env = base_env(
        {
            "PORT": str(free_port()),
            "LISTEN_ADDRESS": "127.0.0.1",
            "WEB_CONCURRENCY": "2",
            "SHUTDOWN_TIMEOUT_SECONDS": "10",
        }
    )
    proc = subprocess.Popen(
        [str(SERVE)], env=svc_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
    wait_for(lambda: children.exists() and len(children.read_text().split()) == 2, timeout=20)
    signalled = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(15) == 0
    assert time.monotonic() - signalled < 3.0


def test_connection_without_a_request_yet_is_served_not_reset(start_service, backends):
    """A client that connected just before the signal and sends its request
    just after gets an answer (with Connection: close), not a reset; one
    that never sends does not hold the drain up."""
    svc = start_service(WEB_CONCURRENCY="2", SHUTDOWN_TIMEOUT_SECONDS="8")
    backends.details.answer("/details/0", body=DETAILS, delay=1.5)
    thread, result = in_flight(svc, "/api/v1/products/0")
    wait_for(lambda: backends.details.seen())
    # Several, so that both workers hold some.
    late = [socket.create_connection(("127.0.0.1", svc.port), timeout=5) for _ in range(4)]
    silent = socket.create_connection(("127.0.0.1", svc.port), timeout=5)
    time.sleep(0.2)  # accepted by now

    signalled = time.monotonic()
    svc.signal(signal.SIGTERM)
    time.sleep(0.3)
    for sock in late:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
    for sock in late:
        assert_served_then_closed(read_to_close(sock))
        sock.close()

    assert silent.recv(1) == b""
    silent.close()
    thread.join(10)
    assert result.get("status") == 200, result
    assert svc.proc.wait(8) == 0
    assert time.monotonic() - signalled < 4.0, svc.stderr()


def test_stop_sent_to_the_process_group_resets_no_new_connection(start_service, backends):
    """Ctrl-C in a terminal, or a kill of the process group, signals the
    master and the workers at once. A worker keeps taking connections until
    the master has closed its copy of the shared listening socket: a
    connection made in between is answered, not reset when the master's copy,
    the last one, closes with the connection still queued on it."""
    svc = start_service(WEB_CONCURRENCY="2", SHUTDOWN_TIMEOUT_SECONDS="8")
    master = svc.proc.pid
    children = Path(f"/proc/{master}/task/{master}/children")
    wait_for(lambda: len(children.read_text().split()) == 2, timeout=20)
    workers = [int(pid) for pid in children.read_text().split()]

    # The master is slow to act on its share of the signal (here: stopped).
    os.kill(master, signal.SIGSTOP)
    try:
        for pid in workers:
            os.kill(pid, signal.SIGTERM)
        time.sleep(0.2)  # both workers are draining by now
        sock = socket.create_connection(("127.0.0.1", svc.port), timeout=5)
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        reply = read_to_close(sock)
        sock.close()
    finally:
        os.kill(master, signal.SIGTERM)
        os.kill(master, signal.SIGCONT)
    assert_served_then_closed(reply)
    assert svc.proc.wait(8) == 0, svc.stderr()


@pytest.mark.parametrize("warm", [False, True], ids=["fresh", "warm"])
def test_drain_under_load_fails_no_request(start_service, backends, warm):
    """Keep-alive clients sending all along, through a SIGTERM: a request
    sent on a connection the drain ended under it would fail (a reset, or a
    close without an answer); none does, on a server just started or one
    warmed by seconds of load. The drain answers it with Connection: close."""
    svc = start_service(WEB_CONCURRENCY="2")
    served, failures = collections.Counter(), []
    stop = threading.Event()

    def client():
        conn = None
        while not stop.is_set():
            reused = conn is not None
            try:
                conn = conn or svc.connection(timeout=5)
                conn.request("GET", "/productpage")
                response = conn.getresponse()
                response.read()
                served[response.status] += 1
                if response.will_close:
                    conn.close()
                    conn = None
            except ConnectionRefusedError:  # the listener has closed: no request was sent
                conn = None
            except (OSError, http.client.HTTPException) as err:
                failures.append(f"{err!r} on a {'reused' if reused else 'new'} connection")
                conn = None
            time.sleep(0.02)

    threads = [threading.Thread(target=client) for _ in range(10)]
    for thread in threads:
        thread.start()
    try:
        time.sleep(3.0 if warm else 0.5)
        svc.signal(signal.SIGTERM)
        assert svc.proc.wait(10) == 0, svc.stderr()
    finally:
        stop.set()
        for thread in threads:
            thread.join(10)
    assert served[200] >= 50, served
    assert failures == []
