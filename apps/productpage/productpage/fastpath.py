"""The common request, served without gunicorn's general HTTP machinery.

Nearly every request productpage serves under load has one shape: GET or
HEAD, HTTP/1.1 or 1.0, no body, a handful of ordinary header fields.
gunicorn reads each one through its general parser (request bodies, Expect,
h2c upgrade, proxy protocol, per-request configuration lookups) and writes
each response through a general Response object. Measured on the 2-CPU bench
machine, that costs about 0.2 ms of CPU per request, more than Flask and the
page template together (BENCHMARKS.md, "productpage").

This module serves exactly that shape: `parse_head` accepts a request head
only when it is plainly well-formed and has nothing gunicorn would treat
specially, and `respond` builds what gunicorn would have built (the same
WSGI environ keys, the same status line, Server, Date and Connection
headers). Anything else (a body, Expect, Upgrade, a proxy header that
changes the URL scheme, an underscore in a field name, an oversized or odd
head) returns None, and the worker hands the connection, with the bytes
already read put back in front, to gunicorn's own loop (workers.py).
"""

import io
import os
import re
import time
from typing import List, Optional, Tuple
from urllib.parse import unquote_to_bytes

from gunicorn import SERVER, SERVER_SOFTWARE
from gunicorn.http.wsgi import FileWrapper, WSGIErrorsWrapper

# gunicorn's defaults (limit_request_line, limit_request_fields,
# limit_request_field_size): a longer or larger head goes to gunicorn, which
# answers it with its own error.
MAX_REQUEST_LINE = 4094
MAX_FIELDS = 100
MAX_FIELD_LINE = 8190
# A head without its blank line after this many bytes is not the common
# shape either.
MAX_HEAD = MAX_REQUEST_LINE + MAX_FIELDS * MAX_FIELD_LINE

_METHODS = (b"GET", b"HEAD")
_VERSIONS = {b"HTTP/1.1": (1, 1), b"HTTP/1.0": (1, 0)}
# RFC 9110 token characters, minus "_": gunicorn drops or rewrites fields
# with underscores (a WSGI environ cannot tell X_Foo from X-Foo).
_FIELD_NAME = re.compile(rb"[!#$%&'*+\-.^`|~0-9A-Za-z]+\Z")
# Visible ASCII only in the request target; "#" never belongs in one.
_TARGET = re.compile(rb"/[!\x24-\x7e]*\Z")
# Field values: visible ASCII, obs-text, space and tab.
_FIELD_VALUE = re.compile(rb"[\t\x20-\x7e\x80-\xff]*\Z")
# Fields whose handling gunicorn owns: request bodies and their framing,
# interim responses, protocol switches, and the proxy headers it trusts from
# loopback peers to set wsgi.url_scheme (secure_scheme_headers).
_GUNICORN_FIELDS = frozenset((
    b"CONTENT-LENGTH", b"TRANSFER-ENCODING", b"EXPECT", b"UPGRADE", b"HTTP2-SETTINGS",
    b"TE", b"X-FORWARDED-PROTO", b"X-FORWARDED-PROTOCOL", b"X-FORWARDED-SSL", b"FORWARDED",
))

_EMPTY = b""


class Request:
    """A parsed request head. `must_close` is set by a draining worker while
    the request is served (workers.py), as on gunicorn's requests."""

    __slots__ = ("method", "target", "version", "fields", "must_close", "wants_close")

    def __init__(self, method: str, target: str, version: Tuple[int, int],
                 fields: List[Tuple[str, str]], wants_close: bool):
        self.method = method
        self.target = target
        self.version = version
        self.fields = fields
        self.must_close = False
        self.wants_close = wants_close


def parse_head(head: bytes) -> Optional[Request]:
    """The request in `head` (without its final blank line), or None when it
    is not the common shape and gunicorn should read it."""
    lines = head.split(b"\r\n")
    line = lines[0]
    if len(line) > MAX_REQUEST_LINE or len(lines) - 1 > MAX_FIELDS:
        return None
    parts = line.split(b" ")
    if len(parts) != 3:
        return None
    method, target, version = parts
    if method not in _METHODS or version not in _VERSIONS:
        return None
    if target.startswith(b"//") or not _TARGET.match(target):
        return None
    fields = []
    connection = []
    for line in lines[1:]:
        if len(line) > MAX_FIELD_LINE:
            return None
        name, sep, value = line.partition(b":")
        if not sep or not _FIELD_NAME.match(name):
            # No colon, whitespace before it, a folded line, an underscore.
            return None
        value = value.strip(b" \t")
        if not _FIELD_VALUE.match(value):
            return None
        name = name.upper()
        if name in _GUNICORN_FIELDS:
            return None
        if name == b"CONNECTION":
            connection.extend(t.strip().lower() for t in value.split(b","))
        fields.append((name.decode("ascii"), value.decode("latin-1")))
    version_tuple = _VERSIONS[version]
    if version_tuple == (1, 1):
        wants_close = b"close" in connection
    else:
        wants_close = b"keep-alive" not in connection or b"close" in connection
    return Request(method.decode("ascii"), target.decode("ascii"), version_tuple, fields,
                   wants_close)


