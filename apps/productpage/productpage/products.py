"""The product catalogue: one book, as in upstream Bookinfo."""

import json

# No "William Shakespeare": docs tests grep the page for it to learn that details answered.
PRODUCTS = [
    {
        "id": 0,
        "title": "The Comedy of Errors",
        "descriptionHtml": (
            '<a href="https://en.wikipedia.org/wiki/The_Comedy_of_Errors">Wikipedia Summary</a>: '
            "The Comedy of Errors is one of <b>Shakespeare's</b> early plays. It is his shortest "
            "and one of his most farcical comedies, with a major part of the humour coming from "
            "slapstick and mistaken identity, in addition to puns and word play."
        ),
    }
]

PRODUCTS_JSON = json.dumps(PRODUCTS).encode()
