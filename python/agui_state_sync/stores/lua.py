"""The Redis store's Lua scripts, from the one copy the npm package loads too
(js/src/server/store/lua/, installed into this package's stores/lua/ by
bindings/python/CMakeLists.txt). A script's first line may be
``-- uses: lib-a lib-b``: those libraries' texts (each with its own uses,
each once, dependencies first) go before it, exactly as
js/src/server/store/redis-scripts.js assembles them, so both languages send
Redis the same bytes (the same SHA1 in its script cache). The proxy's run
logs' scripts (js/src/proxy/lua/, installed into stores/run_lua/) are
assembled the same way from RUN_LUA_DIR (stores/run_log.py)."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Set

from ..errors import sync_error

LUA_DIR = Path(__file__).with_name("lua")
RUN_LUA_DIR = Path(__file__).with_name("run_lua")
_USES = re.compile(r"^-- uses:(.*)\n")
SCRIPTS = ("append", "claim", "init", "load", "release", "reset")


def _assemble(name: str, included: Set[str], folder: Path) -> str:
    try:
        text = (folder / f"{name}.lua").read_text(encoding="utf-8")
    except OSError as error:
        raise sync_error("load-failed", f"the Redis store's script {name}.lua is missing ({error})") from None
    out = ""
    uses = _USES.match(text)
    for lib in (uses.group(1) if uses else "").split(" "):
        if lib and lib not in included:
            included.add(lib)
            out += _assemble(lib, included, folder)
    return out + text


@lru_cache(maxsize=None)
def script_text(name: str, folder: Path = LUA_DIR) -> str:
    """The full text of a script: 'append', 'claim', 'init', 'load', 'release' or 'reset';
    or one in another ``folder`` (RUN_LUA_DIR: 'run-open', 'run-append', ...)."""
    return _assemble(name, set(), folder)
