"""Backend JSON -> what the product page template shows. The page answers 200
whatever the backends send: a wrong shape is shown as that backend's error."""

from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup, escape

from .backends import DETAILS_ERROR, REVIEWS_ERROR, Result

MAX_STARS = 5

# Docs tests count "glyphicon glyphicon-star", so an empty star lacks it. Built
# here, not in a template loop: the page's hottest part, at a tenth of the cost.
_FULL_STAR = '<span class="glyphicon glyphicon-star star-full" aria-hidden="true">&#9733;</span>'
_EMPTY_STAR = '<span class="star-empty" aria-hidden="true">&#9734;</span>'

# details' keys in the page's order, each with its label: the key, capitalised.
_DETAIL_KEYS = ("author", "year", "type", "pages", "publisher", "language", "ISBN-10", "ISBN-13")
_DETAIL_ROWS = tuple((key, key[0].upper() + key[1:]) for key in _DETAIL_KEYS)


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
    return "" if value is None else value if isinstance(value, str) else str(value)


def details_view(result: Result) -> DetailsView:
    data = result.data
    if not result.ok or not isinstance(data, dict):
        return DetailsView(error=_error_text(data, DETAILS_ERROR))
    return DetailsView([(label, _text(data[key])) for key, label in _DETAIL_ROWS if key in data])


def _rating(value: Any) -> Rating | None:
    if not isinstance(value, dict):
        return None
    if "error" in value:
        return Rating(error=_text(value["error"]))
    stars = value.get("stars")
    if isinstance(stars, bool) or not isinstance(stars, (int, float)):
        return None
    return Rating(max(0, min(MAX_STARS, int(stars))), _text(value.get("color", "black")))


def reviews_view(result: Result) -> ReviewsView:
    data = result.data
    if not result.ok or not isinstance(data, dict) or not isinstance(data.get("reviews"), list):
        return ReviewsView(error=_error_text(data, REVIEWS_ERROR))
    reviews = [
        Review(_text(r.get("reviewer")), _text(r.get("text")), _rating(r.get("rating")))
        for r in data["reviews"]
        if isinstance(r, dict)
    ]
    cluster = _text(data.get("clustername"))
    cluster = None if cluster in ("", "null") else cluster
    return ReviewsView(reviews, _text(data.get("podname")), cluster)


def _error_text(data: Any, default: str) -> str:
    if isinstance(data, dict) and isinstance(data.get("error"), str):
        return data["error"]
    return default
