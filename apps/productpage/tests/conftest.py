import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fakes import Bookinfo  # noqa: E402
from productpage.app import create_app  # noqa: E402
from productpage.backends import Backends  # noqa: E402
from productpage.config import from_env  # noqa: E402
from service import Service  # noqa: E402


@pytest.fixture(scope="session")
def bookinfo():
    fakes = Bookinfo()
    yield fakes
    fakes.close()


@pytest.fixture
def backends(bookinfo):
    """The fake backends, scripted healthy (v2, black stars) for each test."""
    bookinfo.healthy()
    return bookinfo


@pytest.fixture(scope="session")
def service(bookinfo):
    """The real server, two workers, shared by the tests that only read."""
    svc = Service({**bookinfo.env(), "WEB_CONCURRENCY": "2"})
    yield svc
    svc.cleanup()


@pytest.fixture
def start_service(bookinfo):
    """Start a server with extra env; stopped when the test ends."""
    started = []

    def start(**env):
        svc = Service({**bookinfo.env(), "WEB_CONCURRENCY": "1", **env})
        started.append(svc)
        return svc

    yield start
    for svc in started:
        svc.cleanup()


def make_app(env, timeout=None):
    config = from_env(env)
    backends = Backends(config, timeout) if timeout else None
    app = create_app(config, "test-secret", backends)
    app.testing = True
    return app


@pytest.fixture
def app(backends):
    return make_app(backends.env())


@pytest.fixture
def client(app):
    return app.test_client()
