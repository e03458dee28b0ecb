"""The code lists, read from the C++ code table (include/agui_sync/codes.h)
through the native module, so that no Python copy can drift from it. The
names and order are those of js/src/engine/codes.js."""

from __future__ import annotations

from typing import Tuple

from . import _core

# CodeCategory flags in codes.h.
_RESYNC, _IGNORED, _ERROR, _GUARD, _EDIT = 1, 2, 4, 8, 16
_TABLE = tuple(_core.code_table())


def _names(category: int) -> Tuple[str, ...]:
    return tuple(name for name, flags, _ in _TABLE if flags & category)


def _resync_cured_by(cure: str) -> Tuple[str, ...]:
    return tuple(name for name, flags, c in _TABLE if flags & _RESYNC and c == cure)


RESYNC_REASONS = _names(_RESYNC)
IGNORED_REASONS = _names(_IGNORED)
ERROR_CODES = _names(_ERROR)
GUARD_REASONS = _names(_GUARD)
EDIT_REASONS = _names(_EDIT)
# Resync reasons after which the client's state is wrong: answer with a snapshot.
SNAPSHOT_REASONS = _resync_cured_by("snapshot")
# Resync reasons after which the state is right but behind: a replay heals it.
REPLAY_REASONS = _resync_cured_by("replay")
ALL_CODES = tuple(name for name, _, _ in _TABLE)
