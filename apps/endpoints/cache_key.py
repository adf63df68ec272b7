"""A stable key for one model call (a judge's), to reuse a stored reply instead of calling again.

Everything that can change the reply is in the key: the endpoint's base URL, the model, every
sampling parameter (temperature, top_p, max_tokens, seed, logprobs, ...), the messages or
prompt, and the sample index (the k-th of R samples of the same prompt must not share a key).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

KEY_VERSION = 1


def _canonical(value: Any) -> Any:
    """JSON-ready, with equal values spelled alike (1.0 -> 1; tuples -> lists)."""
    if isinstance(value, bool) or value is None or isinstance(value, str | int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"cannot key a non-finite number: {value!r}")
        return int(value) if value.is_integer() else value
    if isinstance(value, Mapping):
        return {str(k): _canonical(v) for k, v in value.items()}
    if isinstance(value, Sequence):
        return [_canonical(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _canonical(dataclasses.asdict(value))
    raise TypeError(f"cannot key a value of type {type(value).__name__}")


def cache_key(
    *,
    base_url: str,
    model: str,
    params: Mapping[str, Any] | Any,
    messages: Sequence[Mapping[str, Any]] | str,
    sample_index: int = 0,
) -> str:
    """sha256 hex of the canonical JSON of everything that determines the reply."""
    payload = {
        "v": KEY_VERSION,
        "base_url": base_url.rstrip("/"),
        "model": model,
        "params": _canonical(params),
        "input": _canonical(messages),
        "sample_index": sample_index,
    }
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
