"""A minimal HTTP/1.1 client connection: GET only, responses read whole.

http.client costs about 60 us of CPU per call (header validation, the
email-package header parser, buffered file objects); this costs about a
fifth of that, and the product page makes two calls per view. It
understands what a backend or a mesh proxy may answer: Content-Length,
chunked transfer coding, or a body delimited by close, 1xx interim
responses, and HTTP/1.0 peers.
"""

import socket
import time
from typing import Iterable, Optional, Tuple

MAX_HEAD = 64 * 1024
MAX_BODY = 8 * 1024 * 1024
_RECV = 65536


class ProtocolError(Exception):
    """The peer answered something that is not an HTTP/1.x response."""


class PeerClosed(ConnectionError):
    """The peer closed the connection before the first byte of a response."""


class Connection:
    """One TCP connection to host:port; `uses` counts requests sent on it."""

    def __init__(self, host: str, port: int, nodelay: bool, timeout: float):
        self.host = host
        self.port = port
        self.nodelay = nodelay
        self.timeout = timeout
        self.host_header = (f"[{host}]:{port}" if ":" in host else f"{host}:{port}").encode("ascii")
        self.sock: Optional[socket.socket] = None
        self.uses = 0
        self._deadline = 0.0

    def close(self):
        if self.sock is not None:
            self.sock.close()
            self.sock = None

    def get(self, path: str, headers: Iterable[Tuple[str, bytes]],
            close: bool) -> Tuple[int, bytes, bool]:
        """Send GET path, return (status, body, reusable).

        The whole exchange, connect included, must finish within `timeout`
        seconds: the contract's per-call timeout, not a per-read one.
        """
        self.send(path, headers, close)
        return self.receive(close)

    def send(self, path: str, headers: Iterable[Tuple[str, bytes]], close: bool):
        """The first half of get(): connect if needed and send the request.
        The timeout counts from here."""
        self._deadline = time.monotonic() + self.timeout
        if self.sock is None:
            self.sock = socket.create_connection((self.host, self.port), timeout=self.timeout)
            # Set both ways: HTTP_NODELAY=false must really leave Nagle on.
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1 if self.nodelay else 0)
        lines = [b"GET ", path.encode("ascii"), b" HTTP/1.1\r\nHost: ", self.host_header, b"\r\n"]
        for name, value in headers:
            lines += (name.encode("ascii"), b": ", value, b"\r\n")
        if close:
            lines.append(b"Connection: close\r\n")
        lines.append(b"\r\n")
        self.uses += 1
        self._settimeout()
        self.sock.sendall(b"".join(lines))

    def receive(self, close: bool) -> Tuple[int, bytes, bool]:
        """The second half of get(): read the response to the request sent."""
        return self._read_response(close)

    def _settimeout(self):
        remaining = self._deadline - time.monotonic()
        if remaining <= 0:
            raise socket.timeout("timed out")
        self.sock.settimeout(remaining)

    def _recv(self) -> bytes:
        self._settimeout()
        return self.sock.recv(_RECV)

    def _read_response(self, close: bool) -> Tuple[int, bytes, bool]:
        buf = b""
        first = True
        while True:
            end = buf.find(b"\r\n\r\n")
            while end < 0:
                if len(buf) > MAX_HEAD:
                    raise ProtocolError("response head too large")
                data = self._recv()
                if not data:
                    if first and not buf:
                        raise PeerClosed("connection closed before a response")
                    raise ProtocolError("connection closed inside the response head")
                buf += data
                end = buf.find(b"\r\n\r\n")
            first = False
            head, buf = buf[:end], buf[end + 4:]
            status, version, fields = _parse_head(head)
            if 100 <= status < 200 and status != 101:
                continue
            break

        keep = version == b"HTTP/1.1" and not close
        connection = fields.get(b"connection", b"").lower()
        if b"close" in connection:
            keep = False
        elif version == b"HTTP/1.0" and b"keep-alive" in connection:
            keep = not close

        if status in (204, 304):
            body = b""
        elif b"chunked" in fields.get(b"transfer-encoding", b"").lower():
            body, buf = self._read_chunked(buf)
        elif b"content-length" in fields:
            try:
                length = int(fields[b"content-length"])
            except ValueError:
                raise ProtocolError("bad Content-Length") from None
            if length < 0 or length > MAX_BODY:
                raise ProtocolError("bad Content-Length")
            while len(buf) < length:
                data = self._recv()
                if not data:
                    raise ProtocolError("connection closed inside the body")
                buf += data
            body, buf = buf[:length], buf[length:]
        else:
            keep = False
            while True:
                data = self._recv()
                if not data:
                    break
                buf += data
                if len(buf) > MAX_BODY:
                    raise ProtocolError("body too large")
            body, buf = buf, b""
        if buf:
            # Bytes after the response we did not ask for: do not reuse.
            keep = False
        return status, body, keep

    def _read_chunked(self, buf: bytes) -> Tuple[bytes, bytes]:
        parts = []
        size_total = 0
        while True:
            end = buf.find(b"\r\n")
            while end < 0:
                buf = self._more(buf)
                end = buf.find(b"\r\n")
            try:
                size = int(buf[:end].split(b";", 1)[0].strip(), 16)
            except ValueError:
                raise ProtocolError("bad chunk size") from None
            buf = buf[end + 2:]
            if size == 0:
                # Trailer fields, if any, end with an empty line.
                while True:
                    end = buf.find(b"\r\n")
                    while end < 0:
                        buf = self._more(buf)
                        end = buf.find(b"\r\n")
                    line, buf = buf[:end], buf[end + 2:]
                    if not line:
                        return b"".join(parts), buf
            size_total += size
            if size_total > MAX_BODY:
                raise ProtocolError("body too large")
            while len(buf) < size + 2:
                buf = self._more(buf)
            parts.append(buf[:size])
            buf = buf[size + 2:]

    def _more(self, buf: bytes) -> bytes:
        data = self._recv()
        if not data:
            raise ProtocolError("connection closed inside a chunked body")
        if len(buf) > MAX_HEAD + MAX_BODY:
            raise ProtocolError("response too large")
        return buf + data


def _parse_head(head: bytes):
    lines = head.split(b"\r\n")
    parts = lines[0].split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit():
        raise ProtocolError(f"bad status line {lines[0][:80]!r}")
    fields = {}
    for line in lines[1:]:
        name, sep, value = line.partition(b":")
        if not sep:
            raise ProtocolError(f"bad header line {line[:80]!r}")
        name = name.strip().lower()
        value = value.strip()
        if name in fields:
            fields[name] += b", " + value
        else:
            fields[name] = value
    return int(parts[1]), parts[0], fields
