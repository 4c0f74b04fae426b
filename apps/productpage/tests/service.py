"""Run the real service (./serve) as a child process on a free loopback port."""

import http.client
import os
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

APP_DIR = Path(__file__).resolve().parents[1]
SERVE = APP_DIR / "serve"
START_TIMEOUT = 20.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def base_env(extra: dict[str, str]) -> dict[str, str]:
    """A clean environment: none of the test runner's knobs leak in."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k in ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT")
    }
    env.update(extra)
    return env


def run_serve(env: dict[str, str], timeout: float = 20.0) -> subprocess.CompletedProcess:
    """Run ./serve to completion (for configurations that must not start)."""
    return subprocess.run(
        [str(SERVE)], env=base_env(env), capture_output=True, text=True, timeout=timeout, cwd="/"
    )


class Service:
    def __init__(self, env: dict[str, str]):
        self.port = free_port()
        self.env = {"PORT": str(self.port), "LISTEN_ADDRESS": "127.0.0.1", **env}
        # Open for the server's lifetime; cleanup() closes and removes them.
        self._out = tempfile.NamedTemporaryFile(prefix="productpage-out-", delete=False)  # noqa: SIM115
        self._err = tempfile.NamedTemporaryFile(prefix="productpage-err-", delete=False)  # noqa: SIM115
        # cwd is / to prove ./serve works from any directory.
        self.proc = subprocess.Popen(
            [str(SERVE)], env=base_env(self.env), cwd="/", stdout=self._out, stderr=self._err
        )
        try:
            self._wait_ready()
        except BaseException:
            # The caller never gets this object to clean up: do not leak the server.
            self.cleanup()
            raise

    def _wait_ready(self):
        deadline = time.monotonic() + START_TIMEOUT
        want = int(self.env.get("WEB_CONCURRENCY", "2"))
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"productpage exited {self.proc.returncode}: {self.stderr()}")
            try:
                if len(self.workers()) == want and self._served_by_every_worker():
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"productpage did not start: {self.stderr()}")

    def _served_by_every_worker(self, tries: int = 50) -> bool:
        """Every worker has booted and answers (a worker is forked long before
        its app is loaded). The workers share one listening socket and the
        kernel picks who accepts, so fresh connections are tried until each
        worker has served one."""
        workers = self.workers()
        served = set()
        for _ in range(tries):
            with socket.create_connection(("127.0.0.1", self.port), timeout=5) as sock:
                # Asked before the request: without keep-alive the server
                # closes its end right after answering.
                pid = workers[0] if len(workers) == 1 else None
                for _ in range(100):
                    if pid:
                        break
                    pid = serving_pid(sock, workers)
                    time.sleep(0.001)
                sock.sendall(b"GET /health HTTP/1.1\r\nHost: test\r\n\r\n")
                if not sock.recv(65536).startswith(b"HTTP/1.1 200 "):
                    return False
                served.add(pid)
            if served >= set(workers):
                return True
        return False

    def connection(self, timeout: float = 10.0) -> http.client.HTTPConnection:
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def request(self, method: str, path: str, body=None, headers: dict[str, str] | None = None):
        """One request on a new connection: (status, headers, body)."""
        conn = self.connection()
        try:
            conn.request(method, path, body=body, headers=headers or {})
            response = conn.getresponse()
            return response.status, response.headers, response.read()
        finally:
            conn.close()

    def workers(self) -> list[int]:
        try:
            children = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read_text()
        except OSError:
            return []
        return [int(pid) for pid in children.split()]

    def stdout(self) -> str:
        return Path(self._out.name).read_text(errors="replace")

    def stderr(self) -> str:
        return Path(self._err.name).read_text(errors="replace")

    def signal(self, sig=signal.SIGTERM):
        self.proc.send_signal(sig)

    def stop(self, timeout: float = 15.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for f in (self._out, self._err):
            f.close()
        return self.proc.returncode

    def cleanup(self):
        self.stop()
        for f in (self._out, self._err):
            os.unlink(f.name)


def serving_pid(client: socket.socket, candidates: list[int]) -> int | None:
    """Which of the candidate processes holds the server end of client's connection."""
    local_port = client.getsockname()[1]
    remote_port = client.getpeername()[1]
    inode = None
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, remote = fields[1], fields[2]
        if (
            int(local.split(":")[1], 16) == remote_port
            and int(remote.split(":")[1], 16) == local_port
        ):
            inode = fields[9]
            break
    if inode is None:
        return None
    target = f"socket:[{inode}]"
    for pid in candidates:
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                try:
                    if os.readlink(f"/proc/{pid}/fd/{fd}") == target:
                        return pid
                except OSError:
                    continue
        except OSError:
            continue
    return None
