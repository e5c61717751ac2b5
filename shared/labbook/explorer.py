"""The mask explorer: an interactive T x T grid of queries and keys, in the notebook's language.

    from labbook.explorer import explorer
    explorer(T=6)                              # chapter 02: the causal triangle
    explorer(T=6, padding=(0, 2), sequence=1)  # chapter 05: padding
    explorer(T=8, window=3, offset=3)          # chapter 09: sliding window, KV cache
    explorer(T=8, documents=(3, 2, 3))         # chapter 11: packed documents, document mask
    explorer(T=8, window=3, sinks=1)           # chapter 11: attention sinks with a window

The returned object displays as one self-contained HTML block: markup, CSS and
JavaScript travel inside the output (no CDN, no kernel once rendered), so it
works in JupyterLab after the cell runs and in the static HTML edition. Where
scripts do not run (an untrusted notebook, a viewer without JavaScript) the
block shows a static rendering of the starting state instead.

Clicking a query row highlights the keys it may read and marks its target (the
next token). Controls toggle the causal mask, set each sequence's right padding,
a sliding window W, a KV-cache offset with bottom-right or top-left
alignment, the boundaries of packed documents (the document mask: a query reads
only keys of its own document) and a number of attention sinks (the first
n_sink keys stay readable when the window has passed them); with the mask off,
readable future keys are marked as leaks. A second view shows the masked scores
and softmax weights of the T = 3 worked example of chapter 03 under the same
mask.

The rules live twice, here (`cell_state`, `worked_example`, used for the static
view and by the tests as the reference) and in explorer/explorer.js (the live
widget); tests/browser checks that the browser shows what this module computes.

Signals for tests and assistive technology: the root element carries
`data-ready="true"` once the script has run, `data-rev` (incremented on every
render) and the current settings as data attributes; every grid cell carries
`data-row`, `data-col`, `data-allowed`, `data-reason`, `data-leak`, `data-mark`
(and `data-doc-start` where a new document begins). The live grid is a WAI-ARIA
grid (one Tab stop, arrow keys, Home/End, Ctrl+Home/End; a button before the
controls jumps to it); each cell's accessible name (`cell_name`, also on the
static table) says query, key, readable or blocked, and why, in the notebook's
language, and the legend's symbols are in the accessibility tree. A
`role="status"` line (aria-live) describes the selected row in words, or, after
a control changed with no row selected, the effect on the whole grid
(`grid_summary`).

Reasons: a blocked cell says why ("pad", "future", "align", "document",
"window"); a readable cell has no reason except "sink", a key that only the sink
rule keeps readable. Marks of the selected row: "read", "sink" (read as a sink),
"target" (none for the last query of a document or of the real tokens: see
`has_target`).
"""
from __future__ import annotations

import hashlib
import html
import itertools
import json
import math
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from autograder.i18n import LANGS, N_, current_lang

from .texts import texts_with_prefix, tr

ASSETS = Path(__file__).with_name("explorer")
# The widget embeds these files: a notebook showing it depends on them (labbook.dependencies).
BUILD_INPUTS = sorted(str(path) for path in ASSETS.glob("*.*"))
T_MIN, T_MAX = 2, 16
ALIGNS = ("bottom-right", "top-left")
VIEWS = ("mask", "worked")
# The worked example of chapter 03: T = 3, d_k = 2.
Q_EXAMPLE = ((1.0, 2.0), (3.0, 1.0), (2.0, 2.0))
K_EXAMPLE = ((2.0, 1.0), (1.0, 3.0), (2.0, 1.0))
SYMBOLS = {"read": "✓", "future": "·", "pad": "∅", "window": "⋯", "align": "◸", "document": "≠", "sink": "◆"}
MINUS_INF = "−∞"
# Why a key is blocked, in the order the grid's summary counts them (cell_state's reasons).
BLOCKED_REASONS = ("future", "align", "pad", "document", "window")

_counter = itertools.count()


