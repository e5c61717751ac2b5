"""What a figure shows, in words, computed from what it draws: the alternative text of the book's figures.

`labbook.show.show_figure` calls `describe_figure` on a drawn matplotlib figure. Each axes is read
for what a sighted reader takes from it: a heatmap's (or an image's) matrix row by row, line
plots' start, end and lowest values, bar heights, and a picture made of text boxes and arrows
(chapter 00's book map) as its texts and which box each arrow joins. The sentences come from the
`labbook` catalogues (keys `fig.*`), so the description is in the notebook's language; every number
in them is read from the figure's data.
"""
from __future__ import annotations

import math
import weakref
from dataclasses import dataclass, field

import numpy as np

from autograder import i18n

from .texts import tr

# matrices drawn by labbook.show.heatmap, with what the axes' image cannot keep (-inf, the rounding)
DRAWN_MATRICES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
# a matrix with at most this many cells is read out cell by cell in the alternative text itself,
# unless the figure's alternative text would grow longer than ALT_LENGTH (then its rows go under it)
CELLS_READ_IN_ALT = 36
ALT_LENGTH = 1200


@dataclass
class DataTable:
    """The numbers behind a figure, shown as a table under it."""

    caption: str
    corner: str
    cols: list[str]
    rows: list[tuple[str, list[str]]]


@dataclass
class Description:
    summary: list[str] = field(default_factory=list)  # the alternative text
    details: list[str] = field(default_factory=list)  # more sentences, shown under the figure
    tables: list[DataTable] = field(default_factory=list)

    @property
    def alt(self) -> str:
        return " ".join(self.summary)

    def extend(self, other: "Description", prefix: str = "") -> None:
        self.summary += [prefix + sentence if n == 0 else sentence for n, sentence in enumerate(other.summary)]
        self.details += other.details
        self.tables += other.tables


def _t(key: str, lang: str, **params) -> str:
    return tr(key, lang).format(**params)


def _comma_decimals(lang: str) -> bool:
    return i18n.decimal_comma(lang)


def number(x: float, lang: str, decimals: int | None = None) -> str:
    """`x` as the reader's language writes it: 0.21 (en, hi-Latn), 0,21 (es, de), −∞."""
    if math.isinf(x):
        return "−∞" if x < 0 else "∞"
    if math.isnan(x):
        return "NaN"
    if decimals is None:  # a measured value: two decimals, or two significant digits when smaller
        text = "0" if x == 0 else (f"{x:.2f}" if abs(x) >= 0.01 else f"{x:.2g}")
    else:
        text = f"{x:.{decimals}f}"
    if text.startswith("-"):
        text = "−" + text[1:]
        if float(text[1:].replace(",", ".")) == 0:
            text = text[1:]  # no "-0.00"
    return text.replace(".", ",") if _comma_decimals(lang) else text


def numbers(values, lang: str, decimals: int | None = None) -> str:
    """A list of numbers; separated by semicolons where the decimal mark is a comma."""
    return ("; " if _comma_decimals(lang) else ", ").join(number(float(v), lang, decimals) for v in values)


def ranges(indices: list[int], labels: list[str]) -> str:
    """Column positions as runs: "0–2, 5" (labels of a run are its first and last)."""
    runs: list[list[int]] = []
    for index in indices:
        if runs and index == runs[-1][-1] + 1:
            runs[-1].append(index)
        else:
            runs.append([index])
    return ", ".join(labels[r[0]] if len(r) == 1 else f"{labels[r[0]]}–{labels[r[-1]]}" for r in runs)


