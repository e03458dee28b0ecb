"""ASGI plumbing for StateSyncMiddleware: the request body read once and
replayed to the app, the app's response caught on its way out, and the
sequenced stream interleaved with heartbeats."""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator, Awaitable, Callable, Dict, List, Optional

Message = Dict[str, Any]
Send = Callable[[Message], Awaitable[None]]
Receive = Callable[[], Awaitable[Message]]
_END = object()


class BodyTooLarge(Exception):
    """The request body passed the middleware's max_body_bytes (answered 413)."""


async def read_body(receive: Receive, max_bytes: Optional[int] = None) -> bytes:
    """The whole body, in linear time; BodyTooLarge as soon as it passes ``max_bytes``."""
    parts: List[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ConnectionAbortedError("the client went away before the request body arrived")
        chunk = message.get("body", b"")
        size += len(chunk)
        if max_bytes is not None and size > max_bytes:
            raise BodyTooLarge()
        parts.append(chunk)
        if not message.get("more_body"):
            return b"".join(parts)


def request_headers(scope: Dict[str, Any]) -> Dict[str, str]:
    """The request's headers, lower-cased names, first value of each."""
    headers: Dict[str, str] = {}
    for name, value in scope.get("headers", []):
        headers.setdefault(bytes(name).decode("latin-1").lower(), bytes(value).decode("latin-1"))
    return headers


def replay(body: bytes, receive: Receive) -> Receive:
    """The app's receive(): the (rewritten) body once, then the client's own messages (a disconnect)."""
    sent = False

    async def app_receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()
    return app_receive


def detached_receive(body: bytes, over: asyncio.Event) -> Receive:
    """The app's receive() for a held run: the (rewritten) body once, then
    nothing until the run is over. The app never hears its client go away
    (Starlette's StreamingResponse would cancel the endpoint): the run outlives
    the connection, and a client that comes back resumes it."""
    async def after_run() -> Message:
        await over.wait()
        return {"type": "http.disconnect"}
    return replay(body, after_run)


def with_length(scope: Dict[str, Any], length: int) -> Dict[str, Any]:
    headers = [(k, v) for k, v in scope.get("headers", []) if k.lower() != b"content-length"]
    return {**scope, "headers": [*headers, (b"content-length", str(length).encode())]}


def is_event_stream(start: Message) -> bool:
    if start.get("status") != 200:
        return False
    content_type = next((v for k, v in start.get("headers", []) if k.lower() == b"content-type"), b"")
    return content_type.split(b";")[0].strip().lower() == b"text/event-stream"


class ResponseTap:
    """The app's send(): an SSE response's body chunks go to ``chunks()``; any
    other response goes to the client untouched. ``on_body(n)`` hears the size
    of each SSE body chunk (the bytes read from the agent)."""

    def __init__(self, send: Send, on_body: Optional[Callable[[int], None]] = None) -> None:
        self._send = send
        self._on_body = on_body
        self._queue: "asyncio.Queue[Any]" = asyncio.Queue()
        self.start: Optional[Message] = None  # the SSE response's start, held back
        self.passthrough = False
        self.status: Optional[int] = None  # the app's status, once it started its response
        self.started = asyncio.Event()  # set when it did, or returned without
        # Told the status before the response goes anywhere (the access gate settles on it).
        self.on_start: Optional[Callable[[int], Awaitable[None]]] = None

    async def __call__(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.status = int(message.get("status", 200))
            self.started.set()
            if self.on_start is not None:
                await self.on_start(self.status)
            if is_event_stream(message):
                self.start = message
            else:
                self.passthrough = True
                self._queue.put_nowait(_END)
        if self.passthrough:
            await self._send(message)
            return
        if message["type"] == "http.response.body":
            if message.get("body"):
                self._queue.put_nowait(bytes(message["body"]))
                if self._on_body is not None:
                    self._on_body(len(message["body"]))
            if not message.get("more_body"):
                self._queue.put_nowait(_END)

    def finish(self) -> None:
        """The app returned (or failed): whatever it did not end ends here."""
        self.started.set()
        self._queue.put_nowait(_END)

    async def chunks(self) -> AsyncIterator[bytes]:
        while True:
            item = await self._queue.get()
            if item is _END:
                return
            yield item


def sse_start(start: Message) -> Message:
    """The app's response start without its content-length (the body is rewritten)."""
    headers: List[Any] = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
    return {**start, "headers": headers}
