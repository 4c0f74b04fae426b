"""The calls productpage makes to details, reviews and ratings.

Attempts, timeouts and error texts are the contract's (upstream Bookinfo):
details and ratings one attempt, reviews two, 3 s each; a failed call yields
the backend's status (500 when there was no response) and a fixed error.
"""

import json
import logging
from dataclasses import dataclass
from typing import Any, Callable, Iterable, List, Mapping, Optional, Tuple
from urllib.parse import quote

from .config import Config
from .upstream import Upstream, UpstreamError

CALL_TIMEOUT_SECONDS = 3.0

DETAILS_ERROR = "Sorry, product details are currently unavailable for this book."
REVIEWS_ERROR = "Sorry, product reviews are currently unavailable for this book."
RATINGS_ERROR = "Sorry, product ratings are currently unavailable for this book."

# Tracing and identity headers forwarded from the incoming request. end-user is
# deliberately absent: it is set from the session only (see outgoing_headers).
FORWARD_HEADERS = (
    "x-request-id", "x-ot-span-context", "x-datadog-trace-id", "x-datadog-parent-id",
    "x-datadog-sampling-priority", "traceparent", "tracestate", "x-cloud-trace-context",
    "grpc-trace-bin", "x-b3-traceid", "x-b3-spanid", "x-b3-parentspanid", "x-b3-sampled",
    "x-b3-flags", "b3", "sw8", "user-agent", "cookie", "authorization", "jwt",
)
_ENVIRON_KEYS = tuple(("HTTP_" + h.upper().replace("-", "_"), h) for h in FORWARD_HEADERS)

log = logging.getLogger(__name__)


@dataclass
class Result:
    """What a backend call produced: status, the raw body when it worked, and
    the parsed JSON (the backend's on success, the error object otherwise)."""
    status: int
    data: Any
    body: Optional[bytes] = None

    @property
    def ok(self) -> bool:
        return self.body is not None


def outgoing_headers(environ: Mapping[str, Any], user: Optional[str]) -> List[Tuple[str, bytes]]:
    """Headers for every outbound call made while serving environ.

    WSGI hands header values over as latin-1 decoded str, so they are encoded
    back to the bytes that arrived.
    """
    headers = []
    for key, name in _ENVIRON_KEYS:
        value = environ.get(key)
        if value is not None:
            headers.append((name, value.encode("latin-1")))
    if user:
        value = user.encode("utf-8")
        # A user name cannot smuggle a header line into the outbound request.
        if not any(c in value for c in b"\r\n\0"):
            headers.append(("end-user", value))
    return headers


class Backends:
    def __init__(self, config: Config, timeout: float = CALL_TIMEOUT_SECONDS):
        def pool(peer):
            return Upstream(peer.host, peer.port, keepalive=config.upstream_keepalive,
                            max_requests=config.upstream_max_requests,
                            nodelay=config.http_nodelay, timeout=timeout)
        self.details_pool = pool(config.details)
        self.reviews_pool = pool(config.reviews)
        self.ratings_pool = pool(config.ratings)

    def details(self, product_id, headers: Iterable[Tuple[str, bytes]]) -> Result:
        return self.start_details(product_id, headers)()

    def reviews(self, product_id, headers: Iterable[Tuple[str, bytes]]) -> Result:
        return self.start_reviews(product_id, headers)()

    def ratings(self, product_id, headers: Iterable[Tuple[str, bytes]]) -> Result:
        return _start(self.ratings_pool, f"/ratings/{_quote(product_id)}", headers, 1, RATINGS_ERROR)()

    # start_*: send the call's first attempt now, return a function that
    # finishes the call (reads the reply, makes the other attempts). Calls
    # started one after the other before either is finished run side by
    # side: the product page sends details and reviews, then reads both.

    def start_details(self, product_id, headers) -> Callable[[], Result]:
        return _start(self.details_pool, f"/details/{_quote(product_id)}", headers, 1, DETAILS_ERROR)

    def start_reviews(self, product_id, headers) -> Callable[[], Result]:
        return _start(self.reviews_pool, f"/reviews/{_quote(product_id)}", headers, 2, REVIEWS_ERROR)


def _quote(product_id) -> str:
    return quote(str(product_id), safe="")


def _start(pool: Upstream, path: str, headers, attempts: int, error: str) -> Callable[[], Result]:
    first = pool.start(path, headers)

    def finish() -> Result:
        status = 500
        for attempt in range(attempts):
            try:
                reply = first() if attempt == 0 else pool.get(path, headers)
            except UpstreamError as err:
                log.debug("GET %s: %s", path, err)
                status = 500
                continue
            status = reply.status
            if status == 200:
                try:
                    return Result(200, json.loads(reply.body), reply.body)
                except ValueError:
                    log.debug("GET %s:%s%s: body is not JSON", pool.host, pool.port, path)
                    status = 500
        return Result(status, {"error": error})

    return finish
