"""The W3C Server-Timing header (docs/contract.md, "Server-Timing"): productpage's own time
(`app`, from the request's first byte to its head handed to the server), its wait for
each backend, and what each backend reported about itself, prefixed with its name."""

import re
import time

from flask import request

from .backends import Result

# What is carried up from a backend is bounded, so that a backend cannot
# make productpage's header grow without limit.
MAX_FORWARDED = 16
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}")
_DUR = re.compile(r"\s*dur\s*=\s*\"?([0-9]+(?:\.[0-9]+)?)\"?\s*")


def metric(name: str, seconds: float) -> str:
    return f"{name};dur={seconds * 1000:.3f}"


def forwarded(prefix: str, header: str | None) -> list[str]:
    """A backend's Server-Timing metrics with prefix. before each name; only
    metrics with a name and a dur are kept, and only name and dur of them."""
    out = []
    for entry in (header or "").split(","):
        name, _, params = entry.strip().partition(";")
        if not _TOKEN.fullmatch(name):
            continue
        for param in params.split(";"):
            match = _DUR.fullmatch(param)
            if match:
                out.append(f"{prefix}.{name};dur={match.group(1)}")
                break
        if len(out) == MAX_FORWARDED:
            break
    return out


# Where timed() keeps this request's backend metrics in the WSGI environ.
ENVIRON_KEY = "productpage.server_timing"


def record(name: str, result: Result) -> None:
    """Adds one backend call of this request: the wait, then what it reported."""
    metrics = request.environ.get(ENVIRON_KEY)
    if metrics is not None:
        metrics.append(metric(name, result.seconds))
        metrics.extend(forwarded(name, result.server_timing))


def timed(wsgi_app):
    """WSGI middleware, wrapped around every other: the header on every answer. The server's
    start_response is called with the first body chunk, as PEP 3333 allows, so that `app` also
    covers what Flask and the other middlewares do after the application's start_response."""

    def timed_app(environ, start_response):
        start = environ.get("productpage.request_began") or time.perf_counter()  # serving/worker.py
        metrics = environ[ENVIRON_KEY] = []
        head, sent = [], []

        def timed_start_response(status, headers, exc_info=None):
            head[:] = [status, headers, exc_info]
            return lambda data: send_head()(data)  # the server's write(), for an app that uses it

        def send_head():
            if not sent:
                status, headers, exc_info = head
                value = ", ".join([metric("app", time.perf_counter() - start), *metrics])
                sent.append(start_response(status, [*headers, ("Server-Timing", value)], exc_info))
            return sent[0]

        return _head_with_first_chunk(wsgi_app(environ, timed_start_response), send_head)

    return timed_app


def _head_with_first_chunk(body, send_head):
    """The body, the head handed to the server before its first chunk (at its end if it has none)."""
    try:
        for chunk in body:
            send_head()
            yield chunk
        send_head()
    finally:
        if hasattr(body, "close"):
            body.close()
