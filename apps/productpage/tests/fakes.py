"""A real HTTP/1.1 server on loopback standing in for details, reviews or ratings.

Tests script its answers per path (status, body, delay, or a sequence of
answers consumed in order) and read back what it received: path, headers and
which TCP connection each request came on.
"""

import itertools
import json
import socket
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DETAILS = {
    "id": 0,
    "author": "William Shakespeare",
    "year": 1595,
    "type": "paperback",
    "pages": 200,
    "publisher": "PublisherA",
    "language": "English",
    "ISBN-10": "1234567890",
    "ISBN-13": "123-1234567890",
}


def reviews_body(
    stars=(5, 4),
    color="black",
    podname="reviews-v2-abc",
    clustername="null",
    rating_error=False,
    ratings=True,
):
    texts = (
        "An extremely entertaining play by Shakespeare. The slapstick humour is refreshing!",
        "Absolutely fun and entertaining. The play lacks thematic depth when compared to "
        "other plays by Shakespeare.",
    )
    reviews = []
    for i, text in enumerate(texts):
        review = {"reviewer": f"Reviewer{i + 1}", "text": text}
        if rating_error:
            review["rating"] = {"error": "Ratings service is currently unavailable"}
        elif ratings:
            review["rating"] = {"stars": stars[i], "color": color}
        reviews.append(review)
    return {"id": "0", "podname": podname, "clustername": clustername, "reviews": reviews}


@dataclass
class Answer:
    status: int = 200
    body: bytes = b"{}"
    delay: float = 0.0
    server_timing: str | None = None


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    connection: int


class FakeBackend:
    def __init__(self):
        self.answers: dict[str, list[Answer]] = {}
        self.requests: list[Seen] = []
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._ids = itertools.count(1)
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Our answers are written head and body apart; without this the
            # peer's delayed ACK would add 40 ms to every kept-alive answer.
            disable_nagle_algorithm = True

            def setup(self):
                super().setup()
                self.connection_id = next(fake._ids)

            def do_GET(self):
                answer = fake._record(self.path, dict(self.headers.items()), self.connection_id)
                if answer.delay:
                    fake._closing.wait(answer.delay)
                self.send_response(answer.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer.body)))
                if answer.server_timing is not None:
                    self.send_header("Server-Timing", answer.server_timing)
                self.end_headers()
                self.wfile.write(answer.body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self._thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    def answer(self, path, status=200, body=None, delay=0.0, server_timing=None):
        """Answer every GET path with this, from now on."""
        self.answers[path] = [Answer(status, _bytes(body), delay, server_timing)]

    def sequence(self, path, *answers: Answer):
        """Answer GET path with these in turn; the last one repeats."""
        self.answers[path] = list(answers)

    def reset(self):
        with self._lock:
            self.answers.clear()
            self.requests.clear()

    def seen(self, path=None) -> list[Seen]:
        with self._lock:
            return [r for r in self.requests if path is None or r.path == path]

    def per_connection(self) -> list[int]:
        """Request counts per TCP connection, in order of first use."""
        counts = {}
        for request in self.seen():
            counts[request.connection] = counts.get(request.connection, 0) + 1
        return list(counts.values())

    def close(self):
        self._closing.set()
        self.server.shutdown()
        self.server.server_close()

    def _record(self, path, headers, connection) -> Answer:
        with self._lock:
            self.requests.append(Seen(path, {k.lower(): v for k, v in headers.items()}, connection))
            answers = self.answers.get(path)
            if not answers:
                return Answer(404, b'{"error":"no answer scripted"}')
            return answers.pop(0) if len(answers) > 1 else answers[0]


def _bytes(body) -> bytes:
    if body is None:
        return b"{}"
    if isinstance(body, bytes):
        return body
    if isinstance(body, str):
        return body.encode()
    return json.dumps(body).encode()


class Bookinfo:
    """details, reviews and ratings fakes, scripted like the healthy v2 sample."""

    def __init__(self):
        self.details = FakeBackend()
        self.reviews = FakeBackend()
        self.ratings = FakeBackend()
        self.healthy()

    def healthy(self):
        for fake in (self.details, self.reviews, self.ratings):
            fake.reset()
        self.details.answer("/details/0", body=DETAILS)
        self.reviews.answer("/reviews/0", body=reviews_body())
        self.ratings.answer(
            "/ratings/0", body={"id": 0, "ratings": {"Reviewer1": 5, "Reviewer2": 4}}
        )

    def env(self) -> dict[str, str]:
        return {
            "DETAILS_HOSTNAME": "127.0.0.1",
            "DETAILS_SERVICE_PORT": str(self.details.port),
            "REVIEWS_HOSTNAME": "127.0.0.1",
            "REVIEWS_SERVICE_PORT": str(self.reviews.port),
            "RATINGS_HOSTNAME": "127.0.0.1",
            "RATINGS_SERVICE_PORT": str(self.ratings.port),
        }

    def close(self):
        for fake in (self.details, self.reviews, self.ratings):
            fake.close()


class RawServer:
    """A loopback server of raw sockets for tests that need bytes no HTTP
    library would send: a thread per connection runs handle(sock).
    connections counts the accepted ones."""

    def __init__(self):
        self.connections = 0
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                sock, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self.handle, args=(sock,), daemon=True).start()

    def handle(self, sock):
        raise NotImplementedError

    def close(self):
        self.listener.close()