# ---------------------------------------------------------------- matrices (heatmaps, images)
def describe_matrix(values, title: str, lang: str, decimals: int = 2, xlabel: str = "", ylabel: str = "",
                    row_labels: list[str] | None = None, col_labels: list[str] | None = None,
                    cells_in_alt: int = CELLS_READ_IN_ALT) -> Description:
    """A matrix read as its heatmap shows it: each row's values (rounded as in the cells), or, for a
    matrix of two values (a mask), where each value sits; what holds above the diagonal; row sums."""
    values = np.asarray(values, dtype=float)
    if values.ndim == 1:
        values = values[None, :]
    n_rows, n_cols = values.shape
    # rows and columns are named by index; words on the ticks (tokens) are named once, with their index
    rows = [str(i) if not row_labels or row_labels[i] == str(i) else f"{i} ({row_labels[i]})" for i in range(n_rows)]
    cols = [str(j) for j in range(n_cols)]
    shown = np.where(np.isfinite(values), np.round(values, decimals), values)
    cell = [[number(x, lang, decimals) for x in row] for row in shown]
    found = Description()
    found.summary.append(_t("fig.matrix", lang, title=title, rows=n_rows, cols=n_cols, ylabel=ylabel, xlabel=xlabel))
    if col_labels and col_labels != cols:
        found.summary.append(_t("fig.column_names", lang, names=", ".join(f"{j} {name}" for j, name in
                                                                          enumerate(col_labels))))

    distinct = sorted(set(shown.flatten().tolist()), key=lambda x: (math.isinf(x), -x))  # 1 before 0, 0 before -inf
    two_valued = len(distinct) <= 2
    above = shown[np.triu_indices(n_rows, k=1, m=n_cols)]
    if above.size >= 3 and len(set(above.tolist())) == 1 and len(distinct) > 1:  # one cell makes no pattern
        found.summary.append(_t("fig.above_diagonal", lang, value=number(above[0], lang, decimals)))
    finite = np.isfinite(values)
    if (finite.all() and (values >= 0).all() and len(distinct) > 1
            and np.allclose(values.sum(axis=1), 1.0, atol=1e-3)):
        found.summary.append(_t("fig.rows_sum_to_one", lang))

    sentences = []
    for r in range(n_rows):
        if two_valued:
            parts = [_t("fig.value_in_columns", lang, value=number(v, lang, decimals),
                        columns=ranges([j for j in range(n_cols) if shown[r, j] == v], cols))
                     for v in distinct if (shown[r] == v).any()]
            sentences.append(_t("fig.row_parts", lang, row=rows[r], parts="; ".join(parts)))
        else:
            sentences.append(_t("fig.row_values", lang, row=rows[r],
                                values=("; " if _comma_decimals(lang) else ", ").join(cell[r])))
    if n_rows * n_cols <= cells_in_alt:
        found.summary += sentences
    else:
        if two_valued:
            mark = 1.0 if 1.0 in distinct else max(v for v in distinct if math.isfinite(v)) \
                if any(math.isfinite(v) for v in distinct) else distinct[0]
            found.summary.append(_t("fig.count_per_row", lang, value=number(mark, lang, decimals),
                                    counts=", ".join(str(int((shown[r] == mark).sum())) for r in range(n_rows))))
        else:
            finite_values = np.where(finite, shown, np.nan)
            top = np.unravel_index(np.nanargmax(finite_values), shown.shape)
            found.summary.append(_t("fig.range", lang, low=number(np.nanmin(finite_values), lang, decimals),
                                    high=number(np.nanmax(finite_values), lang, decimals),
                                    row=rows[top[0]], col=cols[top[1]]))
        found.summary.append(_t("fig.see_table", lang))
        found.details += sentences
    found.tables.append(DataTable(title, f"{ylabel} \\ {xlabel}" if xlabel or ylabel else "", col_labels or cols,
                                  [(rows[r], cell[r]) for r in range(n_rows)]))
    return found


