"""Choices of the set-up pages (new run, search) that say what they are: a judge's kind on its
option, a strategy's samples in its label."""

from __future__ import annotations

from typing import Any

from django import forms

from apps.judging.models import Strategy


class KindSelect(forms.Select):
    """A judge's select whose options carry the judge's kind (``data-kind``), so the page can
    show only the fields that apply to it (static/applies_to.js)."""

    def create_option(self, name: str, value: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
        option = super().create_option(name, value, *args, **kwargs)
        judge = getattr(value, "instance", None)
        if judge is not None:
            option["attrs"]["data-kind"] = judge.kind
        return option


def strategy_label(strategy: Strategy) -> str:
    """E.g. "Analyze then rate (v1) — 10 samples, 2 orders": what a text costs in calls."""
    samples = f"{strategy.samples} sample{'s' if strategy.samples != 1 else ''}"
    orders = ", both orders (2 calls a sample)" if strategy.both_orders else ""
    return f"{strategy.name} (v{strategy.version}) — {samples}{orders}"
