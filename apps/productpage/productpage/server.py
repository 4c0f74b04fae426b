"""gunicorn, configured from our Config instead of its own flags and files."""

import os
import shutil
import signal
import sys

from gunicorn.app.base import BaseApplication
from gunicorn.arbiter import Arbiter

from .balance import Balance
from .config import Config
from .workers import CUT_OFF_MARKER, mark_cut_off, worker_class

_GUNICORN_LOG_LEVELS = {"debug": "debug", "info": "info", "warn": "warning", "error": "error"}


class _DrainOnInterrupt(Arbiter):
    # The master treats SIGINT as a quick shutdown; ours drains as on SIGTERM.
    def handle_int(self):
        self.handle_term()

    def kill_workers(self, sig):
        # Stopping ends by SIGKILLing the workers still alive after the
        # shutdown timeout: they had requests left.
        if sig == signal.SIGKILL and self.WORKERS:
            mark_cut_off()
        super().kill_workers(sig)


def gunicorn_settings(config: Config, metrics_dir: str, balance: Balance = None) -> dict:
    def assign_slot(arbiter, worker):
        if balance is not None:
            worker.slot = balance.assign_slot({w.slot for w in arbiter.WORKERS.values()})

    def catch_stop_while_booting(_arbiter, worker):
        # A forked worker inherits the master's signal handlers, which only
        # queue the signal for the master's loop: a SIGTERM arriving before
        # the worker installs its own (after gevent's patching) would be lost
        # and the worker would run until killed at the shutdown timeout.
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, worker.handle_exit)

    def release_slot(_arbiter, worker):
        if balance is not None:
            balance.release(worker.slot)

    def remove_metrics_dir_and_report(_arbiter):
        cut_off = os.path.exists(os.path.join(metrics_dir, CUT_OFF_MARKER))
        shutil.rmtree(metrics_dir, ignore_errors=True)
        if cut_off:
            # on_exit runs right before the master's own exit(0): a drain that
            # abandoned requests must not look like a clean one.
            sys.exit(1)

    return {
        "bind": [config.bind],
        "workers": config.web_concurrency,
        "worker_class": worker_class(config.http_nodelay, balance),
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
        "pre_fork": assign_slot,
        "post_fork": catch_stop_while_booting,
        "child_exit": release_slot,
        "on_exit": remove_metrics_dir_and_report,
    }


class ProductpageServer(BaseApplication):
    def __init__(self, config: Config, secret_key: str, metrics_dir: str):
        self.config = config
        self.secret_key = secret_key
        self.metrics_dir = metrics_dir
        # Shared memory must exist before the workers are forked.
        self.balance = Balance(config.web_concurrency) if config.web_concurrency > 1 else None
        super().__init__()

    def load_config(self):
        for name, value in gunicorn_settings(self.config, self.metrics_dir, self.balance).items():
            self.cfg.set(name, value)

    def load(self):
        # Imported here, in each worker after fork, so that prometheus_client
        # sees PROMETHEUS_MULTIPROC_DIR and nothing heavy loads in the master.
        from .app import create_app
        return create_app(self.config, self.secret_key)

    def run(self):
        try:
            _DrainOnInterrupt(self).run()
        except RuntimeError as err:
            print(f"productpage: {err}", file=sys.stderr)
            sys.exit(1)