# ---------------------------------------------------------------- lines and bars
def describe_lines(ax, lang: str) -> Description:
    """Line plots: each labelled curve's start, end and lowest value; horizontal reference lines;
    which curve ends lowest; a logarithmic axis."""
    title, xlabel, ylabel = ax.get_title(), ax.get_xlabel(), ax.get_ylabel()
    curves, levels = [], []
    for line in ax.get_lines():
        label = line.get_label()
        if label.startswith("_"):
            continue
        x, y = np.asarray(line.get_xdata(), dtype=float), np.asarray(line.get_ydata(), dtype=float)
        if len(set(y.tolist())) == 1:
            levels.append((label, float(y[0])))
        else:
            curves.append((label, x, y))
    found = Description()
    found.summary.append(_t("fig.lines", lang, title=title, count=len(curves), ylabel=ylabel, xlabel=xlabel))
    for label, x, y in curves:
        low = int(np.argmin(y))
        found.summary.append(_t("fig.curve", lang, label=label, start=number(y[0], lang), end=number(y[-1], lang),
                                low=number(y[low], lang), xlabel=xlabel, at=number(x[low], lang, 0)))
    for label, level in levels:
        found.summary.append(_t("fig.level", lang, label=label, value=number(level, lang)))
    if len(curves) > 1:
        lowest = min(curves, key=lambda c: c[2][-1])
        found.summary.append(_t("fig.lowest_at_end", lang, label=lowest[0]))
    if ax.get_yscale() == "log":
        found.summary.append(_t("fig.log_scale", lang, axis=ylabel))
    return found


def describe_bars(ax, lang: str) -> Description:
    """Bar charts: every bar's height, per series, at its tick's label."""
    title, xlabel, ylabel = ax.get_title(), ax.get_xlabel(), ax.get_ylabel()
    ticks = {round(float(t), 6): label.get_text() for t, label in zip(ax.get_xticks(), ax.get_xticklabels())}
    series = []
    for container in ax.containers:
        bars = []
        for patch in container.patches:
            centre = patch.get_x() + patch.get_width() / 2
            nearest = min(ticks, key=lambda t: abs(t - centre)) if ticks else round(centre)
            bars.append((ticks.get(nearest, str(nearest)), float(patch.get_height())))
        series.append((container.get_label(), bars))
    found = Description()
    found.summary.append(_t("fig.bars", lang, title=title, count=len(series), ylabel=ylabel, xlabel=xlabel))
    for label, bars in series:
        values = ("; " if _comma_decimals(lang) else ", ").join(f"{x}: {number(h, lang)}" for x, h in bars)
        found.summary.append(_t("fig.bar_series", lang, label=label, values=values))
    if series:
        label, (x, height) = max(((label, bar) for label, bars in series for bar in bars), key=lambda p: abs(p[1][1]))
        found.summary.append(_t("fig.largest_bar", lang, label=label, xlabel=xlabel, x=x, value=number(height, lang)))
    labels = [x for x, _ in series[0][1]] if series else []
    found.tables.append(DataTable(title, "", labels, [(label, [number(h, lang) for _, h in bars])
                                                      for label, bars in series]))
    return found


