"""The Flask application: the productpage routes of docs/contract.md."""

import json
import re
from contextlib import suppress
from urllib.parse import urlsplit

import gevent
from flask import Flask, Response, redirect, render_template, request, session
from werkzeug.exceptions import HTTPException, MethodNotAllowed, NotFound, RequestEntityTooLarge
from werkzeug.routing import RoutingException

from . import timing
from .backends import Backends, Result, outgoing_headers
from .config import Config
from .metrics import ROUTE_KEY, Instrumented, Metrics
from .page import details_view, reviews_view
from .products import PRODUCTS, PRODUCTS_JSON
from .sessions import SigningSessions

PRODUCT_ID = 0

METHOD_NOT_ALLOWED = b'{"error":"method not allowed"}'
JSON = "application/json"

# The user name is on every page, in end-user and the cookie: 5 MB made a 5 MB page, 8 KB a 431.
MAX_USERNAME_BYTES = 256
MAX_BODY_BYTES = 16 * 1024  # the login form's; no other route reads a body

USERNAME_TOO_LONG = json.dumps(
    {"error": f"username too long: at most {MAX_USERNAME_BYTES} bytes (UTF-8)"}
).encode()
BODY_TOO_LARGE = json.dumps(
    {"error": f"request body too large: at most {MAX_BODY_BYTES} bytes"}
).encode()
BODY_TIMEOUT = b'{"error":"request body not received in time"}'
LENGTH_REQUIRED = b'{"error":"a request body needs Content-Length"}'


def route_label(rule: str) -> str:
    """Flask's /api/v1/products/<id> as the metrics label /api/v1/products/:id."""
    return re.sub(r"<(?:[^<>:]+:)?([^<>]+)>", r":\1", rule)


def json_response(body: bytes, status: int = 200) -> Response:
    return Response(body, status=status, content_type=JSON)


def _username_fits(user: str) -> bool:
    return len(user.encode("utf-8", "replace")) <= MAX_USERNAME_BYTES


def _current_user() -> str | None:
    user = session.get("user")  # too long: signed before the bound, so not signed in
    return user if isinstance(user, str) and user and _username_fits(user) else None


def _origin_host(scheme: str, host: str) -> str:
    host = host.lower()
    default = {"http": ":80", "https": ":443"}.get(scheme)
    return host[: -len(default)] if default and host.endswith(default) else host


def same_origin_path(referer: str | None, scheme: str, host: str) -> str | None:
    """The path (and query) of referer when it points into this site (a path,
    or a URL with the request's scheme and host), else None: a redirect never
    leads to another site. Printable ASCII only (browsers encode the rest), no
    backslash, which browsers read as a slash ("/\\evil.example")."""
    if not referer or not re.fullmatch(r"[\x21-\x7e]+", referer) or "\\" in referer:
        return None
    try:
        parts = urlsplit(referer)
    except ValueError:
        return None
    if (parts.scheme or parts.netloc) and (
        parts.scheme.lower() != scheme
        or _origin_host(scheme, parts.netloc) != _origin_host(scheme, host)
    ):
        return None
    path = parts.path or "/"
    if not path.startswith("/") or path.startswith("//"):
        return None
    return path + ("?" + parts.query if parts.query else "")


def _back() -> str:
    # Upstream redirected to any Referer and sent "Location: None" without one.
    return same_origin_path(request.referrer, request.scheme, request.host) or "/productpage"


def _passthrough(result: Result) -> Response:
    body = result.body if result.ok else json.dumps(result.data).encode()
    return json_response(body, result.status)