class _DateCache:
    """The Date header value, formatted once per second."""

    def __init__(self):
        self._second = -1
        self._value = ""

    def __call__(self) -> str:
        now = int(time.time())
        if now != self._second:
            self._value = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(now))
            self._second = now
        return self._value


class ResponseError(Exception):
    """The application's status or headers cannot be sent as they are."""


_BAD_HEADER_TEXT = re.compile(r"[\r\n\0]")
_HOP_BY_HOP = frozenset(("connection", "keep-alive", "proxy-authenticate", "proxy-authorization",
                         "te", "trailer", "transfer-encoding", "upgrade"))
_NO_BODY_STATUS = ("1", "204", "304")


class Responder:
    """Calls the WSGI app for fast-path requests and serializes its answer."""

    def __init__(self, app, cfg, one_write: bool):
        self.app = app
        self.one_write = one_write
        self.keepalive = cfg.keepalive > 0
        self.date = _DateCache()
        self.script_name = os.environ.get("SCRIPT_NAME", "")
        # What gunicorn puts in every environ (wsgi.base_environ), plus
        # wsgi.multithread as its async workers set it.
        self.base = {
            "wsgi.errors": WSGIErrorsWrapper(cfg),
            "wsgi.version": (1, 0),
            "wsgi.multithread": True,
            "wsgi.multiprocess": cfg.workers > 1,
            "wsgi.run_once": False,
            "wsgi.file_wrapper": FileWrapper,
            "wsgi.input_terminated": True,
            "SERVER_SOFTWARE": SERVER_SOFTWARE,
            "wsgi.url_scheme": "http",
            "SCRIPT_NAME": self.script_name,
        }

    def environ(self, req: Request, sock, client, server) -> Optional[dict]:
        path, _, query = req.target.partition("?")
        if self.script_name and not path.startswith(self.script_name):
            return None
        env = self.base.copy()
        env["wsgi.input"] = io.BytesIO(_EMPTY)
        env["gunicorn.socket"] = sock
        env["REQUEST_METHOD"] = req.method
        env["QUERY_STRING"] = query
        env["RAW_URI"] = req.target
        env["SERVER_PROTOCOL"] = "HTTP/%d.%d" % req.version
        repeated = None
        for name, value in req.fields:
            key = "HTTP_" + name.replace("-", "_")
            if key in env:
                if repeated is None:
                    repeated = {}
                repeated.setdefault(key, [env[key]]).append(value)
            else:
                env[key] = value
        if repeated:
            for key, values in repeated.items():
                env[key] = ",".join(values)
        if isinstance(client, tuple):
            env["REMOTE_ADDR"] = client[0]
            env["REMOTE_PORT"] = str(client[1])
        else:
            env["REMOTE_ADDR"] = client.decode() if isinstance(client, bytes) else client
        env["SERVER_NAME"] = str(server[0])
        env["SERVER_PORT"] = str(server[1])
        env["PATH_INFO"] = unquote_to_bytes(path[len(self.script_name):]).decode("latin-1")
        return env

    def __call__(self, req: Request, env: dict, closing: bool) -> Tuple[List[bytes], bool]:
        """Run the app; return the bytes to send (head and body as separate
        items) and whether the connection closes after them."""
        state = []

        def start_response(status, headers, exc_info=None):
            if exc_info is not None and state and state[-1][2]:
                raise exc_info[1].with_traceback(exc_info[2])
            state.append([status, headers, False])
            return body.append

        body: List[bytes] = []
        result = self.app(env, start_response)
        try:
            for chunk in result:
                if chunk:
                    body.append(chunk)
        finally:
            close = getattr(result, "close", None)
            if close is not None:
                close()
        if not state:
            raise ResponseError("the application did not call start_response")
        status, headers, _ = state[-1]
        return self._serialize(req, status, headers, body, closing)

    def _serialize(self, req: Request, status: str, headers, body: List[bytes],
                   closing: bool) -> Tuple[List[bytes], bool]:
        if _BAD_HEADER_TEXT.search(status) or not status[:3].isdigit():
            raise ResponseError(f"bad status {status!r}")
        close = closing or not self.keepalive or req.wants_close or req.must_close
        length = None
        lines = []
        for name, value in headers:
            if _BAD_HEADER_TEXT.search(name) or _BAD_HEADER_TEXT.search(value):
                raise ResponseError(f"bad header {name!r}")
            lname = name.lower()
            if lname in _HOP_BY_HOP:
                if lname == "connection" and "close" in value.lower():
                    close = True
                continue
            if lname == "content-length":
                length = value
            lines.append(f"{name}: {value}\r\n")
        no_body = req.method == "HEAD" or status.startswith(_NO_BODY_STATUS)
        payload = _EMPTY.join(body) if len(body) != 1 else body[0]
        if no_body:
            payload = _EMPTY
        elif length is None:
            lines.append(f"Content-Length: {len(payload)}\r\n")
        head = (f"HTTP/{req.version[0]}.{req.version[1]} {status}\r\n"
                f"Server: {SERVER}\r\nDate: {self.date()}\r\n"
                f"Connection: {'close' if close else 'keep-alive'}\r\n"
                + "".join(lines) + "\r\n").encode("latin-1")
        if self.one_write or not payload:
            return [head + payload], close
        return [head, payload], close
