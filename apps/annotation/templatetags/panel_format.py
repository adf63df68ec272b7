"""Figures of the panel's review page: `{{ seconds|duration }}` ("2 min 05 s") and
`{{ share|percent }}` ("75%")."""

from __future__ import annotations

from django import template

register = template.Library()


@register.filter
def duration(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s" if minutes else f"{rest} s"


@register.filter
def percent(share: float | None) -> str:
    return "—" if share is None else f"{share * 100:.0f}%"
