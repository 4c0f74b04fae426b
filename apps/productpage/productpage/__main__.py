"""./serve's entry point, deciding once before gunicorn forks: the configuration (exit 2 on a
bad value), the session key every worker signs with, the metrics directory the workers share."""

import logging
import os
import resource
import secrets
import sys
import tempfile

from .config import SERVICE, Config, ConfigError, from_env


def raise_open_files_limit(config: Config) -> None:
    """Room for HTTP_MAX_CONNECTIONS client sockets and the backend sockets of
    the pages in flight (the soft limit is often 1024; the workers inherit it)."""
    want = 4 * config.max_connections + 256
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= want:
        return
    new = want if hard == resource.RLIM_INFINITY else min(want, hard)
    if new > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
    if new < want:
        logging.getLogger(SERVICE).warning(
            "open files limited to %d: HTTP_MAX_CONNECTIONS=%d wants %d",
            new,
            config.max_connections,
            want,
        )


def main() -> int:
    try:
        config = from_env(os.environ)
    except ConfigError as err:
        print(f"{SERVICE}: {err}", file=sys.stderr)
        return 2

    logging.basicConfig(
        level=config.log_level.upper(),  # logging knows WARN as WARNING
        stream=sys.stderr,
        format=f"%(asctime)s {SERVICE} %(levelname)s %(name)s: %(message)s",
    )
    raise_open_files_limit(config)

    # Under $TMPDIR (writable in Kubernetes); fresh, so counters never carry over.
    metrics_dir = tempfile.mkdtemp(prefix=f"{SERVICE}-metrics-")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = metrics_dir

    secret_key = config.session_secret or secrets.token_urlsafe(32)

    from .serving.server import ProductpageServer

    ProductpageServer(config, secret_key, metrics_dir).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