@dataclass(frozen=True)
class Settings:
    """What the controls set. `padding` is the right padding of each of the two sequences.

    `documents` are the lengths of the documents packed into the row, in order
    (summing to T); () is one document, no document mask. `sinks` is n_sink:
    keys 0..n_sink-1 stay readable however far the window has moved (0: off;
    without a window it changes nothing, every earlier key is readable already).
    """

    T: int = 6
    causal: bool = True
    window: int = 0  # 0: no window
    padding: tuple[int, int] = (0, 2)
    sequence: int = 0  # which sequence the grid shows (0 or 1)
    offset: int = 0  # KV-cache offset: keys 0..offset-1 are cached, queries are offset..T-1
    align: str = "bottom-right"
    row: int | None = None  # selected query row (0-based, counted from the first query shown)
    view: str = "mask"
    documents: tuple[int, ...] = ()  # lengths of the packed documents; (): a single document
    sinks: int = 0  # n_sink: the first keys that the window never drops

    def validate(self) -> "Settings":
        if not T_MIN <= self.T <= T_MAX:
            raise ValueError(f"T must be between {T_MIN} and {T_MAX}, got {self.T}")
        if len(self.padding) != 2 or not all(0 <= p < self.T for p in self.padding):
            raise ValueError(f"padding must be two numbers from 0 to T-1, got {self.padding}")
        if self.sequence not in (0, 1):
            raise ValueError(f"sequence must be 0 or 1, got {self.sequence}")
        if not 0 <= self.window <= T_MAX:
            raise ValueError(f"window must be from 0 (no window) to {T_MAX}, got {self.window}")
        if not 0 <= self.offset < self.T:
            raise ValueError(f"offset must be from 0 to T-1, got {self.offset}")
        if self.align not in ALIGNS:
            raise ValueError(f"align must be one of {ALIGNS}, got {self.align!r}")
        if self.view not in VIEWS:
            raise ValueError(f"view must be one of {VIEWS}, got {self.view!r}")
        if self.row is not None and not 0 <= self.row < self.T - self.offset:
            raise ValueError(f"row must be from 0 to T-offset-1, got {self.row}")
        if self.documents and (sum(self.documents) != self.T or not all(n >= 1 for n in self.documents)):
            raise ValueError(f"documents must be lengths of at least 1 that sum to T = {self.T}, got {self.documents}")
        if not 0 <= self.sinks <= T_MAX:
            raise ValueError(f"sinks must be from 0 (no sink) to {T_MAX}, got {self.sinks}")
        return self

    @property
    def pad(self) -> int:
        return self.padding[self.sequence]

    @property
    def rows(self) -> int:
        return self.T - self.offset

    @property
    def starts(self) -> list[int]:
        """The positions where a new document begins (document 0 begins at 0 and is not listed)."""
        return list(itertools.accumulate(self.documents))[:-1]

    def doc(self, j: int) -> int:
        """The document of position j; a position past the last length belongs to the last document."""
        return sum(1 for start in self.starts if start <= j)


# ---------------------------------------------------------------- the rules (mirrored in explorer.js)
def cell_state(s: Settings, r: int, j: int, T: int | None = None, pad: int | None = None,
               offset: int | None = None) -> dict:
    """The state of cell (query row r, key j).

    The query of row r sits at absolute position i = offset + r; its causal
    limit is d = i (bottom-right alignment) or d = r (top-left). A key is
    blocked by padding (j >= T - pad), by the causal mask (j > d: "align" when
    j <= i, i.e. only the top-left alignment hides it, else "future"), by the
    document mask (doc(j) != doc(i)), or by the window (j < d - W + 1) unless it
    is a sink (j < n_sink: readable, reason "sink"). A readable key j > i is a
    leak; j = i + 1 is the target.
    """
    T = s.T if T is None else T
    pad = s.pad if pad is None else pad
    offset = s.offset if offset is None else offset
    i = offset + r
    d = i if s.align == "bottom-right" else r
    if j >= T - pad:
        return {"allowed": False, "reason": "pad", "leak": ""}
    if s.causal and j > d:
        return {"allowed": False, "reason": "align" if j <= i else "future", "leak": ""}
    if s.documents and s.doc(j) != s.doc(i):
        return {"allowed": False, "reason": "document", "leak": ""}
    reason = ""
    if s.window and j < d - s.window + 1:
        if j >= s.sinks:
            return {"allowed": False, "reason": "window", "leak": ""}
        reason = "sink"
    leak = "target" if j == i + 1 else ("future" if j > i else "")
    return {"allowed": True, "reason": reason, "leak": leak}


def has_target(s: Settings, i: int) -> bool:
    """Whether query i has a target: the next token is real and in its own document.

    A packed row gives the first token of each document the label -100
    (chapter 11 §2): it is not predicted from the previous document.
    """
    return i < s.T - s.pad - 1 and (not s.documents or s.doc(i + 1) == s.doc(i))


def grid(s: Settings) -> list[list[dict]]:
    """Every cell of the grid: (T - offset) query rows, T key columns."""
    return [[cell_state(s, r, j) for j in range(s.T)] for r in range(s.rows)]


