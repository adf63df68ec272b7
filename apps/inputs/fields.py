"""Checks every imported text and JSON value passes before it reaches the database.

PostgreSQL refuses NUL characters in text and JSON, and lone surrogates (`"\\ud800"` in JSON)
cannot be encoded at all; deeply nested JSON exhausts Python's recursion. Each is turned into
a message naming the problem, for the caller to place in its file, row and field.
"""

from __future__ import annotations

import json
import math
from typing import Any

MAX_JSON_DEPTH = 32


class BadJson(ValueError):
    """A JSON text that cannot be stored; the message says why (and `line` where, if known)."""

    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.line = line


def text_problem(value: str) -> str | None:
    """Why this text cannot be stored, or None."""
    if "\x00" in value:
        return "contains a NUL character (\\x00)"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        code = ord(value[exc.start])
        return f"contains a lone surrogate (\\u{code:04x}), which is not valid Unicode"
    return None


def json_loads(text: str, *, check_strings: bool = True) -> Any:
    """Parse JSON, raising BadJson with a short reason for anything that cannot be stored.

    With check_strings=False the caller checks the strings itself, field by field.
    """
    try:
        value = json.loads(text, parse_constant=_no_constant, parse_float=_finite_float)
    except json.JSONDecodeError as exc:
        raise BadJson(f"not valid JSON ({exc.msg}, column {exc.colno})", exc.lineno) from exc
    except RecursionError as exc:
        raise BadJson(f"JSON nested more than {MAX_JSON_DEPTH} levels deep") from exc
    except BadJson:
        raise
    except ValueError as exc:  # an integer with more digits than Python converts
        raise BadJson("not valid JSON (a number with too many digits)") from exc
    if _depth(value) > MAX_JSON_DEPTH:
        raise BadJson(f"JSON nested more than {MAX_JSON_DEPTH} levels deep")
    problem = strings_problem(value) if check_strings else None
    if problem:
        raise BadJson(problem)
    return value


def _no_constant(name: str) -> Any:
    raise BadJson(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise BadJson(f"the number {text[:20]} is too large")
    return value


def _children(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [*value.keys(), *value.values()]
    if isinstance(value, list):
        return value
    return []


def _depth(value: Any) -> int:
    deepest, level = 0, [value]
    while level:
        deepest += 1
        level = [child for v in level for child in _children(v)]
    return deepest - 1


def strings_problem(value: Any) -> str | None:
    """Why some string in this JSON value (keys included) cannot be stored, or None."""
    pending = [value]
    while pending:
        current = pending.pop()
        if isinstance(current, str):
            problem = text_problem(current)
            if problem:
                return problem
        else:
            pending.extend(_children(current))
    return None
