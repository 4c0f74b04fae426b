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

_GUNICORN_LOG_LEVELS = {"debug": "debug", "info": "info", "warn": "warning", "error": "error"}


class DrainingArbiter(Arbiter):
    """gunicorn's master, with SIGINT draining like SIGTERM, and a non-zero
    exit when stopping had to kill workers that still served requests."""

    cut_off = False
    # A pipe whose write end only the master holds, closed once stop() has
    # closed the listening sockets: it tells the workers that the whole
    # server stops (see worker.await_master), not one worker (a reload).
    listeners_closed_r = listeners_closed_w = None

    def start(self):
        super().start()
        self.listeners_closed_r, self.listeners_closed_w = os.pipe()

    def handle_int(self):
        self.handle_term()

    def kill_workers(self, sig):
        if not self.LISTENERS:
            self.tell_listeners_closed()
        # stop() ends by SIGKILLing the workers still alive after
        # graceful_timeout: they had requests left.
        if sig == signal.SIGKILL and self.WORKERS:
            self.cut_off = True
        super().kill_workers(sig)

    def tell_listeners_closed(self):
        if self.listeners_closed_w is not None:
            os.close(self.listeners_closed_w)
            self.listeners_closed_w = None

    def halt(self, reason=None, exit_status=0):
        # Stop first to learn whether requests were cut off; halt's own
        # stop() then finds nothing left to do.
        self.stop()
        if self.cut_off and exit_status == 0:
            self.log.warning("Shutdown timeout: requests were cut off")
            exit_status = 1
        super().halt(reason, exit_status)


# Signals a new worker process got between fork and the post_fork hook.
_STOPS_BEFORE_POST_FORK = []


def remember_stop_after_fork():
    """Run in every child right after fork (os.register_at_fork).

    A forked worker inherits the master's signal handlers, which only queue
    the signal for the master's loop: a SIGTERM arriving before the worker
    installs its own would be lost, and the worker would run until killed at
    the shutdown timeout.
    """

    def remember(sig, _frame):
        _STOPS_BEFORE_POST_FORK.append(sig)

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, remember)


def gunicorn_settings(config: Config, metrics_dir: str) -> dict:
    def catch_stop_while_booting(arbiter, worker):
        # The worker keeps the read end of DrainingArbiter's pipe only.
        if arbiter.listeners_closed_w is not None:
            os.close(arbiter.listeners_closed_w)
            arbiter.listeners_closed_w = None
            worker.listeners_closed_fd = arbiter.listeners_closed_r
        # The worker's own handler until it installs its final ones (after
        # gevent's patching); a stop that came earlier (see
        # remember_stop_after_fork) is handed to it now.
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, worker.handle_exit)
        for sig in _STOPS_BEFORE_POST_FORK:
            worker.handle_exit(sig, None)

    def freeze_loaded_objects(_worker):
        # Everything loaded so far (Flask, Jinja, gevent, urllib3, the app)
        # lives as long as the worker. Left in the collector's generations,
        # every full collection walks it again (measured: 18-80 ms stalls of
        # every request on the worker); frozen, only what requests leave
        # behind is walked.
        gc.freeze()

    def forget_dead_worker(_arbiter, worker):
        # prometheus_client's multiprocess mode, as documented for gunicorn.
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid, metrics_dir)

    def remove_metrics_dir(_arbiter):
        shutil.rmtree(metrics_dir, ignore_errors=True)

    # HTTP_MAX_CONNECTIONS is the service's: each worker's gevent Pool holds
    # its share (the remainder unused). A full worker stops accepting; beyond
    # every share, new connections wait in the listen backlog.
    workers = min(config.web_concurrency, config.max_connections)
    return {
        "bind": [config.bind],
        "workers": workers,
        "worker_class": worker_class(config.http_nodelay, config.header_timeout),
        "worker_connections": config.max_connections // workers,
        # gunicorn's keepalive is the idle timeout; 0 turns keep-alive off and
        # makes every response carry "Connection: close".
        "keepalive": config.keepalive_timeout if config.http_keepalive else 0,
        "graceful_timeout": config.shutdown_timeout,
        "loglevel": _GUNICORN_LOG_LEVELS[config.log_level],
        "errorlog": "-",
        "accesslog": None,
        "proc_name": "productpage",
        # No control socket: it would be a file in $HOME shared by every
        # instance, and the root filesystem is read-only in Kubernetes.
        "control_socket_disable": True,
        "post_fork": catch_stop_while_booting,
        "post_worker_init": freeze_loaded_objects,
        "child_exit": forget_dead_worker,
        "on_exit": remove_metrics_dir,
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
        # Imported here, in each worker after fork and gevent's patching, so
        # that prometheus_client sees PROMETHEUS_MULTIPROC_DIR, urllib3 gets
        # gevent's sockets, and nothing heavy loads in the master.
        from ..app import create_app

        return create_app(self.config, self.secret_key)

    def run(self):
        os.register_at_fork(after_in_child=remember_stop_after_fork)
        try:
            DrainingArbiter(self).run()
        except RuntimeError as err:
            print(f"productpage: {err}", file=sys.stderr)
            sys.exit(1)
