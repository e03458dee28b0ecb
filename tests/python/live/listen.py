"""Serves an ASGI app for the live tests (not a test file): uvicorn on
127.0.0.1, a port the kernel picks, printed as "listening <port>" once the
socket listens (tests/python/live/python-server.mjs waits for that line)."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import uvicorn


def serve(app: Any) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)  # connections queue from here on, before uvicorn serves them
    print(f"listening {sock.getsockname()[1]}", flush=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    asyncio.run(server.serve(sockets=[sock]))
