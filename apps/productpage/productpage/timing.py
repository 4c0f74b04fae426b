"""The W3C Server-Timing header (docs/contract.md, "Server-Timing"):
productpage's own time (`app`, from Flask's first before_request to its
after_request), its wait for each backend, and what each backend reported
about itself, prefixed with its name."""

import re
import time

from flask import Flask, g

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


def record(name: str, result: Result) -> None:
    """Adds one backend call of this request: the wait, then what it reported."""
    metrics = g.get("server_timing")
    if metrics is not None:
        metrics.append(metric(name, result.seconds))
        metrics.extend(forwarded(name, result.server_timing))


def install(app: Flask) -> None:
    """Registers the hooks; call before any other before_request, so that the
    clock also runs for a request another hook refuses."""

    @app.before_request
    def start_clock():
        g.server_timing_start = time.perf_counter()
        g.server_timing = []

    @app.after_request
    def add_header(response):
        start = g.get("server_timing_start")
        if start is not None:
            app_time = metric("app", time.perf_counter() - start)
            response.headers["Server-Timing"] = ", ".join([app_time, *g.server_timing])
        return response
