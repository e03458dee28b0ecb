"""The Redis key layout, shared with Node's store (js/src/server/store/key-layout.js;
both replay tests/vectors/store_keys.json). Version 2: every key names its kind and
the caller's part is escaped, so no threadId or claim scope can name a key of
another kind or another thread."""

from __future__ import annotations

LAYOUT = "v2"
_ESCAPES = str.maketrans({"%": "%25", "{": "%7B", "}": "%7D", ":": "%3A"})


def escape_key_part(text: str) -> str:
    """``text`` with the characters that delimit a key's parts escaped."""
    return str(text).translate(_ESCAPES)


def _base(prefix: str, kind: str, part: str) -> str:
    return f"{prefix}{LAYOUT}:{{{kind}:{escape_key_part(part)}}}"


def thread_base(prefix: str, thread_id: str) -> str:
    return _base(prefix, "t", thread_id)


def run_base(prefix: str, key: str) -> str:
    return _base(prefix, "r", key)


def run_id_key(prefix: str, run_id: str) -> str:
    return f"{_base(prefix, 'i', run_id)}:runs"


def claim_key(prefix: str, scope: str, id: str) -> str:  # noqa: A002
    return f"{_base(prefix, 'c', scope)}:claim:{escape_key_part(id)}"
