"""Request checks RFC 9112/9110 require and gunicorn's parser leaves to the
application (docs/contract.md's wire rules); gunicorn answers check_head's
InvalidHeader with its own 400 and a close."""

import re

from gunicorn.http.errors import InvalidHeader

# RFC 9110 7.2 / RFC 3986 3.2.2: IP-literal, IPv4 or reg-name (maybe empty), then ":" port.
_HOST = re.compile(
    r"(?:\[(?:[0-9A-Fa-f:.]+|v[0-9A-Fa-f]+\.[A-Za-z0-9\-._~!$&'()*+,;=:]+)\]"
    r"|(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})*)"
    r"(?::[0-9]*)?"
)


def check_head(req):
    host = None
    for name, value in req.headers:
        if name == "HOST":
            host = value
        elif name == "TRANSFER-ENCODING" and value.lower() != "chunked":
            # gunicorn also takes "gzip, chunked"; every hop must agree on framing.
            raise InvalidHeader("TRANSFER-ENCODING", req=req)
    if host is None:
        if req.version >= (1, 1):
            raise InvalidHeader("HOST", req=req)  # RFC 9112 3.2
    elif not _HOST.fullmatch(host):
        raise InvalidHeader("HOST", req=req)


def asks_to_close(req) -> bool:
    """RFC 9112 9.6: "close" among the options of any Connection field
    (gunicorn looks at the first field's whole value only)."""
    return any(
        name == "CONNECTION" and any(o.strip(" \t").lower() == "close" for o in value.split(","))
        for name, value in req.headers
    )


def has_body(req) -> bool:
    return any(
        name == "TRANSFER-ENCODING" or (name == "CONTENT-LENGTH" and value != "0")
        for name, value in req.headers
    )
