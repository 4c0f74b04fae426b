"""POST /login and GET /logout, the session cookie, and end-user."""

import pytest
from conftest import make_app


def session_cookie(response):
    cookies = [
        v for k, v in response.headers.items() if k == "Set-Cookie" and v.startswith("session=")
    ]
    assert len(cookies) == 1
    return cookies[0]


def test_login_from_form_without_referer_redirects_to_productpage(client):
    response = client.post("/login", data={"username": "jason", "passwd": "ignored"})
    assert response.status_code == 302
    assert response.headers["Location"] == "/productpage"
    cookie = session_cookie(response)
    assert "HttpOnly" in cookie and "Path=/" in cookie
    assert "jason" in client.get("/productpage").get_data(as_text=True)


def test_login_from_query_string(client):
    response = client.post("/login?username=jason")
    assert response.status_code == 302
    assert "Signed in as <b>jason</b>" in client.get("/productpage").get_data(as_text=True)


def test_login_redirects_to_a_same_origin_referer(client):
    response = client.post(
        "/login",
        data={"username": "u"},
        base_url="http://bookinfo.example",
        headers={"Referer": "http://bookinfo.example/productpage?u=test"},
    )
    assert response.headers["Location"] == "/productpage?u=test"
    response = client.post(
        "/login",
        data={"username": "u"},
        base_url="http://bookinfo.example:8080",
        headers={"Referer": "http://BookInfo.example:8080/productpage"},
    )
    assert response.headers["Location"] == "/productpage"
    response = client.post(
        "/login",
        data={"username": "u"},
        base_url="http://bookinfo.example",
        headers={"Referer": "http://bookinfo.example:80/x?y=1"},
    )
    assert response.headers["Location"] == "/x?y=1"


@pytest.mark.parametrize(
    "referer",
    [
        "http://evil.example/productpage",  # another host
        "https://bookinfo.example/productpage",  # another scheme
        "http://bookinfo.example:81/productpage",
        "http://user@bookinfo.example/productpage",
        "//evil.example/productpage",  # network-path reference
        "http://bookinfo.example//evil.example/",
        "/\\evil.example/",  # browsers read \ as /
        "javascript:alert(1)",
        "productpage",  # not a path
        "/product page",
        "/caf\u00e9",
    ],
)
def test_login_and_logout_ignore_a_foreign_referer(client, referer):
    response = client.post(
        "/login",
        data={"username": "u"},
        base_url="http://bookinfo.example",
        headers={"Referer": referer},
    )
    assert (response.status_code, response.headers["Location"]) == (302, "/productpage")
    response = client.get(
        "/logout", base_url="http://bookinfo.example", headers={"Referer": referer}
    )
    assert (response.status_code, response.headers["Location"]) == (302, "/productpage")


def test_same_origin_path():
    from productpage.app import same_origin_path

    assert same_origin_path("/productpage?u=normal", "http", "h") == "/productpage?u=normal"
    assert same_origin_path("https://h:443/a#frag", "https", "h") == "/a"
    assert same_origin_path("http://h", "http", "h:80") == "/"
    assert same_origin_path("http://[::1]:9080/a", "http", "[::1]:9080") == "/a"
    assert same_origin_path("http://[::1/a", "http", "h") is None
    assert same_origin_path(None, "http", "h") is None
    assert same_origin_path("", "http", "h") is None


def test_username_of_256_bytes_is_accepted_and_257_refused(client):
    response = client.post("/login", data={"username": "é" * 128})
    assert response.status_code == 302
    assert "é" * 128 in client.get("/productpage").get_data(as_text=True)
    response = client.post("/login", data={"username": "a" * 256 + "é"})
    assert response.status_code == 400
    assert response.content_type == "application/json"
    assert response.json == {"error": "username too long: at most 256 bytes (UTF-8)"}
    # Refused without touching the session: still signed in as before.
    assert "é" * 128 in client.get("/productpage").get_data(as_text=True)
    response = client.post("/login?username=" + "b" * 257)
    assert response.status_code == 400


def test_huge_username_does_not_poison_later_requests(client):
    response = client.post("/login", data={"username": "x" * 5_000_000})
    assert response.status_code == 413  # the form is over 16 KB
    response = client.post("/login", data={"username": "x" * 10_000})
    assert response.status_code == 400
    assert all(
        not v.startswith("session=") for k, v in response.headers.items() if k == "Set-Cookie"
    )
    assert client.get("/productpage").status_code == 200
    assert client.get("/health").status_code == 200


def test_form_over_16_kb_is_413(client):
    response = client.post("/login", data={"username": "u", "passwd": "p" * (16 * 1024)})
    assert response.status_code == 413
    assert response.json == {"error": "request body too large: at most 16384 bytes"}
    response = client.post("/login", data={"username": "u", "passwd": "p" * (16 * 1024 - 100)})
    assert response.status_code == 302


