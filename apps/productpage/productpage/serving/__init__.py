"""The serving layer: gunicorn configured from our Config (server.py), its
gevent worker with the wire rules and the drain (worker.py, rules.py), and a
listening socket closed without a reset (listener.py). The rules themselves
are docs/contract.md's; the Flask app knows nothing of them."""

from .server import ProductpageServer, gunicorn_settings

__all__ = ["ProductpageServer", "gunicorn_settings"]