# ---------------------------------------------------------------- a picture of text boxes and arrows
def describe_text_boxes(ax, lang: str) -> Description:
    """Text in boxes joined by arrows (chapter 00's map): the texts, top to bottom and left to right,
    and for each box the boxes whose arrows point at it."""
    from matplotlib.text import Annotation

    renderer = ax.figure.canvas.get_renderer()
    boxes = [text for text in ax.texts if text.get_text().strip()]
    arrows = [text for text in ax.texts if isinstance(text, Annotation) and not text.get_text().strip()]

    def centre(text) -> np.ndarray:
        box = text.get_window_extent(renderer)
        return np.array([(box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2])

    def nearest(point_data, direction: np.ndarray, ahead: bool):
        """The box an arrow's end touches: among those on the side the arrow comes from (its tail) or goes
        to (its head), the one most level with that end."""
        point = ax.transData.transform(point_data)

        def distance(text):  # the box level with the arrow's end first (rows of boxes), then the closest one
            box = text.get_window_extent(renderer)
            return round(abs(centre(text)[1] - point[1])), max(box.x0 - point[0], 0, point[0] - box.x1)
        side = [text for text in boxes if (np.dot(centre(text) - point, direction) > 0) == ahead]
        return min(side or boxes, key=distance)

    def short(text) -> str:
        return text.get_text().split(" · ")[0]

    found = Description()
    found.summary.append(_t("fig.text_boxes", lang, title=ax.get_title(), count=len(boxes)))
    columns: dict[float, list] = {}
    for text in boxes:
        columns.setdefault(round(text.get_position()[0], 2), []).append(text)
    for _, column in sorted(columns.items()):
        ordered = sorted(column, key=lambda text: -text.get_position()[1])
        found.summary.append(_t("fig.text_column", lang, texts="; ".join(t.get_text() for t in ordered)))
    pointing: dict[object, list] = {}
    for arrow in arrows:
        tail, head = ax.transData.transform(arrow.xyann), ax.transData.transform(arrow.xy)
        source, target = nearest(arrow.xyann, head - tail, ahead=False), nearest(arrow.xy, head - tail, ahead=True)
        if source is not target and source not in pointing.setdefault(target, []):
            pointing[target].append(source)
    links = [_t("fig.arrows_into", lang, target=short(target), sources=", ".join(short(s) for s in sources))
             for target, sources in pointing.items()]
    if links:
        found.summary.append(_t("fig.arrows", lang, links="; ".join(links)))
    return found


# ---------------------------------------------------------------- a whole figure
def _tick_names(ticks, tick_labels, count: int) -> list[str] | None:
    """The tick labels, when there is one per row (column) of the matrix: words, not only indices."""
    if [round(float(t), 6) for t in ticks] != list(range(count)):
        return None
    texts = [label.get_text() for label in tick_labels]
    return texts if all(texts) else None


def describe_axes(ax, lang: str, cells_in_alt: int = CELLS_READ_IN_ALT) -> Description | None:
    drawn = DRAWN_MATRICES.get(ax)
    if drawn is not None or ax.images:
        if drawn is not None:
            values, decimals = drawn
        else:
            values = np.ma.filled(np.ma.asarray(ax.images[0].get_array(), dtype=float), np.nan)
            decimals = 0 if np.all(np.equal(np.mod(values[np.isfinite(values)], 1), 0)) else 2
        n_rows, n_cols = np.shape(values)[-2:] if np.ndim(values) > 1 else (1, len(values))

        cols = _tick_names(ax.get_xticks(), ax.get_xticklabels(), n_cols)
        rows = _tick_names(ax.get_yticks(), ax.get_yticklabels(), n_rows)
        return describe_matrix(values, ax.get_title(), lang, decimals, ax.get_xlabel(), ax.get_ylabel(), rows, cols,
                               cells_in_alt)
    if ax.containers:
        return describe_bars(ax, lang)
    if [line for line in ax.get_lines() if not line.get_label().startswith("_")]:
        return describe_lines(ax, lang)
    if [text for text in ax.texts if text.get_text().strip()]:
        return describe_text_boxes(ax, lang)
    return None


def describe_figure(fig, lang: str | None = None) -> Description:
    """Every axes of `fig` that shows data, as panels "1 of n" when there are several."""
    lang = lang or i18n.current_lang()
    fig.canvas.draw()  # tick labels and text extents exist only once drawn
    panels = [d for d in (describe_axes(ax, lang) for ax in fig.axes) if d is not None]
    if sum(len(panel.alt) for panel in panels) > ALT_LENGTH:  # too long to hear in one go: rows under the figure
        panels = [d for d in (describe_axes(ax, lang, cells_in_alt=0) for ax in fig.axes) if d is not None]
    found = Description()
    suptitle = fig._suptitle.get_text() if getattr(fig, "_suptitle", None) is not None else ""
    if suptitle:
        found.summary.append(_t("fig.figure_title", lang, title=suptitle, count=len(panels)))
    for n, panel in enumerate(panels, start=1):
        found.extend(panel, _t("fig.panel", lang, n=n, count=len(panels)) + " " if len(panels) > 1 else "")
    return found
