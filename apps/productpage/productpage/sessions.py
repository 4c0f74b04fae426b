"""Flask's signed-cookie sessions, with one serializer per process instead of
one per request (DESIGN.md, "How each knob is implemented": 11 us a request)."""

from flask.sessions import SecureCookieSessionInterface


class SigningSessions(SecureCookieSessionInterface):
    def __init__(self):
        self._serializer = None

    def get_signing_serializer(self, app):
        if self._serializer is None:
            self._serializer = super().get_signing_serializer(app)
        return self._serializer
