"""A judge call's sampling parameters: the strategy's settings over the endpoint's defaults."""

from __future__ import annotations

from typing import Any

from apps.endpoints.client import SamplingParams
from apps.endpoints.models import Endpoint
from apps.judging.models import JudgeRun, Strategy


def sampling_params(run: JudgeRun, sample_index: int) -> SamplingParams:
    """The run's strategy's settings over its judge's defaults (``strategy_params``)."""
    assert run.strategy is not None and run.judge.endpoint is not None
    return strategy_params(run.strategy, run.judge.endpoint, sample_index)


def strategy_params(strategy: Strategy, endpoint: Endpoint, sample_index: int) -> SamplingParams:
    """The strategy's settings over the endpoint's defaults. A fixed seed is offset by the
    sample index, or the R samples of one prompt would be copies of each other."""
    defaults: dict[str, Any] = endpoint.default_params or {}
    seed = defaults.get("seed")
    temperature = strategy.temperature
    if temperature is None:
        temperature = defaults.get("temperature", 0.0)
    stop = defaults.get("stop")
    return SamplingParams(
        max_tokens=strategy.max_tokens,
        temperature=temperature,
        top_p=defaults.get("top_p"),
        seed=int(seed) + sample_index if seed is not None else None,
        logprobs=strategy.use_logprobs,
        top_logprobs=strategy.top_logprobs if strategy.use_logprobs else None,
        stop=tuple(stop) if isinstance(stop, list) else ((stop,) if stop else None),
        sample_index=sample_index,
    )