def test_session_cookie_stays_small(client):
    response = client.post("/login", data={"username": "\U0001f600" * 64})  # 256 bytes
    assert response.status_code == 302
    assert len(session_cookie(response)) < 1200


def test_a_session_with_an_oversized_user_is_not_signed_in(app, backends):
    # A cookie signed (with the same key) before the bound existed.
    value = app.session_interface.get_signing_serializer(app).dumps({"user": "x" * 300})
    client = app.test_client()
    client.set_cookie("session", value)
    html = client.get("/productpage").get_data(as_text=True)
    assert "Sign in" in html and "x" * 300 not in html
    assert "end-user" not in backends.details.seen()[0].headers


def test_password_is_not_stored(app, client):
    response = client.post("/login", data={"username": "jason", "passwd": "hunter2"})
    value = session_cookie(response).split(";")[0].split("=", 1)[1]
    stored = app.session_interface.get_signing_serializer(app).loads(value)
    assert stored == {"user": "jason"}


def test_logout_clears_the_user(client):
    client.post("/login", data={"username": "jason"})
    response = client.get("/logout", headers={"Referer": "/productpage?u=normal"})
    assert (response.status_code, response.headers["Location"]) == (302, "/productpage?u=normal")
    assert "Expires=Thu, 01 Jan 1970" in session_cookie(response)
    html = client.get("/productpage").get_data(as_text=True)
    assert "jason" not in html and "Sign in" in html


def test_logout_without_referer(client):
    response = client.get("/logout")
    assert (response.status_code, response.headers["Location"]) == (302, "/productpage")


def test_empty_username_logs_out(client):
    client.post("/login", data={"username": "jason"})
    client.post("/login", data={"username": ""})
    assert "Sign in" in client.get("/productpage").get_data(as_text=True)


def test_login_is_post_only(client):
    response = client.get("/login?username=jason")
    assert response.status_code == 405
    assert response.headers["Allow"] == "POST"


def test_cookie_signed_with_another_key_is_ignored(backends):
    alice = make_app(backends.env()).test_client()
    alice.post("/login", data={"username": "jason"})
    cookie = alice.get_cookie("session").value

    from productpage.app import create_app
    from productpage.config import from_env

    other = create_app(from_env(backends.env()), "another-secret").test_client()
    other.set_cookie("session", cookie)
    assert "Sign in" in other.get("/productpage").get_data(as_text=True)
    backends.details.reset()
    other.get("/productpage")
    assert "end-user" not in backends.details.seen()[0].headers


FORWARDED = {
    "x-request-id": "req-1",
    "x-ot-span-context": "ot",
    "x-datadog-trace-id": "1",
    "x-datadog-parent-id": "2",
    "x-datadog-sampling-priority": "1",
    "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
    "tracestate": "congo=t61rcWkgMzE",
    "x-cloud-trace-context": "105445aa7843bc8bf206b12000100000/1;o=1",
    "grpc-trace-bin": "AAAA",
    "x-b3-traceid": "80f198ee56343ba864fe8b2a57d3eff7",
    "x-b3-spanid": "e457b5a2e4d86bd1",
    "x-b3-parentspanid": "05e3ac9a4f6e3b90",
    "x-b3-sampled": "1",
    "x-b3-flags": "1",
    "b3": "80f198ee56343ba8-e457b5a2e4d86bd1-1",
    "sw8": "1-abc",
    "user-agent": "curl/8.0",
    "authorization": "Bearer t0ken",
    "jwt": "e30.e30.x",
}


@pytest.mark.parametrize(
    "route,fakes",
    [
        ("/productpage", ("details", "reviews")),
        ("/api/v1/products/0", ("details",)),
        ("/api/v1/products/0/reviews", ("reviews",)),
        ("/api/v1/products/0/ratings", ("ratings",)),
    ],
)
def test_headers_are_propagated_and_end_user_comes_from_session(client, backends, route, fakes):
    client.post("/login", data={"username": "jason"})
    client.get(route, headers={**FORWARDED, "end-user": "mallory", "x-not-forwarded": "1"})
    for name in fakes:
        seen = getattr(backends, name).seen()
        assert len(seen) == 1
        headers = seen[0].headers
        for key, value in FORWARDED.items():
            assert headers.get(key) == value, f"{name}: {key}"
        assert headers["end-user"] == "jason"
        assert headers["cookie"].startswith("session=")
        assert "x-not-forwarded" not in headers


def test_incoming_end_user_is_dropped_when_logged_out(client, backends):
    client.get("/productpage", headers={"end-user": "jason"})
    for fake in (backends.details, backends.reviews):
        assert "end-user" not in fake.seen()[0].headers


def test_non_ascii_user_reaches_backends_as_utf8(client, backends):
    client.post("/login", data={"username": "jösé"})
    client.get("/api/v1/products/0")
    # http.server decodes header bytes as latin-1.
    assert backends.details.seen()[0].headers["end-user"].encode("latin-1").decode() == "jösé"