def worked_example(s: Settings) -> dict:
    """Masked scores and weights of the T = 3 example under the same settings.

    Padding and offset are clipped to 2; the three tokens keep the documents of
    positions 0..2 of the row, and the sinks are the same keys 0..n_sink-1.
    """
    T, pad, offset = 3, min(s.pad, 2), min(s.offset, 2)
    scale = math.sqrt(len(Q_EXAMPLE[0]))
    scores, weights, states = [], [], []
    for r in range(T - offset):
        q = Q_EXAMPLE[offset + r]
        row_states = [cell_state(s, r, j, T=T, pad=pad, offset=offset) for j in range(T)]
        raw = [sum(a * b for a, b in zip(q, k)) / scale for k in K_EXAMPLE]
        masked = [x if st["allowed"] else -math.inf for x, st in zip(raw, row_states)]
        top = max(masked)
        if top == -math.inf:
            row_weights = [math.nan] * T
        else:
            exps = [math.exp(x - top) if x != -math.inf else 0.0 for x in masked]
            total = sum(exps)
            row_weights = [e / total for e in exps]
        scores.append(masked)
        weights.append(row_weights)
        states.append(row_states)
    return {"offset": offset, "pad": pad, "scores": scores, "weights": weights, "states": states}


def symbol(c: dict) -> str:
    """The character a cell shows: a leak, a sink, a readable key, or why the key is blocked."""
    if c["leak"]:
        return "!"
    return SYMBOLS[c["reason"] or "read"]


def fmt_score(x: float) -> str:
    return MINUS_INF if x == -math.inf else f"{x:.2f}"


def fmt_weight(x: float) -> str:
    return "NaN" if math.isnan(x) else f"{x:.2f}"


def tokens(lang: str) -> list[list[str]]:
    return [tr(key, lang).split(" ") for key in ("explorer.sentence1", "explorer.sentence2")]


def fill(template: str, **params) -> str:
    """A catalogue text with its {placeholders} filled (same as fmt in explorer.js)."""
    return re.sub(r"\{(\w+)\}", lambda m: str(params[m[1]]) if m[1] in params else m[0], template)


def labels(s: Settings, text: dict[str, str], lang: str) -> list[str]:
    """The token shown at each position of the grid: a word of the sentence, or <pad>."""
    words = tokens(lang)[s.sequence]
    return [words[j] if j < s.T - s.pad else text["pad"] for j in range(s.T)]


def cell_kind(s: Settings, r: int, j: int) -> str:
    """Which explorer.cell_* text says why cell (r, j) is readable or blocked."""
    c = cell_state(s, r, j)
    if c["leak"]:
        return "leak_target" if c["leak"] == "target" else "leak"
    if not c["allowed"]:
        return c["reason"]
    if c["reason"] == "sink":
        return "sink"
    return "self" if j == s.offset + r else "read"


def cell_name(s: Settings, r: int, j: int, text: dict[str, str], label: list[str]) -> str:
    """What a screen reader says for cell (r, j): query, key, readable or blocked, and why."""
    i = s.offset + r
    state = text["cell_" + cell_kind(s, r, j)]
    if j == i + 1 and has_target(s, i) and cell_state(s, r, j)["leak"] != "target":
        state = fill(text["cell_with_target"], state=state)
    return fill(text["cell"], q=i, query=label[i], k=j, key=label[j], state=state)


def grid_summary(s: Settings, text: dict[str, str]) -> str:
    """The status line after a control changed while no query row is selected: the effect on the whole grid."""
    cells = [c for row in grid(s) for c in row]
    read = sum(c["allowed"] for c in cells)
    parts = [fill(text["status_grid"], rows=s.rows, T=s.T, read=read, blocked=len(cells) - read)]
    counts = [fill(text["count_" + reason], n=n) for reason in BLOCKED_REASONS
              if (n := sum(c["reason"] == reason for c in cells))]
    if counts:
        parts.append(fill(text["status_blocked"], reasons=", ".join(counts)))
    if sinks := sum(c["reason"] == "sink" for c in cells):
        parts.append(fill(text["status_grid_sinks"], n=sinks))
    if empty := sum(not any(c["allowed"] for c in row) for row in grid(s)):
        parts.append(fill(text["status_grid_empty"], n=empty))
    if leaks := sum(bool(c["leak"]) for c in cells):
        parts.append(fill(text["status_grid_leak"], n=leaks, own=sum(c["leak"] == "target" for c in cells)))
    return " ".join(parts)


# ---------------------------------------------------------------- the widget
def _asset(name: str) -> str:
    return (ASSETS / name).read_text(encoding="utf-8")


