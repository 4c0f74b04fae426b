"""Request metrics and the access log, as a WSGI middleware. With
PROMETHEUS_MULTIPROC_DIR (__main__ sets it) each worker's values are in a file
there and /metrics sums them; without it (tests in one process), in memory."""

import os
import threading
import time
from urllib.parse import quote

from prometheus_client import CollectorRegistry, Counter, Histogram, disable_created_metrics
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector

from .config import SERVICE

BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)

# Where the Flask app leaves the matched route pattern for this middleware.
ROUTE_KEY = "productpage.route"
UNMATCHED = "unmatched"

# A scrape answers with a render at most this old: one render per worker and
# interval, whoever asks (DESIGN.md, "A crowd of scrapes").
MAX_RENDER_AGE_SECONDS = 1.0

disable_created_metrics()  # noise, and never exported in multiprocess mode

# Anything else is counted as OTHER, so made-up methods cannot add series.
_METHODS = frozenset(
    ("GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT")
)


class Metrics:
    def __init__(self):
        self.multiprocess = "PROMETHEUS_MULTIPROC_DIR" in os.environ
        # Own registry, so tests can build several apps in one process.
        self._registry = CollectorRegistry()
        self._requests = Counter(
            "http_requests_total",
            "HTTP requests served, by method, route pattern and status.",
            ("method", "route", "status"),
            registry=self._registry,
        )
        self._duration = Histogram(
            "http_request_duration_seconds",
            "Time to serve an HTTP request, by method, route pattern and status.",
            ("method", "route", "status"),
            buckets=BUCKETS,
            registry=self._registry,
        )
        self._children = {}
        # A threading lock is gevent's once the worker has patched the modules.
        self._render_lock = threading.Lock()
        self._rendered = (float("-inf"), b"")

    def observe(self, method: str, route: str, status: str, seconds: float):
        key = (method, route, status)
        if key not in self._children:
            self._children[key] = (self._requests.labels(*key), self._duration.labels(*key))
        requests, duration = self._children[key]
        requests.inc()
        duration.observe(seconds)

    def exposition(self):
        """(body, content type) in the Prometheus text format 0.0.4, rendered
        at most MAX_RENDER_AGE_SECONDS ago; one render at a time, the scrapes
        that arrive meanwhile get its result. Every answer shares one body."""
        if (body := self._fresh()) is None:
            with self._render_lock:
                if (body := self._fresh()) is None:
                    began = time.monotonic()
                    body = generate_latest(self._registry_to_render())
                    self._rendered = (began, body)
        return body, CONTENT_TYPE_PLAIN_0_0_4

    def _fresh(self):
        rendered_at, body = self._rendered
        return body if time.monotonic() - rendered_at < MAX_RENDER_AGE_SECONDS else None

    def _registry_to_render(self):
        if not self.multiprocess:
            return self._registry
        registry = CollectorRegistry()
        MultiProcessCollector(registry)
        return registry


def _rfc3339(now: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1000):03d}Z"


def _logged_path(environ) -> str:
    # Still percent-encoded: a decoded one could carry blanks or line breaks.
    raw = environ.get("RAW_URI") or quote(environ.get("PATH_INFO", ""), safe="/")
    return raw.split("?", 1)[0]


class Instrumented:
    """Wraps the app: one metrics sample per response, and the access-log line
    when ACCESS_LOG=true (written with one write() so workers never interleave)."""

    def __init__(self, app, metrics: Metrics, access_log: bool):
        self.app = app
        self.metrics = metrics
        self.access_log = access_log

    def __call__(self, environ, start_response):
        started = time.perf_counter()
        seen = []

        def recording_start_response(status, headers, exc_info=None):
            seen.append(status)
            return start_response(status, headers, exc_info)

        body = self.app(environ, recording_start_response)
        seconds = time.perf_counter() - started
        status = seen[-1][:3] if seen else "500"
        method = environ["REQUEST_METHOD"]
        route = environ.get(ROUTE_KEY, UNMATCHED)
        self.metrics.observe(method if method in _METHODS else "OTHER", route, status, seconds)
        if self.access_log:
            line = (
                f"{_rfc3339(time.time())} {SERVICE} {method} "
                f"{_logged_path(environ)} {status} {seconds * 1000:.3f}\n"
            )
            os.write(1, line.encode("latin-1", "replace"))
        return body
