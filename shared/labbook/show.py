"""Small, deterministic displays for chapters: a matrix as a table, a matrix as a heatmap."""
from __future__ import annotations

import math
from typing import Sequence

import matplotlib.pyplot as plt
import numpy as np

from .texts import tr


def _cell(x: float, decimals: int) -> str:
    if math.isinf(x):
        return "-inf" if x < 0 else "inf"
    if math.isnan(x):
        return "nan"
    return f"{x:.{decimals}f}"


class Table:
    """A matrix with row and column labels; plain text and Markdown views."""

    def __init__(self, matrix, rows: Sequence[str], cols: Sequence[str], decimals: int):
        self.values = np.asarray(matrix, dtype=float)
        self.rows, self.cols, self.decimals = list(rows), list(cols), decimals

    def _cells(self) -> list[list[str]]:
        return [[_cell(x, self.decimals) for x in row] for row in self.values]

    def __repr__(self) -> str:
        cells = self._cells()
        width = max(len(s) for s in [*self.cols, *(c for row in cells for c in row)])
        label = max(len(s) for s in self.rows)
        lines = [" " * label + " " + " ".join(c.rjust(width) for c in self.cols)]
        for name, row in zip(self.rows, cells):
            lines.append(name.ljust(label) + " " + " ".join(c.rjust(width) for c in row))
        return "\n".join(lines)

    def _repr_markdown_(self) -> str:
        head = "| | " + " | ".join(self.cols) + " |"
        rule = "|---" * (len(self.cols) + 1) + "|"
        body = ["| **" + name + "** | " + " | ".join(row) + " |" for name, row in zip(self.rows, self._cells())]
        return "\n".join([head, rule, *body])


def table(matrix, decimals: int = 2, rows: Sequence[str] | None = None, cols: Sequence[str] | None = None) -> Table:
    """Show a (rows, cols) matrix rounded to `decimals`; rows are queries, columns keys by default."""
    values = np.asarray(matrix, dtype=float)
    rows = rows or [f"q{i}" for i in range(values.shape[0])]
    cols = cols or [f"k{j}" for j in range(values.shape[1])]
    return Table(values, rows, cols, decimals)


def heatmap(matrix, title_key: str, decimals: int = 2, xlabel_key: str = "axis.key", ylabel_key: str = "axis.query",
            ax=None, cmap: str = "viridis"):
    """A titled heatmap with every value written in its cell; -inf cells are hatched grey."""
    values = np.asarray(matrix, dtype=float)
    finite = np.where(np.isfinite(values), values, np.nan)
    own_figure = ax is None
    if own_figure:
        fig, ax = plt.subplots(figsize=(1.1 * values.shape[1] + 1.6, 1.0 * values.shape[0] + 1.2))
    image = ax.imshow(np.ma.masked_invalid(finite), cmap=cmap)
    ax.set_facecolor("#d9d9d9")
    for (i, j), x in np.ndenumerate(values):
        # dark text on light cells, light text on dark ones
        light = np.isfinite(x) and sum(image.cmap(image.norm(x))[:3]) > 1.5
        ax.text(j, i, _cell(x, decimals), ha="center", va="center",
                color="black" if light or not np.isfinite(x) else "white", fontsize=10)
    ax.set_title(tr(title_key), fontsize=11)
    ax.set_xlabel(tr(xlabel_key))
    ax.set_ylabel(tr(ylabel_key))
    ax.set_xticks(range(values.shape[1]))
    ax.set_yticks(range(values.shape[0]))
    if own_figure:
        fig.tight_layout()
        plt.show()
        return None
    return ax


class TextTable:
    """A titled table of strings: aligned plain text (what nbval compares) and Markdown (what JupyterLab shows)."""

    def __init__(self, title: str, header: Sequence[str], rows: Sequence[Sequence[str]]):
        self.title, self.header, self.rows = title, list(header), [list(map(str, row)) for row in rows]

    def __repr__(self) -> str:
        widths = [max(len(r[c]) for r in [self.header, *self.rows]) for c in range(len(self.header))]
        lines = [self.title, "  ".join(h.ljust(w) for h, w in zip(self.header, widths)).rstrip()]
        lines.append("  ".join("-" * w for w in widths))
        lines += ["  ".join(x.ljust(w) for x, w in zip(row, widths)).rstrip() for row in self.rows]
        return "\n".join(lines)

    def _repr_markdown_(self) -> str:
        def line(cells):
            return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"
        body = [line(self.header), "|" + "---|" * len(self.header), *(line(r) for r in self.rows)]
        return f"**{self.title}**\n\n" + "\n".join(body)
