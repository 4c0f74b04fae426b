"""productpage: the Bookinfo product page (Flask on gunicorn)."""
