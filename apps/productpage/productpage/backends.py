"""Calls to details, reviews and ratings as docs/contract.md (upstream Bookinfo)
has them: details and ratings one attempt, reviews two, 3 s each; a failure
gives the backend's status (500 without a response) and a fixed error."""

import json
import logging
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import gevent

from .config import Config
from .upstream import UpstreamError, get, pool

CALL_TIMEOUT_SECONDS = 3.0

DETAILS_ERROR = "Sorry, product details are currently unavailable for this book."
REVIEWS_ERROR = "Sorry, product reviews are currently unavailable for this book."
RATINGS_ERROR = "Sorry, product ratings are currently unavailable for this book."

# Forwarded, in the order given room: tracing and identity first, the large and
# least used last. end-user is not: it comes from the session only.
FORWARD_HEADERS = (
    *("x-request-id", "x-ot-span-context"),
    *("x-datadog-trace-id", "x-datadog-parent-id", "x-datadog-sampling-priority"),
    *("traceparent", "tracestate", "x-cloud-trace-context", "grpc-trace-bin"),
    *("x-b3-traceid", "x-b3-spanid", "x-b3-parentspanid", "x-b3-sampled", "x-b3-flags", "b3"),
    *("sw8", "authorization", "jwt", "user-agent", "cookie"),
)
_ENVIRON_KEYS = tuple(("HTTP_" + h.upper().replace("-", "_"), h, len(h)) for h in FORWARD_HEADERS)

# Name + value bytes, clear of details' 4096-byte lines (DESIGN.md, "Forwarded headers: bounded").
MAX_FORWARDED_FIELD = 4000
MAX_FORWARDED_TOTAL = 8000
# RFC 9110 5.5: field-value = *( VCHAR / obs-text / SP / HTAB ), no CR, LF, NUL.
_FIELD_VALUE = re.compile(rb"[\t\x20-\x7e\x80-\xff]*")

log = logging.getLogger(__name__)

Headers = dict[str, bytes]  # outbound name -> the value's bytes as they arrived


@dataclass
class Result:
    """A backend call's status, raw body when it worked, parsed JSON (or the
    error object), time on the wire (upstream.Reply.seconds, a failed attempt
    whole) and the last answer's Server-Timing."""

    status: int
    data: Any
    body: bytes | None = None
    seconds: float = 0.0
    server_timing: str | None = None

    @property
    def ok(self) -> bool:
        return self.body is not None


def outgoing_headers(environ: Mapping[str, Any], user: str | None) -> Headers:
    """Headers for every outbound call made while serving environ, as the
    bytes that arrived (WSGI decodes them as latin-1). Only well-formed values,
    within the bounds above: end-user first, then FORWARD_HEADERS in order; one
    that does not fit is dropped whole, and the ones after it get their turn."""
    headers = {}
    room = MAX_FORWARDED_TOTAL
    if user:
        value = user.encode("utf-8")
        if _FIELD_VALUE.fullmatch(value) and len(value) + 8 <= MAX_FORWARDED_FIELD:
            headers["end-user"] = value
            room -= len(value) + 8
    for key, name, name_len in _ENVIRON_KEYS:
        value = environ.get(key)
        if value is None:
            continue
        size = name_len + len(value)
        if size > MAX_FORWARDED_FIELD or size > room:
            continue
        try:
            raw = value.encode("latin-1")
        except UnicodeEncodeError:
            continue
        if _FIELD_VALUE.fullmatch(raw):
            headers[name] = raw
            room -= size
    return headers


class Backends:
    def __init__(self, config: Config, timeout: float = CALL_TIMEOUT_SECONDS):
        def backend(peer):
            return pool(
                peer.host,
                peer.port,
                keepalive=config.upstream_keepalive,
                max_requests=config.upstream_max_requests,
                nodelay=config.http_nodelay,
                timeout=timeout,
                max_idle=config.max_connections,
            )

        self.details_pool = backend(config.details)
        self.reviews_pool = backend(config.reviews)
        self.ratings_pool = backend(config.ratings)

    def details(self, product_id, headers: Headers) -> Result:
        return _call(self.details_pool, f"/details/{_quote(product_id)}", headers, 1, DETAILS_ERROR)

    def reviews(self, product_id, headers: Headers) -> Result:
        return _call(self.reviews_pool, f"/reviews/{_quote(product_id)}", headers, 2, REVIEWS_ERROR)

    def ratings(self, product_id, headers: Headers) -> Result:
        return _call(self.ratings_pool, f"/ratings/{_quote(product_id)}", headers, 1, RATINGS_ERROR)

    def details_and_reviews(self, product_id, headers: Headers) -> tuple[Result, Result]:
        """Both at once: details in a greenlet of its own, reviews in the caller's."""
        details = gevent.spawn(self.details, product_id, headers)
        reviews = self.reviews(product_id, headers)
        return details.get(), reviews


def _quote(product_id) -> str:
    return quote(str(product_id), safe="")


def _call(upstream, path: str, headers: Headers, attempts: int, error: str) -> Result:
    status, timing, waited = 500, None, 0.0
    for _ in range(attempts):
        started = time.perf_counter()
        try:
            reply = get(upstream, path, headers)
        except UpstreamError as err:
            log.debug("GET %s: %s", path, err)
            status, timing = 500, None
            waited += time.perf_counter() - started
            continue
        status, timing, waited = reply.status, reply.server_timing, waited + reply.seconds
        if status == 200:
            try:
                data = json.loads(reply.body)
            except ValueError:
                log.debug("GET %s:%s%s: body is not JSON", upstream.host, upstream.port, path)
                status = 500
            else:
                return Result(200, data, reply.body, waited, timing)
    return Result(status, {"error": error}, None, waited, timing)
