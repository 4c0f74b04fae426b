"""/metrics content and the access log line (in-process; across worker
processes in test_server.py)."""

import re

from conftest import make_app

from productpage import metrics
from productpage.metrics import BUCKETS

LE = [
    "0.0005",
    "0.001",
    "0.0025",
    "0.005",
    "0.01",
    "0.025",
    "0.05",
    "0.1",
    "0.25",
    "0.5",
    "1.0",
    "2.5",
    "5.0",
    "10.0",
    "+Inf",
]


def sample(text, name, **labels):
    """The value of one sample, or None."""
    want = ",".join(f'{k}="{v}"' for k, v in labels.items())
    for line in text.splitlines():
        if line.startswith(name + "{"):
            got = line[len(name) + 1 : line.index("}")]
            if sorted(got.split(",")) == sorted(want.split(",")):
                return float(line.rsplit(" ", 1)[1])
    return None


def test_buckets_are_the_catalogue_ones():
    assert BUCKETS == (
        0.0005,
        0.001,
        0.0025,
        0.005,
        0.01,
        0.025,
        0.05,
        0.1,
        0.25,
        0.5,
        1,
        2.5,
        5,
        10,
    )


def test_metrics_count_by_method_route_status(client):
    client.get("/productpage")
    client.get("/productpage")
    client.get("/api/v1/products/0")
    client.get("/api/v1/products/7/reviews")
    client.get("/no/such/page")
    client.get("/random-1")
    client.post("/health")
    client.head("/health")
    client.get("/static/productpage.css")
    client.open("/health", method="BREW")
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    text = response.get_data(as_text=True)
    assert "# TYPE http_requests_total counter" in text
    assert "# TYPE http_request_duration_seconds histogram" in text
    assert (
        "# HELP http_requests_total HTTP requests served, by method, route pattern and status.\n"
    ) in text
    assert (
        "# HELP http_request_duration_seconds Time to serve an HTTP request, by method, "
        "route pattern and status.\n"
    ) in text
    total = "http_requests_total"
    assert sample(text, total, method="GET", route="/productpage", status="200") == 2
    assert sample(text, total, method="GET", route="/api/v1/products/:id", status="200") == 1
    assert (
        sample(text, total, method="GET", route="/api/v1/products/:id/reviews", status="404") == 1
    )
    assert sample(text, total, method="GET", route="unmatched", status="404") == 2
    assert sample(text, total, method="POST", route="/health", status="405") == 1
    assert sample(text, total, method="HEAD", route="/health", status="200") == 1
    assert sample(text, total, method="GET", route="/static/:filename", status="200") == 1
    assert sample(text, total, method="OTHER", route="/health", status="405") == 1
    assert "/no/such/page" not in text and "random-1" not in text
    assert "_created" not in text
    hist = "http_request_duration_seconds"
    les = re.findall(
        r'http_request_duration_seconds_bucket\{le="([^"]+)",[^}]*route="/productpage"', text
    )
    assert sorted(les, key=lambda x: float(x)) == LE
    assert (
        sample(text, hist + "_bucket", method="GET", route="/productpage", status="200", le="+Inf")
        == 2
    )
    assert sample(text, hist + "_count", method="GET", route="/productpage", status="200") == 2
    assert sample(text, hist + "_sum", method="GET", route="/productpage", status="200") > 0


def test_scrapes_within_the_max_age_share_one_render(client, monkeypatch):
    first = client.get("/metrics").get_data()
    client.get("/health")
    again = client.get("/metrics").get_data()
    assert again == first, "a scrape within the max age rendered anew"
    monkeypatch.setattr(metrics, "MAX_RENDER_AGE_SECONDS", 0.0)
    text = client.get("/metrics").get_data(as_text=True)
    assert sample(text, "http_requests_total", method="GET", route="/health", status="200") == 1


def test_one_render_at_a_time(monkeypatch):
    """Scrapes that arrive while a render runs wait for it and share its body."""
    import threading

    m = metrics.Metrics()
    renders = []
    started, release = threading.Event(), threading.Event()

    def slow_render(registry):
        renders.append(registry)
        started.set()
        release.wait(5)
        return b"rendered"

    monkeypatch.setattr(metrics, "generate_latest", slow_render)
    bodies = []
    threads = [threading.Thread(target=lambda: bodies.append(m.exposition()[0])) for _ in range(8)]
    threads[0].start()
    assert started.wait(5)
    for t in threads[1:]:
        t.start()
    release.set()
    for t in threads:
        t.join(5)
    assert len(renders) == 1 and bodies == [b"rendered"] * 8


def test_no_access_log_by_default(client, capfd):
    client.get("/health")
    assert capfd.readouterr().out == ""


def test_access_log_line(backends, capfd):
    client = make_app({**backends.env(), "ACCESS_LOG": "true"}).test_client()
    client.get("/api/v1/products?x=1")
    client.get("/no%20such%0Apath")
    lines = capfd.readouterr().out.splitlines()
    assert len(lines) == 2
    stamp = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"
    assert re.fullmatch(stamp + r" productpage GET /api/v1/products 200 \d+\.\d{3}", lines[0])
    # A decoded path could break the line in two; the raw one cannot.
    assert re.fullmatch(stamp + r" productpage GET /no%20such%0Apath 404 \d+\.\d{3}", lines[1])
