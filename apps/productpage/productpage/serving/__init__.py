"""The serving layer: gunicorn from our Config (server.py), its worker with
docs/contract.md's wire rules and the drain (worker.py, rules.py, listener.py)."""
