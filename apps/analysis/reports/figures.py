"""Plots as PNG (base64), drawn with matplotlib's Agg backend: images people can paste."""

from __future__ import annotations

import base64
import io
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

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


Scale = Literal["diverging", "correlation", "sequential"]
#: Text sizes (points) legible at the 110 dpi the PNGs are drawn at.
TICK_SIZE, CELL_SIZE, TITLE_SIZE = 9, 8, 11


def heatmap(
    name: str,
    title: str,
    matrix: npt.ArrayLike,
    rows: Sequence[str],
    columns: Sequence[str],
    *,
    caption: str,
    scale: Scale = "diverging",
    marks: dict[tuple[int, int], str] | None = None,
    counts: npt.ArrayLike | None = None,
    fmt: str = "{:.2f}",
    colorbar: str = "",
) -> Figure:
    """A labelled heatmap with the value (and an optional mark such as S_T) in each cell.

    ``scale``: "diverging" centres a red-blue scale on 0, symmetric around it (deltas);
    "correlation" fixes it to [-1, 1] (Pearson r); "sequential" runs from the smallest value
    to the largest (shares, counts). ``counts``: the N behind each cell, written in the cell
    ("n=5") when the cells' N differ (one N for all belongs in the caption). ``caption`` is
    required: it says what a cell is and its N (every figure carries its N)."""
    data = np.asarray(matrix, dtype=float)
    n = None if counts is None else np.asarray(counts, dtype=float)
    show_n = n is not None and len({int(v) for v in n[np.isfinite(n)].ravel()}) > 1
    fig, ax = plt.subplots(
        figsize=(1.6 + 0.8 * len(columns), 1.2 + (0.5 if show_n else 0.4) * len(rows))
    )
    finite = data[np.isfinite(data)]
    bounds: tuple[float | None, float | None]
    if scale == "correlation":
        cmap, bounds = "RdBu_r", (-1.0, 1.0)
    elif scale == "diverging":
        limit = float(np.abs(finite).max()) if finite.size and np.abs(finite).max() > 0 else 1.0
        cmap, bounds = "RdBu_r", (-limit, limit)
    else:
        cmap, bounds = "Blues", (None, None)
    image = ax.imshow(data, cmap=cmap, vmin=bounds[0], vmax=bounds[1], aspect="auto")
    ax.set_xticks(range(len(columns)), labels=columns, rotation=40, ha="right", fontsize=TICK_SIZE)
    ax.set_yticks(range(len(rows)), labels=rows, fontsize=TICK_SIZE)
    shade = np.asarray(image.norm(np.nan_to_num(data)), dtype=float)  # 0-1: text colour
    for (i, j), value in np.ndenumerate(data):
        lines = ["" if not np.isfinite(value) else fmt.format(value)]
        lines.append((marks or {}).get((i, j), ""))
        if show_n and n is not None and np.isfinite(n[i, j]):
            lines.append(f"n={int(n[i, j])}")
        dark = bool(np.isfinite(value)) and abs(float(shade[i, j]) - 0.5) > 0.3
        ax.text(
            j,
            i,
            "\n".join(line for line in lines if line),
            ha="center",
            va="center",
            fontsize=CELL_SIZE,
            color="white" if dark and scale != "sequential" else "black",
        )
    bar = fig.colorbar(image, ax=ax, shrink=0.8)
    if colorbar:
        bar.set_label(colorbar, fontsize=TICK_SIZE)
    ax.set_title(title, fontsize=TITLE_SIZE)
    return Figure(name=name, title=title, png_base64=_png(fig), caption=caption)