def create_app(config: Config, secret_key: str, backends: Backends | None = None):
    """The Flask app, its wsgi_app wrapped in the metrics and Server-Timing middleware."""
    # Static route added after OPTIONS is off, so OPTIONS gets the JSON 405 too.
    app = Flask(__name__, static_folder=None)
    # Else "//" gets a 308 to a Location from Host; set before any rule (each copies it when added).
    app.url_map.merge_slashes = False
    app.jinja_options = {"trim_blocks": True, "lstrip_blocks": True}
    app.config.update(
        SECRET_KEY=secret_key,
        PROVIDE_AUTOMATIC_OPTIONS=False,
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        SEND_FILE_MAX_AGE_DEFAULT=3600,
        MAX_CONTENT_LENGTH=MAX_BODY_BYTES,
    )
    app.session_interface = SigningSessions()
    app.static_folder = "static"
    app.add_url_rule("/static/<path:filename>", endpoint="static", view_func=app.send_static_file)

    backends = backends or Backends(config)
    metrics = Metrics()

    @app.get("/")
    @app.get("/index.html")
    def index():
        return render_template("index.html")

    @app.get("/productpage")
    def product_page():
        user = _current_user()
        headers = outgoing_headers(request.environ, user)
        details, reviews = backends.details_and_reviews(PRODUCT_ID, headers)
        timing.record("details", details)
        timing.record("reviews", reviews)
        return render_template(
            "productpage.html",
            product=PRODUCTS[0],
            user=user,
            details=details_view(details),
            reviews=reviews_view(reviews),
        )

    @app.post("/login")
    def login():
        if "Transfer-Encoding" in request.headers:  # only reading it would measure it
            return json_response(LENGTH_REQUIRED, 411)
        # gunicorn reads a body with no timeout of its own (and the worker
        # closes after a body, so nothing is left half read).
        user = None
        with gevent.Timeout(config.header_timeout, False):  # False: ends the block quietly
            user = request.values.get("username", "")
        if user is None:
            return json_response(BODY_TIMEOUT, 408)
        if not _username_fits(user):
            return json_response(USERNAME_TOO_LONG, 400)
        if user:
            session["user"] = user
        else:
            session.pop("user", None)
        return redirect(_back(), 302)

    @app.get("/logout")
    def logout():
        session.pop("user", None)
        return redirect(_back(), 302)

    @app.get("/api/v1/products")
    def products():
        return json_response(PRODUCTS_JSON)

    # One endpoint per route, so no rule's defaults make werkzeug redirect.
    @app.get("/api/v1/products/<id>", endpoint="details", defaults={"part": "details"})
    @app.get("/api/v1/products/<id>/reviews", endpoint="reviews", defaults={"part": "reviews"})
    @app.get("/api/v1/products/<id>/ratings", endpoint="ratings", defaults={"part": "ratings"})
    def product_part(id, part):
        result = getattr(backends, part)(id, outgoing_headers(request.environ, _current_user()))
        timing.record(part, result)
        return _passthrough(result)

    @app.get("/health")
    def health():
        return Response("Product page is healthy", content_type="text/plain; charset=utf-8")

    @app.get("/metrics")
    def metrics_page():
        body, content_type = metrics.exposition()
        return Response(body, content_type=content_type)

    labels = {rule.rule: route_label(rule.rule) for rule in app.url_map.iter_rules()}

    @app.before_request
    def label_route():
        if request.environ.get("PATH_INFO", "").startswith("//"):  # werkzeug matches it as "/x"
            raise NotFound()
        if request.url_rule is not None:
            request.environ[ROUTE_KEY] = labels[request.url_rule.rule]

    @app.errorhandler(MethodNotAllowed)
    def method_not_allowed(err):
        allowed = sorted(err.valid_methods or ())
        if allowed:
            with suppress(RoutingException):  # not expected: the label stays "unmatched"
                rule, _ = app.create_url_adapter(request).match(method=allowed[0], return_rule=True)
                request.environ[ROUTE_KEY] = labels[rule.rule]
        response = json_response(METHOD_NOT_ALLOWED, 405)
        response.headers["Allow"] = ", ".join(allowed)
        return response

    @app.errorhandler(RequestEntityTooLarge)
    def too_large(_):
        return json_response(BODY_TOO_LARGE, 413)

    @app.errorhandler(HTTPException)
    def http_error(err):
        # {"error":"not found"}, a form cut short (400), any exception (500).
        body = json.dumps({"error": (err.name or "error").lower()}, separators=(",", ":"))
        return json_response(body.encode(), err.code or 500)

    app.wsgi_app = Instrumented(app.wsgi_app, metrics, config.access_log)
    if config.server_timing:
        app.wsgi_app = timing.timed(app.wsgi_app)
    return app
