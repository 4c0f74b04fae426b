"""The product page and landing page: the strings docs tests grep for."""

import re

import pytest

from fakes import DETAILS, reviews_body

STAR = "glyphicon glyphicon-star"


def page(client) -> str:
    response = client.get("/productpage")
    assert response.status_code == 200
    assert response.content_type == "text/html; charset=utf-8"
    return response.get_data(as_text=True)


@pytest.mark.parametrize("path", ["/", "/index.html"])
def test_landing_page(client, path):
    response = client.get(path)
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    assert "<title>Simple Bookstore App</title>" in html
    assert 'href="/productpage?u=normal"' in html
    assert 'href="/productpage?u=test"' in html


def test_page_with_healthy_backends_v2(client):
    html = page(client)
    assert "<title>Simple Bookstore App</title>" in html
    assert "Book Details" in html and "William Shakespeare" in html
    assert "Book Reviews" in html
    assert re.search(r"Reviews served by:.*reviews-v2-abc", html)
    # Once per review, as upstream prints it.
    assert html.count("Reviews served by:") == 2
    assert html.count(STAR) == 5 + 4
    assert html.count('<font color="black">') == 2
    assert "Error fetching" not in html
    assert "The Comedy of Errors" in html


def test_reviews_v1_has_no_stars(client, backends):
    backends.reviews.answer("/reviews/0", body=reviews_body(ratings=False, podname="reviews-v1-x"))
    html = page(client)
    assert STAR not in html and "<font" not in html
    assert "Book Reviews" in html and "reviews-v1-x" in html


def test_reviews_v3_has_red_stars(client, backends):
    backends.reviews.answer("/reviews/0", body=reviews_body(color="red", stars=(3, 1)))
    html = page(client)
    assert html.count(STAR) == 3 + 1
    assert html.count('<font color="red">') == 2 and '<font color="black">' not in html
    # Empty stars are drawn but must not look like full ones to a grep.
    assert html.count("star-empty") == 2 + 4


def test_ratings_unavailable_is_shown(client, backends):
    backends.reviews.answer("/reviews/0", body=reviews_body(rating_error=True))
    html = page(client)
    assert html.count("Ratings service is currently unavailable") == 2
    assert STAR not in html
    assert "Book Reviews" in html


def test_details_failure(client, backends):
    backends.details.answer("/details/0", status=503, body={"error": "boom"})
    html = page(client)
    assert "Error fetching product details" in html
    assert "Sorry, product details are currently unavailable for this book." in html
    assert "William Shakespeare" not in html and "Book Details" not in html
    assert "Book Reviews" in html


def test_reviews_failure(client, backends):
    backends.reviews.answer("/reviews/0", status=500)
    html = page(client)
    assert "Error fetching product reviews" in html
    assert "Sorry, product reviews are currently unavailable for this book." in html
    assert "Reviews served by:" not in html and "Book Reviews" not in html
    assert "William Shakespeare" in html


def test_both_backends_down_still_200(client, backends):
    backends.details.answer("/details/0", status=503)
    backends.reviews.answer("/reviews/0", status=503)
    html = page(client)
    assert "Error fetching product details" in html and "Error fetching product reviews" in html


def test_unreachable_backends_still_200():
    from conftest import make_app

    from service import free_port

    port = str(free_port())
    app = make_app(
        {
            "DETAILS_HOSTNAME": "127.0.0.1",
            "DETAILS_SERVICE_PORT": port,
            "REVIEWS_HOSTNAME": "127.0.0.1",
            "REVIEWS_SERVICE_PORT": port,
        }
    )
    html = page(app.test_client())
    assert "Error fetching product details" in html and "Error fetching product reviews" in html


@pytest.mark.parametrize(
    "details,reviews",
    [
        (b"not json", b"{}"),
        (b"[1, 2]", b'{"reviews": "none"}'),
        (
            b'{"author": {"nested": true}}',
            b'{"reviews": [1, {"rating": {"stars": "5"}}, {"rating": 7}]}',
        ),
        (
            b"null",
            b'{"podname": null, "reviews": [{"reviewer": null, "rating": {"stars": 99, "color": null}}]}',
        ),
    ],
)
def test_malformed_backend_json_still_200(client, backends, details, reviews):
    backends.details.answer("/details/0", body=details)
    backends.reviews.answer("/reviews/0", body=reviews)
    page(client)


def test_star_count_is_clamped(client, backends):
    backends.reviews.answer("/reviews/0", body=reviews_body(stars=(99, -3)))
    assert page(client).count(STAR) == 5


def test_clustername_shown_unless_null(client, backends):
    backends.reviews.answer("/reviews/0", body=reviews_body(clustername="east-1"))
    assert re.search(r"Reviews served by:.*reviews-v2-abc.* on cluster .*east-1", page(client))
    backends.reviews.answer("/reviews/0", body=reviews_body(clustername="null"))
    assert ">null<" not in page(client)


def test_backend_text_is_escaped(client, backends):
    body = reviews_body(podname="<i>pod</i>", color='red"><script>x()</script>')
    body["reviews"][0]["text"] = "<script>alert(1)</script>"
    backends.reviews.answer("/reviews/0", body=body)
    backends.details.answer("/details/0", body={**DETAILS, "publisher": "<b>P</b>"})
    html = page(client)
    assert "<script>" not in html and "<i>pod</i>" not in html and "<b>P</b>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;b&gt;P&lt;/b&gt;" in html


def test_logged_out_page_has_sign_in_form(client):
    html = page(client)
    form = re.search(r'<form[^>]*action="login"[^>]*>(.*?)</form>', html, re.S)
    assert form and 'method="post"' in form.group(0)
    assert 'name="username"' in form.group(1) and 'name="passwd"' in form.group(1)
    assert "Sign in" in form.group(1)
    assert "Sign out" not in html


def test_logged_in_page_shows_user_and_sign_out(client):
    client.post("/login", data={"username": "jason", "passwd": "whatever"})
    html = page(client)
    assert "jason" in html
    assert re.search(r'<a [^>]*href="logout"[^>]*>Sign out</a>', html)
    assert 'name="passwd"' not in html


def test_user_name_is_escaped(client):
    client.post("/login", data={"username": "<script>alert(1)</script>"})
    html = page(client)
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_page_works_offline(client):
    """Every stylesheet, image and script the page references is served here."""
    html = page(client) + client.get("/").get_data(as_text=True)
    refs = re.findall(r'(?:href|src)="([^"]+)"', html)
    local = [r for r in refs if r.startswith("/static/")]
    assert local, "the page should use its own static files"
    for ref in refs:
        if ref.startswith("http"):
            # Only the plain link in the product description leaves the site.
            assert ref.startswith("https://en.wikipedia.org/")
    for ref in local:
        assert client.get(ref).status_code == 200, ref
    assert not re.search(r"<(?:link|script|img)[^>]+(?:href|src)=\"(?:https?:)?//", html)
