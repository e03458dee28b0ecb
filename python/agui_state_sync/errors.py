"""Errors as data: every error the package raises is an AguiSyncError with a
``code`` from the code table (docs/codes.md), as in the JS package
(js/src/engine/errors.js). As ``json.dumps`` raises them: misuse (a wrong
argument or option) and a value of a type JSON has no form for (bytes, a set,
a dict key that is not a str) are also a TypeError (AguiSyncTypeError); a value
of a JSON type that JSON still cannot hold (NaN, a cycle, a lone surrogate,
nesting too deep) is also a ValueError (AguiSyncValueError). So ``except
TypeError`` and ``except AguiSyncError`` both work. ``message`` is for humans;
branch on ``code``.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional, cast

from ._codes import ERROR_CODES
from ._codes_types import ErrorCode

PREFIX = "agui-state-sync: "


class AguiSyncError(Exception):
    """The package's error: ``code`` (ERROR_CODES; typed as the ErrorCode Literal),
    ``op_index`` for a refused patch op."""

    def __init__(self, code: str, message: str, *, op_index: Optional[int] = None) -> None:
        super().__init__(message)
        self.code: ErrorCode = cast(ErrorCode, code)
        self.op_index = op_index

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""


class AguiSyncTypeError(AguiSyncError, TypeError):
    """A wrong argument ('invalid-argument') or option ('invalid-options')."""


class AguiSyncValueError(AguiSyncError, ValueError):
    """A value of the right type that JSON (or the engine) cannot take."""


def sync_error(code: str, message: str, *, op_index: Optional[int] = None) -> AguiSyncError:
    return AguiSyncError(code, PREFIX + message, op_index=op_index)


def sync_type_error(code: str, message: str) -> AguiSyncTypeError:
    return AguiSyncTypeError(code, PREFIX + message)


def sync_value_error(code: str, message: str) -> AguiSyncValueError:
    return AguiSyncValueError(code, PREFIX + message)


def failure_code(failure: Mapping[str, Any], fallback: str) -> str:
    """A facade failure's code, or ``fallback`` for one this version does not list."""
    code = failure.get("code")
    return code if code in ERROR_CODES else fallback


def failure_error(failure: Mapping[str, Any], fallback: str, message: str) -> AguiSyncError:
    """The error for a facade failure {ok: false, code, message, opIndex?}."""
    return sync_error(failure_code(failure, fallback), message, op_index=failure.get("opIndex"))