# The widget's interface: its HTML and JavaScript read these texts by name (text["caption"], ...).
N_(
    "explorer.align", "explorer.boundary", "explorer.cell", "explorer.cell_align", "explorer.cell_document",
    "explorer.cell_future", "explorer.cell_leak", "explorer.cell_leak_target", "explorer.cell_pad",
    "explorer.cell_read", "explorer.cell_self", "explorer.cell_sink", "explorer.cell_window",
    "explorer.cell_with_target", "explorer.count_align", "explorer.count_document", "explorer.count_future",
    "explorer.count_pad", "explorer.count_window", "explorer.grid_help", "explorer.skip",
    "explorer.status_blocked", "explorer.status_grid", "explorer.status_grid_empty", "explorer.status_grid_leak",
    "explorer.status_grid_sinks", "explorer.bottom_right", "explorer.caption", "explorer.causal",
    "explorer.corner", "explorer.documents", "explorer.legend", "explorer.legend_align",
    "explorer.legend_document", "explorer.legend_future", "explorer.legend_leak", "explorer.legend_pad",
    "explorer.legend_read", "explorer.legend_sink", "explorer.legend_target", "explorer.legend_window",
    "explorer.length", "explorer.none", "explorer.offset", "explorer.pad", "explorer.padding",
    "explorer.pick", "explorer.plain", "explorer.seq", "explorer.sequence", "explorer.sinks",
    "explorer.static_note", "explorer.status_document", "explorer.status_empty", "explorer.status_leak",
    "explorer.status_pad_query", "explorer.status_row", "explorer.status_sink", "explorer.status_target",
    "explorer.status_target_document", "explorer.status_target_outside", "explorer.structure_note",
    "explorer.title",
    "explorer.top_left", "explorer.view_mask", "explorer.view_worked", "explorer.views", "explorer.window",
    "explorer.worked_leak", "explorer.worked_nan", "explorer.worked_note", "explorer.worked_scores",
    "explorer.worked_weights",
)


def _texts(lang: str) -> dict[str, str]:
    return texts_with_prefix("explorer.", lang)


