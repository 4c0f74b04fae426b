"""How many TCP segments one response takes on a real socket (DESIGN.md,
"Writes per response"): stock gunicorn sends the head, then the body."""

import socket
import struct
import sys

import pytest

# struct tcp_info (linux/tcp.h): __u32 tcpi_data_segs_in at byte 152,
# segments received that carried data.
TCP_INFO_DATA_SEGS_IN = 152


def data_segments_in(sock) -> int:
    info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 256)
    return struct.unpack_from("I", info, TCP_INFO_DATA_SEGS_IN)[0]


def read_response(sock) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, body = data.split(b"\r\n\r\n", 1)
    length = int(
        next(
            line.split(b":", 1)[1]
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
    )
    while len(body) < length:
        body += sock.recv(65536)
    return head


def segments_per_response(svc, path: str) -> int:
    with socket.create_connection(("127.0.0.1", svc.port), timeout=5) as sock:
        request = f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode()
        counts = []
        for _ in range(6):
            before = data_segments_in(sock)
            sock.sendall(request)
            assert read_response(sock).startswith(b"HTTP/1.1 200 ")
            counts.append(data_segments_in(sock) - before)
        # A retransmission (a tail-loss probe while the client delays its
        # ACK, on a busy machine) only ever adds a segment: the fewest seen
        # is what the server wrote.
        return min(counts)


@pytest.mark.skipif(sys.platform != "linux", reason="TCP_INFO layout is Linux's")
@pytest.mark.parametrize("nodelay", ["true", "false"])
def test_two_segments_per_response_head_then_body(start_service, backends, nodelay):
    svc = start_service(HTTP_NODELAY=nodelay)
    assert segments_per_response(svc, "/health") == 2
    assert segments_per_response(svc, "/productpage") == 2
