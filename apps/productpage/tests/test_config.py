"""The env-var catalogue: defaults, grammar, and exit 2 on a bad value."""

import pytest

from productpage.config import Config, ConfigError, Peer, from_env
from productpage.serving.server import gunicorn_settings
from service import run_serve


def test_defaults():
    config = from_env({})
    assert config == Config()
    assert (config.port, config.listen_address) == (9080, "0.0.0.0")
    assert config.http_nodelay and config.http_keepalive and config.upstream_keepalive
    assert (config.keepalive_timeout, config.upstream_max_requests, config.shutdown_timeout) == (
        60,
        100,
        10,
    )
    assert (config.header_timeout, config.max_connections) == (10, 1024)
    assert not config.access_log and config.log_level == "info"
    assert config.session_secret is None
    assert config.details == Peer("details", 9080)
    assert config.reviews == Peer("reviews", 9080)
    assert config.ratings == Peer("ratings", 9080)


def test_every_knob_is_read():
    config = from_env(
        {
            "PORT": "8080",
            "LISTEN_ADDRESS": "127.0.0.1",
            "HTTP_NODELAY": " FALSE ",
            "HTTP_KEEPALIVE": "False",
            "HTTP_KEEPALIVE_TIMEOUT_SECONDS": "5",
            "HTTP_HEADER_TIMEOUT_SECONDS": " 2 ",
            "HTTP_MAX_CONNECTIONS": "100000",
            "UPSTREAM_KEEPALIVE": "false",
            "UPSTREAM_MAX_REQUESTS_PER_CONNECTION": "7",
            "SHUTDOWN_TIMEOUT_SECONDS": "3",
            "ACCESS_LOG": "TRUE",
            "SERVER_TIMING": "False",
            "LOG_LEVEL": "Warn",
            "WEB_CONCURRENCY": "3",
            "SESSION_SECRET": "s3cret",
            "DETAILS_HOSTNAME": "d",
            "DETAILS_SERVICE_PORT": "1",
            "REVIEWS_HOSTNAME": "r",
            "REVIEWS_SERVICE_PORT": "2",
            "RATINGS_HOSTNAME": "ra",
            "RATINGS_SERVICE_PORT": "3",
        }
    )
    assert config == Config(
        port=8080,
        listen_address="127.0.0.1",
        http_nodelay=False,
        http_keepalive=False,
        keepalive_timeout=5,
        header_timeout=2,
        max_connections=100000,
        upstream_keepalive=False,
        upstream_max_requests=7,
        shutdown_timeout=3,
        access_log=True,
        server_timing=False,
        log_level="warn",
        web_concurrency=3,
        session_secret="s3cret",
        details=Peer("d", 1),
        reviews=Peer("r", 2),
        ratings=Peer("ra", 3),
    )


def test_services_domain_is_appended_to_every_peer():
    config = from_env(
        {"SERVICES_DOMAIN": "bookinfo.svc.cluster.local", "RATINGS_HOSTNAME": "ratings-v2"}
    )
    assert config.details.host == "details.bookinfo.svc.cluster.local"
    assert config.reviews.host == "reviews.bookinfo.svc.cluster.local"
    assert config.ratings.host == "ratings-v2.bookinfo.svc.cluster.local"


def test_empty_services_domain_means_unset():
    assert from_env({"SERVICES_DOMAIN": ""}).details.host == "details"


def test_kubernetes_service_link_variables_are_ignored():
    config = from_env(
        {"DETAILS_PORT": "tcp://10.0.0.1:9080", "REVIEWS_PORT": "tcp://10.0.0.2:9080"}
    )
    assert config.details.port == 9080 and config.reviews.port == 9080


def test_ipv6_listen_address_is_bracketed_for_bind():
    assert from_env({"LISTEN_ADDRESS": "::", "PORT": "9"}).bind == "[::]:9"
    assert from_env({"LISTEN_ADDRESS": "127.0.0.1", "PORT": "9"}).bind == "127.0.0.1:9"


