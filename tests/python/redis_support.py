"""A real redis-server for the store tests, on a free 127.0.0.1 port, started
and killed by pid. Ready when it says so on its log (read line by line: no
polling, no sleeps)."""

from __future__ import annotations

import shutil
import socket
import subprocess
from typing import Iterator

import pytest

REDIS_SERVER = shutil.which("redis-server")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    if REDIS_SERVER is None:
        pytest.skip("redis-server not installed (make deps)")
    port = free_port()
    server = subprocess.Popen([REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                               "--appendonly", "no"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        for line in server.stdout:  # type: ignore[union-attr]
            if "Ready to accept connections" in line:
                break
        else:
            pytest.fail(f"redis-server exited with {server.wait()}")
        yield f"redis://127.0.0.1:{port}"
    finally:
        server.kill()
        server.wait()
