"""OneWriteResponse: with HTTP_NODELAY=true the response head leaves with the
body in one send(); nothing is ever left unsent (workers.py)."""

from gunicorn.config import Config
from gunicorn.http.message import Request
from gunicorn.http.unreader import IterUnreader

from productpage.workers import OneWriteResponse


class Sock:
    def __init__(self):
        self.sends = []

    def sendall(self, data):
        self.sends.append(bytes(data))


def response(method="GET", headers=(("Content-Length", "5"),)):
    cfg = Config()
    raw = f"{method} /x HTTP/1.1\r\nHost: a\r\n\r\n".encode()
    req = Request(cfg, IterUnreader([raw]), ("127.0.0.1", 1))
    sock = Sock()
    resp = OneWriteResponse(req, sock, cfg)
    resp.start_response("200 OK", list(headers) + [("Content-Type", "text/plain")])
    return resp, sock


def test_head_and_body_in_one_send():
    resp, sock = response()
    resp.write(b"hello")
    resp.close()
    assert len(sock.sends) == 1
    head, body = sock.sends[0].split(b"\r\n\r\n", 1)
    assert head.startswith(b"HTTP/1.1 200 OK\r\n") and b"Content-Length: 5" in head
    assert body == b"hello"


def test_later_writes_go_out_as_they_come():
    resp, sock = response(headers=(("Content-Length", "10"),))
    resp.write(b"hello")
    resp.write(b"world")
    resp.close()
    assert len(sock.sends) == 2 and sock.sends[1] == b"world"
    assert sock.sends[0].endswith(b"\r\n\r\nhello")


def test_head_request_sends_the_head_alone():
    resp, sock = response("HEAD")
    resp.write(b"hello")
    resp.close()
    assert len(sock.sends) == 1 and sock.sends[0].endswith(b"\r\n\r\n")


def test_empty_body_and_no_write_still_send_the_head():
    for writes in ([], [b""]):
        resp, sock = response(headers=(("Content-Length", "0"),))
        for w in writes:
            resp.write(w)
        resp.close()
        assert b"".join(sock.sends).endswith(b"\r\n\r\n")
        assert b"".join(sock.sends).count(b"HTTP/1.1 200 OK") == 1


def test_chunked_body_keeps_its_framing():
    resp, sock = response(headers=())
    resp.write(b"hello")
    resp.close()
    wire = b"".join(sock.sends)
    head, body = wire.split(b"\r\n\r\n", 1)
    assert b"Transfer-Encoding: chunked" in head
    assert body == b"5\r\nhello\r\n0\r\n\r\n"
