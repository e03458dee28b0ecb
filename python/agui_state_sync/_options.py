"""Keyword options in Python's spelling -> the facades' camelCase JSON.

Only the spelling and the Python-side defaults (a random clientId / epoch, as
the JS package draws them) live here; every value is judged by the C++
facade, whose refusal becomes an AguiSyncTypeError 'invalid-options'."""

from __future__ import annotations

import secrets
import uuid
from typing import Any, Dict, Mapping

from ._json import json_text
from .errors import failure_error, sync_type_error


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def options_json(options: Mapping[str, Any], what: str) -> str:
    """{snake_name: value} without the Nones, as the facade's JSON options."""
    picked: Dict[str, Any] = {camel(k): v for k, v in options.items() if v is not None}
    return json_text(picked, f"{what} options", "invalid-options")


def random_client_id() -> str:
    # Random, never a counter or a clock: two clients of one user must never
    # mint the same editId (the agent applies each editId once).
    return secrets.token_hex(16)


def random_epoch() -> str:
    return str(uuid.uuid4())


def check_init(result: Mapping[str, Any], what: str) -> None:
    """A facade's initResult(): raise its refusal as a TypeError."""
    if result.get("ok"):
        return
    error = failure_error(result, "invalid-options", f"{what}: {result.get('message')}")
    raise sync_type_error(error.code, f"{what}: {result.get('message')}")


def unknown_options(extra: Mapping[str, Any], what: str) -> None:
    if extra:
        raise sync_type_error("invalid-options", f"unknown {what} option {next(iter(extra))!r}")
