"""Turn backend JSON into what the product page template shows.

The page must answer 200 whatever the backends send, so anything that does
not have the expected shape is shown as that backend's error instead of
reaching the template.
"""

from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup, escape

from .backends import DETAILS_ERROR, REVIEWS_ERROR, Result

MAX_STARS = 5

# One element per full star carries "glyphicon glyphicon-star" (docs tests
# count them); an empty star must not contain that text at all. The stars
# are assembled here rather than in a template loop: it is the hottest part
# of the page and this costs a tenth of the loop.
_FULL_STAR = '<span class="glyphicon glyphicon-star star-full" aria-hidden="true">&#9733;</span>'
_EMPTY_STAR = '<span class="star-empty" aria-hidden="true">&#9734;</span>'

_DETAIL_ROWS = (
    ("author", "Author"),
    ("year", "Year"),
    ("type", "Type"),
    ("pages", "Pages"),
    ("publisher", "Publisher"),
    ("language", "Language"),
    ("ISBN-10", "ISBN-10"),
    ("ISBN-13", "ISBN-13"),
)


@dataclass
class Rating:
    stars: int = 0
    color: str = "black"
    error: str | None = None

    def stars_html(self) -> Markup:
        """The stars inside <font color=...>, as upstream shows them."""
        return Markup(
            f'<font color="{escape(self.color)}">'
            f"{_FULL_STAR * self.stars}{_EMPTY_STAR * (MAX_STARS - self.stars)}</font>"
        )


@dataclass
class Review:
    reviewer: str
    text: str
    rating: Rating | None


@dataclass
class DetailsView:
    rows: list[tuple[str, str]] = field(default_factory=list)
    error: str | None = None


@dataclass
class ReviewsView:
    reviews: list[Review] = field(default_factory=list)
    podname: str = ""
    clustername: str | None = None
    error: str | None = None


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def details_view(result: Result) -> DetailsView:
    data = result.data
    if not result.ok or not isinstance(data, dict):
        return DetailsView(error=_error_text(data, DETAILS_ERROR))
    return DetailsView(
        rows=[(label, _text(data[key])) for key, label in _DETAIL_ROWS if key in data]
    )


def _rating(value: Any) -> Rating | None:
    if not isinstance(value, dict):
        return None
    if "error" in value:
        return Rating(error=_text(value["error"]))
    stars = value.get("stars")
    if isinstance(stars, bool) or not isinstance(stars, (int, float)):
        return None
    return Rating(
        stars=max(0, min(MAX_STARS, int(stars))), color=_text(value.get("color", "black"))
    )


def reviews_view(result: Result) -> ReviewsView:
    data = result.data
    if not result.ok or not isinstance(data, dict) or not isinstance(data.get("reviews"), list):
        return ReviewsView(error=_error_text(data, REVIEWS_ERROR))
    reviews = [
        Review(_text(r.get("reviewer")), _text(r.get("text")), _rating(r.get("rating")))
        for r in data["reviews"]
        if isinstance(r, dict)
    ]
    clustername = _text(data.get("clustername"))
    return ReviewsView(
        reviews=reviews,
        podname=_text(data.get("podname")),
        clustername=clustername if clustername and clustername != "null" else None,
    )


def _error_text(data: Any, default: str) -> str:
    if isinstance(data, dict) and isinstance(data.get("error"), str):
        return data["error"]
    return default
