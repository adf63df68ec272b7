"""Plots as PNG (base64), drawn with matplotlib's Agg backend: images people can paste."""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import numpy.typing as npt

from apps.analysis.reports.base import Figure


def _png(fig) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode()


def heatmap(
    name: str,
    title: str,
    matrix: npt.ArrayLike,
    rows: Sequence[str],
    columns: Sequence[str],
    *,
    marks: dict[tuple[int, int], str] | None = None,
    cmap: str = "RdBu_r",
    center: float | None = 0.0,
    fmt: str = "{:.2f}",
    caption: str = "",
) -> Figure:
    """A labelled heatmap with the value (and an optional mark such as S_T) in each cell."""
    data = np.asarray(matrix, dtype=float)
    fig, ax = plt.subplots(figsize=(1.1 + 0.62 * len(columns), 0.9 + 0.36 * len(rows)))
    finite = data[np.isfinite(data)]
    limit = float(np.abs(finite).max()) if finite.size else 1.0
    bounds = (-limit, limit) if center == 0.0 else (None, None)
    image = ax.imshow(data, cmap=cmap, vmin=bounds[0], vmax=bounds[1], aspect="auto")
    ax.set_xticks(range(len(columns)), labels=columns, rotation=45, ha="right", fontsize=8)
    ax.set_yticks(range(len(rows)), labels=rows, fontsize=8)
    for (i, j), value in np.ndenumerate(data):
        label = "" if not np.isfinite(value) else fmt.format(value)
        mark = (marks or {}).get((i, j), "")
        ax.text(j, i, f"{label}\n{mark}".strip(), ha="center", va="center", fontsize=6)
    fig.colorbar(image, ax=ax, shrink=0.8)
    ax.set_title(title, fontsize=10)
    return Figure(name=name, title=title, png_base64=_png(fig), caption=caption)


def score_counts(name: str, title: str, series: dict[str, dict[float, int]]) -> Figure:
    """Side-by-side bars of how often each score was given, one colour per series (e.g. a
    judge's scores on originals and on perturbed texts), as shares of each series."""
    fig, ax = plt.subplots(figsize=(6, 3.2))
    values = sorted({v for counts in series.values() for v in counts})
    width = 0.8 / max(len(series), 1)
    for n, (label, counts) in enumerate(series.items()):
        total = sum(counts.values()) or 1
        shares = [counts.get(v, 0) / total for v in values]
        positions = [i + (n - (len(series) - 1) / 2) * width for i in range(len(values))]
        ax.bar(positions, shares, width=width, label=f"{label} (n={total})")
    ax.set_xticks(range(len(values)), labels=[f"{v:g}" for v in values], fontsize=8)
    ax.set_xlabel("score")
    ax.set_ylabel("share of calls")
    ax.legend(fontsize=8)
    ax.set_title(title, fontsize=10)
    return Figure(name=name, title=title, png_base64=_png(fig))


def boxplots(name: str, title: str, groups: dict[str, Sequence[float]]) -> Figure:
    """Box plots side by side, one per group (e.g. S_T deltas per description type)."""
    fig, ax = plt.subplots(figsize=(1.5 + 0.9 * max(len(groups), 1), 3.2))
    labels = list(groups)
    ax.boxplot([list(groups[k]) or [np.nan] for k in labels])
    ax.set_xticks(range(1, len(labels) + 1), labels=labels, rotation=30, fontsize=8)
    ax.axhline(0, color="grey", linewidth=0.6)
    ax.set_title(title, fontsize=10)
    return Figure(name=name, title=title, png_base64=_png(fig))


def estimates(
    name: str,
    title: str,
    labels: Sequence[str],
    values: Sequence[float | None],
    lows: Sequence[float | None],
    highs: Sequence[float | None],
    *,
    ylabel: str = "",
    marks: Sequence[str] = (),
) -> Figure:
    """One bar per label (e.g. per judge) with its 95% interval as an error bar, and an
    optional mark (e.g. "*" for significant) above it."""
    fig, ax = plt.subplots(figsize=(1.8 + 1.1 * max(len(labels), 1), 3.2))
    value = np.array([np.nan if v is None else v for v in values], dtype=float)
    low = np.array([np.nan if v is None else v for v in lows], dtype=float)
    high = np.array([np.nan if v is None else v for v in highs], dtype=float)
    errors = np.nan_to_num(np.vstack([value - low, high - value]), nan=0.0).clip(min=0)
    positions = range(len(labels))
    ax.bar(positions, np.nan_to_num(value), yerr=errors, capsize=4, color="#2457a6")
    for i, mark in enumerate(marks):
        if mark:
            top = np.nanmax([value[i], high[i], 0.0])
            ax.text(i, top, mark, ha="center", va="bottom", fontsize=12)
    ax.set_xticks(list(positions), labels=list(labels), rotation=20, ha="right", fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    return Figure(name=name, title=title, png_base64=_png(fig))
