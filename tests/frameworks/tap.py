"""The tests' window into a framework server: an ASGI wrapper, innermost
(between the framework's app and StateSyncMiddleware, when there is one),
that records what the framework itself received and sent, byte for byte,
per thread, and answers GET /_truth?threadId=... with it:

    {"runs": [{"runId", "input" (the RunAgentInput the framework got), "text"
    (its SSE bytes, as text), "bytes", "complete"}], "state": the framework's
    own state of the thread, "effects": how many times the approved effect ran,
    "facts": what else the app tells of the thread (LangGraph: the nodes still
    to run, its pending interrupts, the payments waiting at a hold; PydanticAI:
    how often its tools ran)}

and, for an app that can hold its effect (LangGraph), POST /_hold?threadId=...&on=1|0
holds or releases the thread's effect (langgraph_app.hold).

It does not change a byte in either direction.
"""

from __future__ import annotations

import json
from typing import Any, Awaitable, Callable, Dict, List, Optional
from urllib.parse import parse_qs

Hook = Callable[[str], Awaitable[Any]]


class Tap:
    def __init__(self, app: Any, *, path: str, state_of: Hook, effects_of: Callable[[str], int],
                 facts_of: Optional[Hook] = None, hold: Optional[Callable[[str, bool], None]] = None) -> None:
        self.app = app
        self.path = path
        self.state_of = state_of
        self.effects_of = effects_of
        self.facts_of = facts_of
        self.hold = hold
        self.runs: Dict[str, List[Dict[str, Any]]] = {}

    async def __call__(self, scope: Dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") == "http" and scope.get("path") == "/_truth":
            await self._truth(scope, send)
        elif scope.get("type") == "http" and scope.get("path") == "/_hold" and self.hold is not None:
            query = parse_qs(scope.get("query_string", b"").decode())
            self.hold((query.get("threadId") or [""])[0], (query.get("on") or ["1"])[0] == "1")
            await send({"type": "http.response.start", "status": 204, "headers": []})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        elif scope.get("type") == "http" and scope.get("method") == "POST" and scope.get("path") == self.path:
            await self._recorded(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    async def _recorded(self, scope: Dict[str, Any], receive: Any, send: Any) -> None:
        body = b""
        while True:  # the request body, read whole, then handed to the app as it came
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        try:
            run_input = json.loads(body)
        except ValueError:
            run_input = {}
        record = {"runId": run_input.get("runId"), "input": run_input, "text": "", "bytes": 0, "complete": False}
        self.runs.setdefault(str(run_input.get("threadId") or ""), []).append(record)
        delivered = False

        async def replay() -> Dict[str, Any]:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        async def tee(message: Dict[str, Any]) -> None:
            if message["type"] == "http.response.body":
                chunk = message.get("body", b"")
                record["bytes"] += len(chunk)
                record["text"] += chunk.decode("utf-8", "replace")
                if not message.get("more_body"):
                    record["complete"] = True
            await send(message)

        await self.app(scope, replay, tee)

    async def _truth(self, scope: Dict[str, Any], send: Any) -> None:
        query = parse_qs(scope.get("query_string", b"").decode())
        thread_id = (query.get("threadId") or [""])[0]
        answer = {"runs": self.runs.get(thread_id, []), "state": await self.state_of(thread_id),
                  "effects": self.effects_of(thread_id),
                  "facts": await self.facts_of(thread_id) if self.facts_of is not None else {}}
        body = json.dumps(answer).encode("utf-8")
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body, "more_body": False})
