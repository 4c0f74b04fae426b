"""The Flask application: the productpage routes of docs/contract.md."""

import json
import re
from typing import Optional

from flask import Flask, Response, redirect, render_template, request, session
from werkzeug.exceptions import InternalServerError, MethodNotAllowed, NotFound
from werkzeug.routing import RoutingException

from .backends import Backends, Result, outgoing_headers
from .config import Config
from .metrics import ROUTE_KEY, Instrumented, Metrics
from .page import details_view, reviews_view
from .products import PRODUCTS, PRODUCTS_JSON
from .sessions import SigningSessions

PRODUCT_ID = 0

NOT_FOUND = b'{"error":"not found"}'
METHOD_NOT_ALLOWED = b'{"error":"method not allowed"}'
INTERNAL_ERROR = b'{"error":"internal server error"}'
JSON = "application/json"


def route_label(rule: str) -> str:
    """Flask's /api/v1/products/<id> as the metrics label /api/v1/products/:id."""
    return re.sub(r"<(?:[^<>:]+:)?([^<>]+)>", r":\1", rule)


def json_response(body: bytes, status: int = 200) -> Response:
    return Response(body, status=status, content_type=JSON)


def _current_user() -> Optional[str]:
    user = session.get("user")
    return user if isinstance(user, str) and user else None


def _back() -> str:
    # Upstream redirected to the Referer and sent "Location: None" without one.
    return request.referrer or "/productpage"


def _passthrough(result: Result) -> Response:
    if result.ok:
        return json_response(result.body, result.status)
    return json_response(json.dumps(result.data).encode(), result.status)


def create_app(config: Config, secret_key: str, backends: Optional[Backends] = None):
    """The Flask app, its wsgi_app wrapped in the metrics/access-log middleware."""
    # The static route is added below, after automatic OPTIONS is turned off,
    # so that OPTIONS gets the same JSON 405 as every other unserved method.
    app = Flask(__name__, static_folder=None)
    app.jinja_options = {"trim_blocks": True, "lstrip_blocks": True}
    app.config.update(
        SECRET_KEY=secret_key,
        PROVIDE_AUTOMATIC_OPTIONS=False,
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        SEND_FILE_MAX_AGE_DEFAULT=3600,
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
        details, reviews = backends.details_and_reviews(
            PRODUCT_ID, outgoing_headers(request.environ, user))
        return render_template(
            "productpage.html", product=PRODUCTS[0], user=user,
            details=details_view(details), reviews=reviews_view(reviews))

    @app.post("/login")
    def login():
        user = request.values.get("username", "")
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

    @app.get("/api/v1/products/<id>")
    def product_details(id):
        return _passthrough(backends.details(id, outgoing_headers(request.environ, _current_user())))

    @app.get("/api/v1/products/<id>/reviews")
    def product_reviews(id):
        return _passthrough(backends.reviews(id, outgoing_headers(request.environ, _current_user())))

    @app.get("/api/v1/products/<id>/ratings")
    def product_ratings(id):
        return _passthrough(backends.ratings(id, outgoing_headers(request.environ, _current_user())))

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
        if request.url_rule is not None:
            request.environ[ROUTE_KEY] = labels[request.url_rule.rule]

    @app.errorhandler(NotFound)
    def not_found(_):
        return json_response(NOT_FOUND, 404)

    @app.errorhandler(MethodNotAllowed)
    def method_not_allowed(err):
        allowed = sorted(err.valid_methods or ())
        if allowed:
            try:
                rule, _ = app.create_url_adapter(request).match(method=allowed[0], return_rule=True)
                request.environ[ROUTE_KEY] = labels[rule.rule]
            except RoutingException:
                # e.g. a path werkzeug would redirect to merge its slashes:
                # the answer stays 405, the route label stays "unmatched".
                pass
        response = json_response(METHOD_NOT_ALLOWED, 405)
        response.headers["Allow"] = ", ".join(allowed)
        return response

    @app.errorhandler(InternalServerError)
    def internal_error(_):
        return json_response(INTERNAL_ERROR, 500)

    app.wsgi_app = Instrumented(app.wsgi_app, metrics, config.access_log)
    return app
