"""G-Eval scoring from token probabilities (Liu et al. 2023; methods §7).

Given the top log-probabilities at the score token, the score is the probability-weighted mean
of the scale values, renormalized over the tokens that are valid scale values (" 4" and "4" are
the same value). No valid token: unparsed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from apps.judging.parsers.result import ParseResult, Scale

TopLogprobs = Mapping[str, float] | Iterable[Any]


def _pairs(top_logprobs: TopLogprobs) -> list[tuple[str, float]]:
    """(token, logprob) from a dict, pairs, {"token", "logprob"} dicts or objects with those."""
    if isinstance(top_logprobs, Mapping):
        return [(str(t), float(lp)) for t, lp in top_logprobs.items()]
    pairs = []
    for item in top_logprobs:
        if isinstance(item, Mapping):
            pairs.append((str(item["token"]), float(item["logprob"])))
        elif isinstance(item, Sequence) and not isinstance(item, str):
            pairs.append((str(item[0]), float(item[1])))
        else:
            pairs.append((str(item.token), float(item.logprob)))
    return pairs


def scale_value(token: str, scale: Scale) -> int | None:
    """The scale value a token stands for, or None ("4", " 4" -> 4; "4.5", "x", "9" -> None)."""
    stripped = token.strip()
    if not stripped.isascii() or not stripped.isdigit():
        return None
    value = int(stripped)
    return value if scale.lo <= value <= scale.hi else None


def geval_logprob_score(top_logprobs: TopLogprobs, scale: Scale) -> ParseResult:
    weights: dict[int, float] = {}
    for token, logprob in _pairs(top_logprobs):
        value = scale_value(token, scale)
        if value is not None and math.isfinite(logprob):
            weights[value] = weights.get(value, 0.0) + math.exp(logprob)
    total = sum(weights.values())
    if total <= 0.0:
        return ParseResult.unparsed(f"no token of the scale {scale} among the top logprobs")
    score = sum(value * p for value, p in weights.items()) / total
    return ParseResult.scored(
        score, f"probability-weighted mean over {len(weights)} scale tokens (mass {total:.3f})"
    )


def score_token_top_logprobs(
    content: Iterable[Mapping[str, Any]], scale: Scale
) -> list[tuple[str, float]] | None:
    """The top logprobs at the score position, if any: the first generated token that is a
    scale value, else the first position whose top alternatives hold a scale value (a model
    that wrote "The score is 4" or "**4**" still weighed the digits somewhere).

    ``content`` is the per-token list ``[{"token", "logprob", "top_logprobs": [...]}, ...]`` as
    stored by the LLM client.
    """
    positions = list(content)
    for position in positions:
        if scale_value(str(position["token"]), scale) is not None:
            generated = [(position["token"], position["logprob"])]
            return _pairs(position.get("top_logprobs") or generated)
    for position in positions:
        top = _pairs(position.get("top_logprobs") or [])
        if any(scale_value(token, scale) is not None for token, _ in top):
            return top
    return None


def logprob_reading(content: Sequence[Mapping[str, Any]] | None, scale: Scale) -> ParseResult:
    """G-Eval's score from stored per-token logprobs, or unparsed saying precisely why not."""
    if not content:
        return ParseResult.unparsed("the endpoint returned no logprobs")
    top = score_token_top_logprobs(content, scale)
    if top is None:
        alternatives = max(len(p.get("top_logprobs") or []) for p in content)
        return ParseResult.unparsed(
            f"logprobs came back for {len(content)} tokens (up to {alternatives} alternatives "
            f"each), but no token of the scale {scale} is among them"
        )
    return geval_logprob_score(top, scale)
