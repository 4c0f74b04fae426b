"""The W3C Server-Timing header (docs/contract.md, "Server-Timing"): productpage's own time
(`app`, from the request's first byte to start_response), its wait for
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
    """WSGI middleware, wrapped around every other: the header on every answer."""

    def timed_app(environ, start_response):
        start = environ.get("productpage.request_began") or time.perf_counter()  # serving/worker.py
        metrics = environ[ENVIRON_KEY] = []

        def timed_start_response(status, headers, exc_info=None):
            value = ", ".join([metric("app", time.perf_counter() - start), *metrics])
            return start_response(status, [*headers, ("Server-Timing", value)], exc_info)

        return wsgi_app(environ, timed_start_response)

    return timed_app
