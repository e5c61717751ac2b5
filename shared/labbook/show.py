"""Small, deterministic displays for chapters: a matrix as a table, a matrix as a heatmap, a figure
shown with its description (alternative text and a description under it, in the reader's language)."""
from __future__ import annotations

import base64
import html
import io
import math
from typing import Sequence

import matplotlib.pyplot as plt
import numpy as np

from autograder import i18n

from .describe import DRAWN_MATRICES, Description, describe_figure
from .texts import tr, trn  # noqa: F401  (trn: chapters import it from here with tr)


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


def relative_luminance(rgb) -> float:
    """WCAG 2.1 relative luminance of an sRGB colour with channels in [0, 1]."""
    def linear(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (linear(float(c)) for c in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(first, second) -> float:
    """WCAG 2.1 contrast ratio of two sRGB colours, from 1 to 21."""
    high, low = sorted((relative_luminance(first), relative_luminance(second)), reverse=True)
    return (high + 0.05) / (low + 0.05)


BLACK, WHITE = (0.0, 0.0, 0.0), (1.0, 1.0, 1.0)
BLOCKED_CELL = "#d9d9d9"  # the background of -inf (and nan) cells


def text_colour(background) -> str:
    """Black or white, whichever contrasts more with `background` (at least 4.58:1 for any colour)."""
    return "black" if contrast_ratio(BLACK, background) >= contrast_ratio(WHITE, background) else "white"


def heatmap(matrix, title_key: str, decimals: int = 2, xlabel_key: str = "axis.key", ylabel_key: str = "axis.query",
            ax=None, cmap: str = "viridis"):
    """A titled heatmap with every value written in its cell; -inf cells are grey. Shown with its
    description when it has its own figure; on given axes, `show_figure` describes it."""
    values = np.asarray(matrix, dtype=float)
    finite = np.where(np.isfinite(values), values, np.nan)
    own_figure = ax is None
    if own_figure:
        fig, ax = plt.subplots(figsize=(1.1 * values.shape[1] + 1.6, 1.0 * values.shape[0] + 1.2))
    image = ax.imshow(np.ma.masked_invalid(finite), cmap=cmap)
    ax.set_facecolor(BLOCKED_CELL)
    for (i, j), x in np.ndenumerate(values):
        background = image.cmap(image.norm(x)) if np.isfinite(x) else plt.matplotlib.colors.to_rgb(BLOCKED_CELL)
        ax.text(j, i, _cell(x, decimals), ha="center", va="center", color=text_colour(background), fontsize=10)
    ax.set_title(tr(title_key), fontsize=11)
    ax.set_xlabel(tr(xlabel_key))
    ax.set_ylabel(tr(ylabel_key))
    ax.set_xticks(range(values.shape[1]))
    ax.set_yticks(range(values.shape[0]))
    DRAWN_MATRICES[ax] = (values, decimals)
    if own_figure:
        fig.tight_layout()
        show_figure(fig)
        return None
    return ax


class Figure:
    """A drawn figure as the notebook stores it: the picture with its alternative text, and the
    description under it (HTML that JupyterLab and the HTML edition show alike); plain text elsewhere."""

    def __init__(self, png: bytes, description: Description, lang: str):
        self.png, self.description, self.lang = png, description, lang

    @property
    def alt(self) -> str:
        return self.description.alt

    def _repr_html_(self) -> str:
        e = html.escape
        sentences = "".join(f"<p>{e(s)}</p>" for s in self.description.details)
        tables = "".join(_html_table(t) for t in self.description.tables)
        source = base64.b64encode(self.png).decode("ascii")
        return (f'<figure class="labbook-figure" lang="{e(self.lang)}" style="margin: 0">'
                f'<img src="data:image/png;base64,{source}" alt="{e(self.alt, quote=True)}" style="max-width: 100%">'
                f'<figcaption><details><summary>{e(tr("fig.description", self.lang))}</summary>'
                f'<p>{e(self.alt)}</p>{sentences}{tables}</details></figcaption></figure>')

    def __repr__(self) -> str:
        return "\n".join([self.alt, *self.description.details])


def _html_table(table) -> str:
    e = html.escape
    head = "".join(f'<th scope="col">{e(c)}</th>' for c in table.cols)
    body = "".join(f'<tr><th scope="row">{e(name)}</th>' + "".join(f"<td>{e(c)}</td>" for c in cells) + "</tr>"
                   for name, cells in table.rows)
    return (f"<table><caption>{e(table.caption)}</caption><thead><tr><th>{e(table.corner)}</th>{head}</tr></thead>"
            f"<tbody>{body}</tbody></table>")


def figure(fig, lang: str | None = None) -> Figure:
    """`fig` drawn as the inline backend draws it (PNG, tight box), with its description."""
    from IPython.core.pylabtools import print_figure

    lang = lang or i18n.current_lang()
    description = describe_figure(fig, lang)
    return Figure(print_figure(fig, "png", bbox_inches="tight"), description, lang)


def show_figure(fig) -> None:
    """Show `fig` with its description, in place of `plt.show()`, and close it (so it is not shown twice)."""
    from IPython.display import display

    shown = figure(fig)
    plt.close(fig)
    display(shown)


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