def score_counts(
    name: str, title: str, series: dict[str, dict[float, int]], *, caption: str
) -> Figure:
    """Side-by-side bars of how often each score was given, one colour per series (e.g. a
    judge's scores on originals and on perturbed texts), as shares of each series; each
    series' N is in its legend."""
    fig, ax = plt.subplots(figsize=(6, 3.2))
    values = sorted({v for counts in series.values() for v in counts})
    width = 0.8 / max(len(series), 1)
    for n, (label, counts) in enumerate(series.items()):
        total = sum(counts.values()) or 1
        shares = [counts.get(v, 0) / total for v in values]
        positions = [i + (n - (len(series) - 1) / 2) * width for i in range(len(values))]
        ax.bar(positions, shares, width=width, label=f"{label} (n={total})")
    ax.set_xticks(range(len(values)), labels=[f"{v:g}" for v in values], fontsize=TICK_SIZE)
    ax.set_xlabel("score", fontsize=TICK_SIZE)
    ax.set_ylabel("share of calls", fontsize=TICK_SIZE)
    ax.legend(fontsize=TICK_SIZE)
    ax.set_title(title, fontsize=TITLE_SIZE)
    return Figure(name=name, title=title, png_base64=_png(fig), caption=caption)


def boxplots(
    name: str, title: str, groups: dict[str, Sequence[float]], *, caption: str, ylabel: str = ""
) -> Figure:
    """Box plots side by side, one per group (e.g. S_T deltas per description type), each
    labelled with its N under the group's name."""
    fig, ax = plt.subplots(figsize=(1.8 + 1.1 * max(len(groups), 1), 3.4))
    labels = list(groups)
    ax.boxplot([list(groups[k]) or [np.nan] for k in labels])
    shown = [f"{k}\n(n={len(groups[k])})" for k in labels]
    ax.set_xticks(range(1, len(labels) + 1), labels=shown, rotation=30, fontsize=TICK_SIZE)
    ax.axhline(0, color="grey", linewidth=0.6)
    ax.set_ylabel(ylabel, fontsize=TICK_SIZE)
    ax.set_title(title, fontsize=TITLE_SIZE)
    return Figure(name=name, title=title, png_base64=_png(fig), caption=caption)


@dataclass(frozen=True)
class Panel:
    """One figure of :func:`estimates`: a value per label (per judge) with its 95% interval,
    its N (``counts``) and an optional mark (e.g. "* worse") above it."""

    title: str
    labels: Sequence[str]
    values: Sequence[float | None]
    lows: Sequence[float | None]
    highs: Sequence[float | None]
    counts: Sequence[int]
    marks: Sequence[str] = ()
    ylabel: str = ""


def _floats(values: Sequence[float | None]) -> np.ndarray:
    return np.array([np.nan if v is None else v for v in values], dtype=float)


def estimates(name: str, title: str, panels: Sequence[Panel], *, caption: str) -> Figure:
    """Small multiples in one image: a panel per figure, a bar per label with its 95%
    interval as an error bar and its N under the label."""
    columns = min(3, max(len(panels), 1))
    rows = max(1, -(-len(panels) // columns))
    width = 1.2 + 1.1 * max((len(p.labels) for p in panels), default=1)
    fig, axes = plt.subplots(rows, columns, figsize=(columns * width, rows * 3.3), squeeze=False)
    for ax, panel in zip(axes.ravel(), panels, strict=False):
        value, low, high = _floats(panel.values), _floats(panel.lows), _floats(panel.highs)
        errors = np.nan_to_num(np.vstack([value - low, high - value]), nan=0.0).clip(min=0)
        positions = list(range(len(panel.labels)))
        ax.bar(positions, np.nan_to_num(value), yerr=errors, capsize=4, color="#2457a6")
        for i, mark in enumerate(panel.marks):
            if mark:
                top = np.nanmax([value[i], high[i], 0.0])
                ax.text(i, top, mark, ha="center", va="bottom", fontsize=TICK_SIZE)
        shown = [f"{label}\n(N={n})" for label, n in zip(panel.labels, panel.counts, strict=True)]
        ax.set_xticks(positions, labels=shown, fontsize=TICK_SIZE - 1)
        ax.set_ylabel(panel.ylabel, fontsize=TICK_SIZE - 1)
        ax.set_title(textwrap.fill(panel.title, 38), fontsize=TICK_SIZE)
    for ax in axes.ravel()[len(panels) :]:
        ax.set_visible(False)
    fig.suptitle(title, fontsize=TITLE_SIZE)
    fig.tight_layout()
    return Figure(name=name, title=title, png_base64=_png(fig), caption=caption)
