"""One client connection of a held run (_run_holder.py), written to ASGI:
the items the core addressed to it, in order, until the run closes it or the
client goes away (then the core hears it left: its grace period may start).
The request's own task does this; the run goes on without it."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Callable, Dict, List, Optional, Tuple

from ._run_holder import ClientStream, HeldRun

SSE_HEADERS: List[Tuple[bytes, bytes]] = [(b"content-type", b"text/event-stream; charset=utf-8"),
                                          (b"cache-control", b"no-store"), (b"x-accel-buffering", b"no")]
HEADER_RESUME = b"x-agui-resume"
HEADER_ATTACH = b"x-agui-attach"


def resume_start(mode: str, attach: bool) -> Dict[str, Any]:
    """The head of a resumed or attached stream: X-AGUI-Resume: <mode> (and X-AGUI-Attach: run)."""
    headers = [*SSE_HEADERS, (HEADER_RESUME, mode.encode())]
    if attach:
        headers.append((HEADER_ATTACH, b"run"))
    return {"type": "http.response.start", "status": 200, "headers": headers}


async def _disconnected(receive: Any) -> None:
    """Returns once the client is gone (its request body was read already)."""
    while True:
        message = await receive()
        if message.get("type") == "http.disconnect":
            return


async def serve_client(run: HeldRun, client: ClientStream, send: Any, receive: Any, *,
                       head: Callable[[], Dict[str, Any]], on_void: Optional[Callable[[Any], Any]] = None) -> None:
    """Writes `client`'s items to `send`. head(): the response start when the
    first item is data (a starter's: the app's own head). on_void(why): the app
    never streamed (its answer passed through, or the run was refused)."""
    gone = asyncio.ensure_future(_disconnected(receive))
    started = False
    try:
        while True:
            item = asyncio.ensure_future(client.queue.get())
            done, _ = await asyncio.wait({item, gone}, return_when=asyncio.FIRST_COMPLETED)
            if item not in done:
                item.cancel()
                return
            kind, value = item.result()
            if kind == "void":
                if on_void is not None:
                    await on_void(value)
                return
            if kind == "refuse":
                await refuse(send, *value)
                return
            if kind == "head":
                await send(resume_start(value, client.join.get("attach", False)))
                started = True
                continue
            if not started:
                await send(head())
                started = True
            if kind == "close":
                await send({"type": "http.response.body", "body": b"", "more_body": False})
                return
            await send({"type": "http.response.body", "body": value, "more_body": True})
    except OSError:
        return  # the connection broke while written to: the client resumes from its last id
    finally:
        gone.cancel()
        run.left(client)


async def refuse(send: Any, status: int, code: str, message: str, headers: Optional[List[Tuple[bytes, bytes]]] = None) -> None:
    """A request answered with ``status`` and {error: {code, message}}: nothing of any run."""
    body = json.dumps({"error": {"code": code, "message": message}}).encode("utf-8")
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"cache-control", b"no-store"),
                            (b"content-length", str(len(body)).encode()), *(headers or [])]})
    await send({"type": "http.response.body", "body": body, "more_body": False})