@pytest.mark.parametrize(
    "name,value,want",
    [
        ("HTTP_NODELAY", "maybe", "want true or false"),
        ("HTTP_NODELAY", "1", "want true or false"),
        ("HTTP_KEEPALIVE", "yes", "want true or false"),
        ("HTTP_KEEPALIVE", "", "want true or false"),
        ("UPSTREAM_KEEPALIVE", "on", "want true or false"),
        ("ACCESS_LOG", "0", "want true or false"),
        ("SERVER_TIMING", "off", "want true or false"),
        ("PORT", "0", "want an integer from 1 to 65535"),
        ("PORT", "65536", "want an integer from 1 to 65535"),
        ("PORT", "80a", "want an integer from 1 to 65535"),
        ("HTTP_KEEPALIVE_TIMEOUT_SECONDS", "0", "want an integer from 1 to 3600"),
        ("HTTP_KEEPALIVE_TIMEOUT_SECONDS", "1.5", "want an integer from 1 to 3600"),
        ("UPSTREAM_MAX_REQUESTS_PER_CONNECTION", "1000001", "want an integer from 1 to 1000000"),
        ("HTTP_HEADER_TIMEOUT_SECONDS", "0", "want an integer from 1 to 300"),
        ("HTTP_HEADER_TIMEOUT_SECONDS", "301", "want an integer from 1 to 300"),
        ("HTTP_HEADER_TIMEOUT_SECONDS", "2.5", "want an integer from 1 to 300"),
        ("HTTP_MAX_CONNECTIONS", "0", "want an integer from 1 to 100000"),
        ("HTTP_MAX_CONNECTIONS", "100001", "want an integer from 1 to 100000"),
        ("HTTP_MAX_CONNECTIONS", "", "want an integer from 1 to 100000"),
        ("SHUTDOWN_TIMEOUT_SECONDS", "301", "want an integer from 1 to 300"),
        ("SHUTDOWN_TIMEOUT_SECONDS", "-1", "want an integer from 1 to 300"),
        ("WEB_CONCURRENCY", "0", "want an integer from 1 to 64"),
        ("LOG_LEVEL", "verbose", "want debug, info, warn or error"),
        ("LISTEN_ADDRESS", "not an address", "want a host name or an IP address"),
        ("DETAILS_SERVICE_PORT", "tcp://10.0.0.1:9080", "want an integer from 1 to 65535"),
        ("REVIEWS_HOSTNAME", "a b", "want a host name or an IP address"),
        ("SESSION_SECRET", "", "want a non-empty string"),
    ],
)
def test_bad_value_is_rejected_naming_variable_and_value(name, value, want):
    with pytest.raises(ConfigError) as err:
        from_env({name: value})
    assert str(err.value).startswith(f'invalid {name}="{value}": {want}')


@pytest.mark.parametrize(
    "name,value",
    [
        ("HTTP_NODELAY", "maybe"),
        ("HTTP_KEEPALIVE", "1"),
        ("UPSTREAM_KEEPALIVE", ""),
        ("ACCESS_LOG", "yes"),
        ("SERVER_TIMING", "1"),
        ("PORT", "99999"),
        ("HTTP_KEEPALIVE_TIMEOUT_SECONDS", "0"),
        ("UPSTREAM_MAX_REQUESTS_PER_CONNECTION", "0"),
        ("SHUTDOWN_TIMEOUT_SECONDS", "abc"),
        ("HTTP_HEADER_TIMEOUT_SECONDS", "ten"),
        ("HTTP_MAX_CONNECTIONS", "-5"),
        ("LOG_LEVEL", "trace"),
        ("WEB_CONCURRENCY", "many"),
        ("LISTEN_ADDRESS", "no/such"),
        ("RATINGS_SERVICE_PORT", "0"),
    ],
)
def test_service_exits_2_with_one_line_on_bad_value(name, value):
    result = run_serve({"PORT": "1", name: value})
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.endswith("\n") and result.stderr.count("\n") == 1
    assert result.stderr.startswith(f'productpage: invalid {name}="{value}": want ')


def test_value_with_a_newline_still_gives_one_line():
    result = run_serve({"HTTP_NODELAY": "tr\nue"})
    assert result.returncode == 2
    assert result.stderr == 'productpage: invalid HTTP_NODELAY="tr\\nue": want true or false\n'


def test_gunicorn_settings_follow_the_knobs():
    on = gunicorn_settings(
        from_env(
            {
                "HTTP_KEEPALIVE_TIMEOUT_SECONDS": "7",
                "SHUTDOWN_TIMEOUT_SECONDS": "4",
                "WEB_CONCURRENCY": "5",
                "LOG_LEVEL": "warn",
            }
        ),
        "/tmp/x",
    )
    assert (on["keepalive"], on["graceful_timeout"], on["workers"], on["loglevel"]) == (
        7,
        4,
        5,
        "warning",
    )
    assert on["worker_class"].nodelay is True
    # HTTP_MAX_CONNECTIONS is shared by the workers: 1024 // 5 each.
    assert (on["worker_class"].header_timeout, on["worker_connections"]) == (10.0, 204)
    off = gunicorn_settings(
        from_env(
            {
                "HTTP_KEEPALIVE": "false",
                "HTTP_NODELAY": "false",
                "HTTP_HEADER_TIMEOUT_SECONDS": "3",
                "HTTP_MAX_CONNECTIONS": "50",
            }
        ),
        "/tmp/x",
    )
    assert off["keepalive"] == 0
    assert off["worker_class"].nodelay is False
    assert (off["worker_class"].header_timeout, off["worker_connections"]) == (3.0, 25)
    few = gunicorn_settings(from_env({"HTTP_MAX_CONNECTIONS": "1"}), "/tmp/x")
    assert (few["workers"], few["worker_connections"]) == (1, 1)
