"""gunicorn, configured from our Config through its public BaseApplication
(no command line, gunicorn.conf.py or GUNICORN_CMD_ARGS is read)."""

import gc
import os
import shutil
import signal
import sys

from gunicorn.app.base import BaseApplication
from gunicorn.arbiter import Arbiter

from ..config import Config
from .worker import worker_class


class DrainingArbiter(Arbiter):
    """gunicorn's master: SIGINT drains like SIGTERM; exit 1 if stopping killed busy workers."""

    cut_off = False
    # Write end only the master's, closed after stop() closed the listening
    # sockets: the whole server stops, not one worker (worker.await_master).
    listeners_closed_r = listeners_closed_w = None

    def start(self):
        super().start()
        self.listeners_closed_r, self.listeners_closed_w = os.pipe()

    def handle_int(self):
        self.handle_term()

    def kill_workers(self, sig):
        if not self.LISTENERS:
            self.tell_listeners_closed()
        # stop() SIGKILLs the workers alive after graceful_timeout.
        if sig == signal.SIGKILL and self.WORKERS:
            self.cut_off = True
        super().kill_workers(sig)

    def tell_listeners_closed(self):
        if self.listeners_closed_w is not None:
            os.close(self.listeners_closed_w)
            self.listeners_closed_w = None

    def halt(self, reason=None, exit_status=0):
        self.stop()  # to learn whether requests were cut off; halt's is then a no-op
        if self.cut_off and exit_status == 0:
            self.log.warning("Shutdown timeout: requests were cut off")
            exit_status = 1
        super().halt(reason, exit_status)


# Signals a new worker process got between fork and the post_fork hook.
_STOPS_BEFORE_POST_FORK = []


def remember_stop_after_fork():
    """In each child after fork: a SIGTERM before the worker's own handlers is kept, not lost."""
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda signum, _frame: _STOPS_BEFORE_POST_FORK.append(signum))


def gunicorn_settings(config: Config, metrics_dir: str) -> dict:
    def catch_stop_while_booting(arbiter, worker):
        if arbiter.listeners_closed_w is not None:  # the worker keeps the read end only
            arbiter.tell_listeners_closed()
            worker.listeners_closed_fd = arbiter.listeners_closed_r
        # The worker's handler until its final ones, handed stops remember_stop_after_fork caught.
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, worker.handle_exit)
        for sig in _STOPS_BEFORE_POST_FORK:
            worker.handle_exit(sig, None)

    def freeze_loaded_objects(_worker):
        gc.freeze()  # what is loaded now lives on: no more 18-80 ms full collections

    def forget_dead_worker(_arbiter, worker):
        # prometheus_client's multiprocess mode, as documented for gunicorn.
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid, metrics_dir)

    # HTTP_MAX_CONNECTIONS is the service's: each worker's Pool holds its share.
    workers = min(config.web_concurrency, config.max_connections)
    return {
        "bind": [config.bind],
        "workers": workers,
        "worker_class": worker_class(config.http_nodelay, config.header_timeout),
        "worker_connections": config.max_connections // workers,
        # The idle timeout; 0: keep-alive off, "Connection: close" on every response.
        "keepalive": config.keepalive_timeout if config.http_keepalive else 0,
        "graceful_timeout": config.shutdown_timeout,
        "loglevel": "warning" if config.log_level == "warn" else config.log_level,
        "errorlog": "-",
        "accesslog": None,
        "proc_name": "productpage",
        # It would be a file in $HOME shared by every instance (read-only in Kubernetes).
        "control_socket_disable": True,
        "post_fork": catch_stop_while_booting,
        "post_worker_init": freeze_loaded_objects,
        "child_exit": forget_dead_worker,
        "on_exit": lambda _arbiter: shutil.rmtree(metrics_dir, ignore_errors=True),
    }


class ProductpageServer(BaseApplication):
    def __init__(self, config: Config, secret_key: str, metrics_dir: str):
        self.config = config
        self.secret_key = secret_key
        self.metrics_dir = metrics_dir
        super().__init__()

    def load_config(self):
        for name, value in gunicorn_settings(self.config, self.metrics_dir).items():
            self.cfg.set(name, value)

    def load(self):
        # In the worker, after gevent's patching: urllib3 gets gevent's sockets,
        # prometheus_client PROMETHEUS_MULTIPROC_DIR, and the master stays light.
        from ..app import create_app

        return create_app(self.config, self.secret_key)

    def run(self):
        os.register_at_fork(after_in_child=remember_stop_after_fork)
        try:
            DrainingArbiter(self).run()
        except RuntimeError as err:
            print(f"productpage: {err}", file=sys.stderr)
            sys.exit(1)