class Explorer:
    """The displayed widget; `settings` holds the starting state."""

    def __init__(self, settings: Settings, lang: str):
        self.settings = settings.validate()
        self.lang = lang
        config = {"state": self.state(), "lang": lang}
        digest = hashlib.sha1(json.dumps(config, sort_keys=True).encode()).hexdigest()[:8]
        self.uid = f"lbx-{digest}-{next(_counter)}"

    def state(self) -> dict:
        """The settings as the widget's JSON state (lists, not tuples)."""
        s = self.settings
        return {**asdict(s), "padding": list(s.padding), "documents": list(s.documents)}

    # -- static views (also what a reader without JavaScript sees)
    def _static_grid(self, text: dict[str, str]) -> str:
        s = self.settings
        label = labels(s, text, self.lang)
        starts = set(s.starts)
        start = [' data-doc-start="true"' if j in starts else "" for j in range(s.T)]
        head = "".join(f'<th scope="col"{start[j]}>k{j}<br>{html.escape(label[j])}</th>' for j in range(s.T))
        body = []
        for r, row in enumerate(grid(s)):
            i = s.offset + r
            names = [html.escape(cell_name(s, r, j, text, label)) for j in range(s.T)]
            # JupyterLab's sanitiser drops aria-label from an untrusted output but keeps title: the cell's
            # words then still reach a screen reader (as its description) and show on hover
            cells = "".join(
                f'<td data-row="{r}" data-col="{j}" data-allowed="{str(c["allowed"]).lower()}" '
                f'data-reason="{c["reason"]}" data-leak="{c["leak"]}"{start[j]} '
                f'aria-label="{names[j]}" title="{names[j]}">{symbol(c)}</td>'
                for j, c in enumerate(row))
            body.append(f'<tr{start[i]}><th scope="row">q{i} {html.escape(label[i])}</th>{cells}</tr>')
        return (f'<table class="lbx-grid"><caption>{html.escape(text["caption"])}</caption><thead><tr><th scope="col">{html.escape(text["corner"])}</th>{head}</tr></thead>'
                f'<tbody>{"".join(body)}</tbody></table>')

    def _static_worked(self, text: dict[str, str]) -> str:
        example = worked_example(self.settings)
        parts = []
        for title, matrix, fmt in ((text["worked_scores"], example["scores"], fmt_score),
                                   (text["worked_weights"], example["weights"], fmt_weight)):
            head = "".join(f'<th scope="col">k{j}</th>' for j in range(3))
            rows = "".join(
                f'<tr><th scope="row">q{example["offset"] + r}</th>'
                + "".join(self._worked_cell(fmt(x), st, text) for x, st in zip(row, example["states"][r])) + "</tr>"
                for r, row in enumerate(matrix))
            parts.append(f'<div class="lbx-numbox"><table class="lbx-num"><caption>{html.escape(title)}</caption>'
                         f'<thead><tr><th scope="col">{html.escape(text["corner"])}</th>{head}</tr></thead><tbody>{rows}</tbody></table></div>')
        return "".join(parts)

    @staticmethod
    def _worked_cell(shown: str, st: dict, text: dict[str, str]) -> str:
        """A number of the worked example; a blocked or leaking one says so in words, not by its colour alone."""
        why = text["legend_" + st["reason"]] if not st["allowed"] else text["legend_leak"] if st["leak"] else ""
        label = f' aria-label="{html.escape(f"{shown} ({why})")}"' if why else ""
        return (f'<td data-allowed="{str(st["allowed"]).lower()}" data-reason="{st["reason"]}" '
                f'data-leak="{st["leak"]}"{label}>{shown}</td>')

    def _legend(self, text: dict[str, str]) -> str:
        items = [("read", SYMBOLS["read"]), ("future", SYMBOLS["future"]), ("pad", SYMBOLS["pad"]),
                 ("window", SYMBOLS["window"]), ("align", SYMBOLS["align"]), ("document", SYMBOLS["document"]),
                 ("sink", SYMBOLS["sink"]), ("leak", "!"), ("target", "◎")]
        return ('<ul class="lbx-legend">' + "".join(
            f'<li><span class="lbx-key" data-legend="{name}">{symbol}</span> {html.escape(text["legend_" + name])}</li>'
            for name, symbol in items) + "</ul>")

    def _repr_html_(self) -> str:
        text = _texts(self.lang)
        config = {
            "state": self.state(),
            "texts": text,
            "sentences": tokens(self.lang),
            "Q": Q_EXAMPLE,
            "K": K_EXAMPLE,
        }
        attrs = html.escape(json.dumps(config, ensure_ascii=False, separators=(",", ":")), quote=True)
        static = (
            f'<div class="lbx-static"><p class="lbx-note"><em>{html.escape(text["static_note"])}</em></p>'
            f'<p class="lbx-note">{html.escape(text["structure_note"])}</p>'
            f'{self._static_grid(text)}{self._legend(text)}'
            f'<h4>{html.escape(text["view_worked"])}</h4>'
            f'<p class="lbx-note">{html.escape(text["worked_note"])}</p>{self._static_worked(text)}</div>'
        )
        return (
            f'<div class="lbx" id="{self.uid}" lang="{self.lang}" data-ready="false" '
            f'data-lm-suppress-shortcuts="true" data-config="{attrs}">'
            f'<style>{_asset("explorer.css")}</style>'
            f'<h3 class="lbx-title">{html.escape(text["title"])}</h3>'
            f'{static}<div class="lbx-app" hidden></div>'
            f'<script>{_asset("explorer.js")}</script>'
            f"</div>"
        )

    def __repr__(self) -> str:
        text = _texts(self.lang)
        s = self.settings
        lines = [text["plain"].replace("{T}", str(s.T))]
        for r, row in enumerate(grid(s)):
            lines.append(f"q{s.offset + r:<3}" + " ".join(symbol(c) for c in row))
        return "\n".join(lines)

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict[str, str]:
        return {"text/html": self._repr_html_(), "text/plain": repr(self)}


def explorer(T: int = 6, *, causal: bool = True, window: int = 0, padding: tuple[int, int] = (0, 2),
             sequence: int = 0, offset: int = 0, align: str = "bottom-right", row: int | None = None,
             view: str = "mask", documents: tuple[int, ...] = (), sinks: int = 0,
             lang: str | None = None) -> Explorer:
    """The mask explorer, starting from these settings (see the module docstring)."""
    lang = lang or current_lang()
    if lang not in LANGS:
        raise ValueError(f"lang must be one of {LANGS}, got {lang!r}")
    settings = Settings(T=T, causal=causal, window=window, padding=tuple(padding), sequence=sequence,
                        offset=offset, align=align, row=row, view=view, documents=tuple(documents), sinks=sinks)
    return Explorer(settings, lang)


__all__ = ["Explorer", "Settings", "cell_kind", "cell_name", "cell_state", "explorer", "grid", "grid_summary",
           "has_target", "symbol", "worked_example"]
