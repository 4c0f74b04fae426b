"""/api/v1/products routes, /health, and what they ask the backends."""

import json
import time

import pytest
from conftest import make_app

from fakes import DETAILS, Answer
from service import free_port

PRODUCTS = (
    b'[{"id": 0, "title": "The Comedy of Errors", "descriptionHtml": "<a href=\\"https://en.wikipedia.org/'
    b"wiki/The_Comedy_of_Errors\\\">Wikipedia Summary</a>: The Comedy of Errors is one of <b>Shakespeare's"
    b"</b> early plays. It is his shortest and one of his most farcical comedies, with a major part of the "
    b'humour coming from slapstick and mistaken identity, in addition to puns and word play."}]'
)
DETAILS_ERROR = b'{"error": "Sorry, product details are currently unavailable for this book."}'
REVIEWS_ERROR = b'{"error": "Sorry, product reviews are currently unavailable for this book."}'
RATINGS_ERROR = b'{"error": "Sorry, product ratings are currently unavailable for this book."}'


def test_products(client):
    response = client.get("/api/v1/products")
    assert response.status_code == 200
    assert response.content_type == "application/json"
    assert response.data == PRODUCTS
    assert json.loads(response.data)[0]["id"] == 0


def test_health(client):
    response = client.get("/health")
    assert (response.status_code, response.data) == (200, b"Product page is healthy")


@pytest.mark.parametrize(
    "route,fake,backend_path",
    [
        ("/api/v1/products/0", "details", "/details/0"),
        ("/api/v1/products/0/reviews", "reviews", "/reviews/0"),
        ("/api/v1/products/0/ratings", "ratings", "/ratings/0"),
    ],
)
def test_backend_json_is_passed_through_byte_for_byte(client, backends, route, fake, backend_path):
    body = b'{"id":0,  "odd":"spacing kept"}'
    getattr(backends, fake).answer(backend_path, body=body)
    response = client.get(route)
    assert (response.status_code, response.data) == (200, body)
    assert response.content_type == "application/json"


def test_details_route_with_real_shape(client):
    assert json.loads(client.get("/api/v1/products/0").data) == DETAILS


@pytest.mark.parametrize(
    "route,fake,backend_path,error",
    [
        ("/api/v1/products/0", "details", "/details/0", DETAILS_ERROR),
        ("/api/v1/products/0/reviews", "reviews", "/reviews/0", REVIEWS_ERROR),
        ("/api/v1/products/0/ratings", "ratings", "/ratings/0", RATINGS_ERROR),
    ],
)
@pytest.mark.parametrize("status", [400, 404, 503])
def test_backend_error_keeps_backend_status(
    client, backends, route, fake, backend_path, error, status
):
    getattr(backends, fake).answer(backend_path, status=status, body={"error": "backend says no"})
    response = client.get(route)
    assert (response.status_code, response.data) == (status, error)


@pytest.mark.parametrize(
    "route,error",
    [
        ("/api/v1/products/0", DETAILS_ERROR),
        ("/api/v1/products/0/reviews", REVIEWS_ERROR),
        ("/api/v1/products/0/ratings", RATINGS_ERROR),
    ],
)
def test_no_response_is_500(route, error):
    port = str(free_port())
    app = make_app(
        {f"{name}_HOSTNAME": "127.0.0.1" for name in ("DETAILS", "REVIEWS", "RATINGS")}
        | {f"{name}_SERVICE_PORT": port for name in ("DETAILS", "REVIEWS", "RATINGS")}
    )
    response = app.test_client().get(route)
    assert (response.status_code, response.data) == (500, error)


def test_non_numeric_id_goes_to_the_backend_quoted(client, backends):
    backends.details.answer(
        "/details/a%20b%3F", status=400, body={"error": "please provide numeric product id"}
    )
    response = client.get("/api/v1/products/a%20b%3F")
    assert (response.status_code, response.data) == (400, DETAILS_ERROR)
    assert [r.path for r in backends.details.seen()] == ["/details/a%20b%3F"]


def test_attempts_per_backend(client, backends):
    """details and ratings: one attempt; reviews: two (upstream's retry)."""
    backends.details.answer("/details/0", status=503)
    backends.reviews.answer("/reviews/0", status=503)
    backends.ratings.answer("/ratings/0", status=503)
    client.get("/api/v1/products/0")
    client.get("/api/v1/products/0/reviews")
    client.get("/api/v1/products/0/ratings")
    assert len(backends.details.seen()) == 1
    assert len(backends.reviews.seen()) == 2
    assert len(backends.ratings.seen()) == 1


def test_reviews_second_attempt_can_succeed(client, backends):
    backends.reviews.sequence("/reviews/0", Answer(503, b"{}"), Answer(200, b'{"reviews": []}'))
    response = client.get("/api/v1/products/0/reviews")
    assert (response.status_code, response.data) == (200, b'{"reviews": []}')
    assert "Book Reviews" in client.get("/productpage").get_data(as_text=True)


def test_each_call_times_out(backends):
    """A slow backend costs one timeout per attempt: 1 for details, 2 for reviews."""
    app = make_app(backends.env(), timeout=0.2)
    client = app.test_client()
    backends.details.answer("/details/0", delay=1.0)
    backends.reviews.answer("/reviews/0", delay=1.0)
    started = time.monotonic()
    response = client.get("/api/v1/products/0")
    assert 0.15 < time.monotonic() - started < 0.6
    assert (response.status_code, response.data) == (500, DETAILS_ERROR)
    started = time.monotonic()
    response = client.get("/api/v1/products/0/reviews")
    assert 0.35 < time.monotonic() - started < 0.9
    assert (response.status_code, response.data) == (500, REVIEWS_ERROR)
    assert len(backends.reviews.seen()) == 2


def test_default_call_timeout_is_three_seconds():
    from productpage.backends import CALL_TIMEOUT_SECONDS, Backends
    from productpage.config import from_env

    backends = Backends(from_env({}))
    assert CALL_TIMEOUT_SECONDS == 3.0
    assert {
        backends.details_pool.timeout.total,
        backends.reviews_pool.timeout.total,
        backends.ratings_pool.timeout.total,
    } == {3.0}


def test_unexpected_error_is_json_500(backends, monkeypatch):
    app = make_app(backends.env())
    app.testing = False
    monkeypatch.setattr("productpage.app.details_view", lambda _: 1 / 0)
    response = app.test_client().get("/productpage")
    assert (response.status_code, response.data) == (500, b'{"error":"internal server error"}')
    assert response.content_type == "application/json"
