"""Who may read, change or consume a thread (SECURITY.md, docs/wire.md
section 12), for StateSyncMiddleware. The decision is the core's access gate
(_core.judge_access, src/facade/access_gate.h), the one the Node proxy drives
too; this file does what each verdict asks: grants read and written in the
store (the claim/peek/release contract), the deployer's ``authorize``
callable asked, and the app's answer handed back.

The backend is the wrapped app: a requester (the core's digest of its
Authorization and Cookie headers, what the app authenticates) is authorized for a thread
once the app answered 2xx to a run of theirs on it.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Dict, List, Optional

from . import _core
from ._json import json_bytes, parse
from .errors import AguiSyncError

_MAX_STEPS = 4  # lookup, ask, then the verdict
_GRANTED = "granted"
DEFAULT_GRANT_TTL_MS = 60 * 60 * 1000
CREDENTIAL_HEADERS = ("authorization", "cookie")


def credentials_of(headers: Dict[str, str]) -> List[Optional[str]]:
    """The credential headers' values (``headers``: lower-case names, first values), trimmed, None
    when absent, in the proxy's order: the core digests them into the requester."""
    return [headers[name].strip() if name in headers else None for name in CREDENTIAL_HEADERS]


class Refused(Exception):
    """The gate refused: 403 not-authorized, nothing of the thread."""


class Unjudged(Exception):
    """The gate could not read the request (a resume nested too deep, say): 400 with the code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class AccessGate:
    def __init__(self, store: Any, authorize: Optional[Callable[..., Any]] = None,
                 grant_ttl_ms: int = DEFAULT_GRANT_TTL_MS) -> None:
        self.store = store
        self.authorize = authorize
        self.grant_ttl_ms = grant_ttl_ms

    async def admit(self, request: Dict[str, Any]) -> str:
        """request: {kind, threadId, credentials, resume, headers} -> 'serve' | 'forward';
        raises Refused (not authorized), or Unjudged (a request the gate cannot read: 400)."""
        known = {"kind": request["kind"], "threadId": request["threadId"], "credentials": request["credentials"],
                 "resume": request.get("resume"), "looked": False, "granted": False,
                 "hasAuthorizer": self.authorize is not None, "authorized": None, "upstreamStatus": None}
        verdict = await self._drive(known, request)
        if verdict == "refuse":
            raise Refused()
        return verdict

    async def settle(self, request: Dict[str, Any], status: int) -> bool:
        """The app's status for a run of ``request``: True once granted, False when denied."""
        known = {"kind": "start", "threadId": request["threadId"], "credentials": request["credentials"],
                 "upstreamStatus": status}
        return await self._drive(known, request) == "serve"

    async def _drive(self, known: Dict[str, Any], request: Dict[str, Any]) -> str:
        try:
            return await self._steps(known, request)
        except (AguiSyncError, Unjudged, RuntimeError):
            raise
        except Exception as error:  # the grants' store failed (a dropped connection): nothing is decided
            raise AguiSyncError("store-unavailable", f"the grants' store is unreachable ({error})") from None

    async def _steps(self, known: Dict[str, Any], request: Dict[str, Any]) -> str:
        for _ in range(_MAX_STEPS):
            try:
                request_json = json_bytes(known, "the access request")
            except AguiSyncError as error:  # a resume nested too deep for JSON, say
                raise Unjudged(error.code, str(error)) from None
            v = parse(_core.judge_access(request_json))
            if not v.get("ok"):
                raise Unjudged(v["code"], v["message"])
            verdict = v["verdict"]
            if verdict == "lookup":
                known["looked"] = True
                known["granted"] = await self.store.peek(v["scope"], v["id"]) is not None
            elif verdict == "ask":
                known["authorized"] = await self._ask(request)
            elif verdict == "grant":
                await self.store.release(v["scope"], v["id"], _GRANTED)
                await self.store.claim(v["scope"], v["id"], _GRANTED, self.grant_ttl_ms)
                return "serve"
            elif verdict == "deny":
                await self.store.release(v["scope"], v["id"], _GRANTED)
                return "deny"
            else:
                return verdict  # serve, forward, refuse
        raise RuntimeError(f"the access gate did not settle in {_MAX_STEPS} steps")  # a bug in the core's step function

    async def _ask(self, request: Dict[str, Any]) -> bool:
        """Only True authorizes; anything else, or a raise, refuses."""
        try:
            answer = self.authorize(kind=request["kind"], thread_id=request["threadId"], headers=request["headers"])
            if inspect.isawaitable(answer):
                answer = await answer
        except Exception:  # noqa: BLE001 - the deployer's check failed: refuse
            return False
        return answer is True
