"""The Server-Timing header: productpage's own time, each backend call's
wait, and what the backends reported, prefixed (docs/contract.md)."""

import json
import re
import socket
import time
from types import SimpleNamespace

import pytest
from conftest import make_app
from urllib3.connection import HTTPConnection

from fakes import DETAILS, reviews_body
from productpage.timing import MAX_FORWARDED, forwarded, timed

METRIC = re.compile(r"([^;,\s]+);dur=([0-9]+\.?[0-9]*)")


def timings(response) -> dict[str, float]:
    header = response.headers.get("Server-Timing")
    assert header is not None, "no Server-Timing header"
    pairs = [entry.strip() for entry in header.split(",")]
    parsed = [METRIC.fullmatch(pair) for pair in pairs]
    assert all(parsed), header
    names = [m.group(1) for m in parsed]
    assert len(names) == len(set(names)), header
    return {m.group(1): float(m.group(2)) for m in parsed}


def script_tree(backends, details_delay=0.0):
    backends.details.answer(
        "/details/0", body=DETAILS, delay=details_delay, server_timing="app;dur=0.25"
    )
    backends.reviews.answer(
        "/reviews/0",
        body=reviews_body(),
        server_timing="app;dur=4.5, ratings;dur=3.25, ratings.app;dur=0.5",
    )


def test_productpage_describes_the_whole_tree(client, backends):
    script_tree(backends)
    got = timings(client.get("/productpage"))
    assert set(got) == {
        "app",
        "details",
        "details.app",
        "reviews",
        "reviews.app",
        "reviews.ratings",
        "reviews.ratings.app",
    }
    # What the backends said is carried up as they said it.
    assert got["details.app"] == 0.25
    assert got["reviews.app"] == 4.5
    assert got["reviews.ratings"] == 3.25
    assert got["reviews.ratings.app"] == 0.5
    # productpage's own time covers its waits (the two run concurrently).
    assert got["app"] >= max(got["details"], got["reviews"])


def test_a_slow_backend_shows_on_its_own_wait(client, backends):
    script_tree(backends, details_delay=0.05)
    got = timings(client.get("/productpage"))
    assert got["details"] >= 50.0
    assert got["app"] >= got["details"]


def test_parsing_the_answer_is_productpage_own_time(client, backends, monkeypatch):
    """The wait is the exchange on the connection: a slow JSON parse of the
    answer counts in `app`, not in the backend's wait. One call (the API's
    details route): on the page, the other greenlet's parse would delay
    this one's wake-up."""
    backends.details.answer("/details/0", body=DETAILS)

    # Half a second of parse: far beyond what a busy machine adds to the
    # exchange itself (up to 130 ms seen with a 50 ms parse).
    def slow_loads(text):
        time.sleep(0.5)
        return json.loads(text)

    monkeypatch.setattr("productpage.backends.json", SimpleNamespace(loads=slow_loads))
    got = timings(client.get("/api/v1/products/0"))
    assert got["details"] < 500.0
    assert got["app"] >= 500.0


def test_building_the_request_is_productpage_own_time(client, backends, monkeypatch):
    """The wait starts at the request's first send(): a slow build of its head in urllib3 counts
    in `app`, not in the backend's wait."""
    backends.details.answer("/details/0", body=DETAILS)
    putrequest = HTTPConnection.putrequest

    def slow_putrequest(self, *args, **kwargs):
        time.sleep(0.5)
        return putrequest(self, *args, **kwargs)

    monkeypatch.setattr(HTTPConnection, "putrequest", slow_putrequest)
    got = timings(client.get("/api/v1/products/0"))
    assert got["details"] < 500.0
    assert got["app"] >= 500.0


@pytest.mark.parametrize("body", [[b"x", b"y"], []])
def test_the_time_covers_what_follows_start_response(body):
    """The head goes to the server with the first body chunk (at the end of an empty body), once:
    what the app or a middleware does after its start_response is counted."""

    def app(environ, start_response):
        start_response("200 OK", [("Content-Type", "text/plain")])
        time.sleep(0.05)
        return body

    heads = []
    chunks = list(timed(app)({}, lambda status, headers, exc_info=None: heads.append(headers)))
    assert chunks == body
    assert len(heads) == 1
    assert float(dict(heads[0])["Server-Timing"].removeprefix("app;dur=")) >= 50.0


def test_a_failed_call_still_reports_its_wait(backends):
    backends.details.answer("/details/0", status=503, body={"error": "x"})
    # Nothing listens on the reviews port: no answer at all.
    with socket.create_server(("127.0.0.1", 0)) as taken:
        closed_port = str(taken.getsockname()[1])
    client = make_app({**backends.env(), "REVIEWS_SERVICE_PORT": closed_port}).test_client()
    got = timings(client.get("/productpage"))
    assert "details" in got and "details.app" not in got
    assert "reviews" in got and "reviews.app" not in got


@pytest.mark.parametrize("backend", ["details", "reviews", "ratings"])
def test_api_routes_report_their_one_call(client, backends, backend):
    getattr(backends, backend).answer(f"/{backend}/0", body={"id": 0}, server_timing="app;dur=1.5")
    path = "/api/v1/products/0" + ("" if backend == "details" else f"/{backend}")
    got = timings(client.get(path))
    assert set(got) == {"app", backend, f"{backend}.app"}
    assert got[f"{backend}.app"] == 1.5


@pytest.mark.parametrize(
    "method,path,status",
    [
        ("GET", "/", 200),
        ("HEAD", "/productpage", 200),
        ("GET", "/health", 200),
        ("GET", "/metrics", 200),
        ("GET", "/static/productpage.css", 200),
        ("GET", "/nowhere", 404),
        ("DELETE", "/productpage", 405),
        ("GET", "/logout", 302),
    ],
)
def test_every_route_carries_app_time(client, backends, method, path, status):
    response = client.open(path, method=method)
    assert response.status_code == status
    assert "app" in timings(response)


def test_server_timing_false_sends_none(backends):
    client = make_app({**backends.env(), "SERVER_TIMING": "false"}).test_client()
    for path in ("/productpage", "/api/v1/products/0", "/nowhere"):
        assert "Server-Timing" not in client.get(path).headers, path


def test_forwarded_keeps_name_and_dur_only():
    assert forwarded("reviews", 'app;dur=1.5;desc="x, y", ratings;desc=no-dur, db;dur="2"') == [
        "reviews.app;dur=1.5",
        "reviews.db;dur=2",
    ]
    assert forwarded("details", None) == []
    assert forwarded("details", "bad name;dur=1, ;dur=2, x;dur=-1, y;dur=1e9") == []
    many = ", ".join(f"m{i};dur=1" for i in range(100))
    assert len(forwarded("details", many)) == MAX_FORWARDED
