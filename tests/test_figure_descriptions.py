"""Every figure carries a description computed from its data, in the reader's language (WCAG 1.1.1),
and the heatmaps' cell text is black or white by WCAG contrast (1.4.3).

The describing code is checked on data written here by hand; the built chapters are checked for a
real alternative text on every figure they store.
"""
import html
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import nbformat  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from autograder import i18n  # noqa: E402
from labbook import describe, show  # noqa: E402
from labbook.notebooks import ROOT  # noqa: E402
from labbook.texts import tr  # noqa: E402

PLACEHOLDER = "No description has been provided for this image"
FIGURE_CODE = [ROOT / "shared/labbook/describe.py", ROOT / "shared/labbook/show.py"]
FIGURE_KEYS = sorted({key for path in FIGURE_CODE for key in re.findall(r'"(fig\.[a-z_]+)"', path.read_text())})
NOTEBOOKS = sorted(path for part in ("course", "solutions", "labs") for path in (ROOT / part).glob("*/*.ipynb"))


# ---------------------------------------------------------------- the catalogues
def words(template: str) -> list[str]:
    """The words of a message without its placeholders: what a translator translates."""
    return re.findall(r"[^\W\d_]{2,}", re.sub(r"\{[^}]*\}", " ", template))


def untranslated(english: dict[str, str], other: dict[str, str], keys: list[str]) -> list[str]:
    """Keys missing or empty in `other`, or holding the English text although it has words."""
    return [key for key in keys if not other.get(key, "").strip()
            or (other[key] == english.get(key) and words(english[key]))]


def test_the_figure_code_uses_description_keys():
    assert len(FIGURE_KEYS) >= 20, FIGURE_KEYS


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_every_description_message_exists_and_is_translated(lang):
    english = {key: tr(key, "en") for key in FIGURE_KEYS}
    messages = i18n._messages("labbook", lang)
    if lang == "en":
        assert untranslated({}, messages, FIGURE_KEYS) == []
    else:
        assert untranslated(english, messages, FIGURE_KEYS) == []


def test_a_message_left_in_english_or_empty_is_caught():
    english = {"fig.a": "Row {row}: {values}.", "fig.b": "{label}: {values}.", "fig.c": "Each row sums to 1."}
    other = {"fig.a": "Row {row}: {values}.", "fig.b": "{label}: {values}.", "fig.c": ""}
    assert untranslated(english, other, sorted(english)) == ["fig.a", "fig.c"]


# ---------------------------------------------------------------- numbers from the data (hand-written data)
WEIGHTS = [[1.0, 0.0, 0.0], [0.4, 0.6, 0.0], [0.21, 0.35, 0.44]]


def test_a_weights_heatmap_is_read_row_by_row():
    found = describe.describe_matrix(WEIGHTS, "W", "en", 2, "key j", "query i")
    assert "Row 2: 0.21, 0.35, 0.44." in found.alt
    assert "Row 1: 0.40, 0.60, 0.00." in found.alt
    assert "Every entry above the diagonal is 0.00." in found.alt
    assert "Each row sums to 1." in found.alt
    assert "3 rows (query i) by 3 columns (key j)" in found.alt


def test_the_numbers_follow_the_readers_decimal_mark():
    assert "Fila 2: 0,21; 0,35; 0,44." in describe.describe_matrix(WEIGHTS, "W", "es").alt
    assert "Zeile 2: 0,21; 0,35; 0,44." in describe.describe_matrix(WEIGHTS, "W", "de").alt
    assert "Row 2 mein: 0.21, 0.35, 0.44." in describe.describe_matrix(WEIGHTS, "W", "hi-Latn").alt


def test_a_matrix_that_breaks_the_patterns_is_not_said_to_have_them():
    scores = [[5.0, 3.0, 0.0], [1.0, 4.0, 0.0], [0.5, 0.25, 0.25]]  # above the diagonal 3, 0, 0; sums 8, 5, 1
    found = describe.describe_matrix(scores, "S", "en", 2)
    assert "sums to 1" not in found.alt and "above the diagonal" not in found.alt
    assert "Row 0: 5.00, 3.00, 0.00." in found.alt and "Row 2: 0.50, 0.25, 0.25." in found.alt


def test_an_additive_mask_says_where_each_value_is():
    mask = [[0, -np.inf, -np.inf], [0, 0, -np.inf], [0, 0, 0]]
    found = describe.describe_matrix(mask, "M", "en", 0)
    assert "Every entry above the diagonal is −∞." in found.alt
    assert "Row 0: 0 in columns 0; −∞ in columns 1–2." in found.alt
    assert "Row 2: 0 in columns 0–2." in found.alt


def test_a_large_mask_is_summed_up_and_read_in_full_under_the_figure():
    window = np.array([[1 if 0 <= i - j < 3 else 0 for j in range(8)] for i in range(8)])  # a window of 3
    found = describe.describe_matrix(window, "window", "en", 0)
    assert "Entries equal to 1, row by row: 1, 2, 3, 3, 3, 3, 3, 3." in found.alt
    assert "Row 7: 1 in columns 5–7; 0 in columns 0–4." in found.details
    assert found.tables[0].rows[7] == ("7", ["0", "0", "0", "0", "0", "1", "1", "1"])


def test_tick_labels_name_rows_and_columns():
    fig, ax = plt.subplots()
    show.heatmap(WEIGHTS, "ch03.weights", ax=ax)
    ax.set_xticks(range(3), ["The", "cat", "sat"])
    found = describe.describe_figure(fig, "en")
    plt.close(fig)
    assert found.tables[0].cols == ["The", "cat", "sat"]
    assert found.alt.startswith(tr("ch03.weights", "en") + ":")


def test_token_columns_are_named_once_and_ranges_stay_indices():
    padded = np.array([[1, 0, 0], [1, 1, 0], [1, 1, 0]])  # the last key is padding
    found = describe.describe_matrix(padded, "P", "en", 0, row_labels=["the", "cat", "<pad>"],
                                     col_labels=["the", "cat", "<pad>"])
    assert "Columns: 0 the, 1 cat, 2 <pad>." in found.alt
    assert "Row 2 (<pad>): 1 in columns 0–1; 0 in columns 2." in found.alt


def test_a_figure_too_long_to_hear_keeps_its_rows_under_it():
    fig, axes = plt.subplots(2, 3)
    for ax in axes.flat:  # six 5 x 5 masks: read cell by cell, far longer than describe.ALT_LENGTH
        show.heatmap(np.tril(np.ones((5, 5))), "ch02.allowed_title", decimals=0, ax=ax)
    found = describe.describe_figure(fig, "en")
    plt.close(fig)
    assert "Row 4" not in found.alt  # the summary stays; the rows, 6 x 5 of them, are under the figure
    assert "Entries equal to 1, row by row: 1, 2, 3, 4, 5." in found.alt
    assert found.details.count("Row 4: 1 in columns 0–4.") == 6


def test_curves_are_read_at_their_start_end_and_lowest_point():
    fig, ax = plt.subplots()
    ax.plot([1, 2, 3, 4], [3.3, 2.0, 1.25, 1.5], label="masked")
    ax.plot([1, 2, 3, 4], [3.3, 1.0, 0.5, 0.05], label="unmasked")
    ax.axhline(3.3, label="uniform")
    ax.set_xlabel("step")
    found = describe.describe_figure(fig, "en")
    plt.close(fig)
    assert "masked: starts at 3.30, ends at 1.50; its lowest value, 1.25, is at step 3." in found.alt
    assert "unmasked: starts at 3.30, ends at 0.05; its lowest value, 0.05, is at step 4." in found.alt
    assert "uniform: a horizontal line at 3.30." in found.alt
    assert "The curve that ends lowest: unmasked." in found.alt


def test_bars_are_read_with_their_heights():
    fig, ax = plt.subplots()
    ax.bar(np.arange(3) - 0.2, [0.5, 0.0, 0.25], width=0.4, label="after")
    ax.bar(np.arange(3) + 0.2, [0.0, 0.0, 0.75], width=0.4, label="before")
    ax.set_xticks(range(3))
    ax.set_xlabel("row")
    found = describe.describe_figure(fig, "en")
    plt.close(fig)
    assert "after: 0: 0.50, 1: 0, 2: 0.25." in found.alt
    assert "before: 0: 0, 1: 0, 2: 0.75." in found.alt
    assert "The largest bar: before at row 2, 0.75." in found.alt


def test_boxes_and_arrows_are_read_as_texts_and_links():
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.set_xlim(0, 1)
    ax.set_ylim(-3, 1)
    ax.axis("off")
    for y, name in enumerate(["01 · one", "02 · two", "03 · three"]):
        ax.text(0.02, -y, name, va="center")
    ax.text(0.6, -1.5, "lab · a lab", va="center")
    ax.annotate("", xy=(0.05, -0.7), xytext=(0.05, -0.3), arrowprops={"arrowstyle": "->"})
    for y in (0, -2):
        ax.annotate("", xy=(0.58, -1.5), xytext=(0.4, y), arrowprops={"arrowstyle": "->"})
    found = describe.describe_figure(fig, "en")
    plt.close(fig)
    assert "A column of boxes, top to bottom: 01 · one; 02 · two; 03 · three." in found.alt
    assert "Arrows: into 02 from 01; into lab from 01, 03." in found.alt


def test_several_panels_are_numbered():
    fig, axes = plt.subplots(1, 2)
    show.heatmap(WEIGHTS, "ch03.weights", ax=axes[0])
    show.heatmap(np.tril(np.ones((3, 3))), "ch02.allowed_title", decimals=0, ax=axes[1])
    found = describe.describe_figure(fig, "es")
    plt.close(fig)
    assert found.summary[0].startswith("Panel 1 de 2: ")
    assert any(s.startswith("Panel 2 de 2: ") for s in found.summary)


# ---------------------------------------------------------------- what the notebook stores
def figure_problems(notebook: nbformat.NotebookNode, lang: str) -> list[str]:
    """Figures without a real alternative text in the notebook's language, and alt numbers that are
    not the figure's data."""
    problems = []
    own = chunks(lang)
    foreign = chunks("en") - own
    for index, cell in enumerate(notebook.cells):
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "image/png" in data:
                problems.append(f"cell {index}: a PNG figure without a description")
            page = data.get("text/html", "")
            for tag in re.findall(r"<img\b[^>]*>", page):
                alt = re.search(r'\balt="([^"]*)"', tag)
                alt = html.unescape(alt.group(1)) if alt else ""
                if not alt.strip() or alt == PLACEHOLDER:
                    problems.append(f"cell {index}: no alternative text")
                elif not any(c in alt for c in own) or (lang != "en" and any(c in alt for c in foreign)):
                    problems.append(f"cell {index}: alternative text not in {lang}: {alt[:80]}")
                else:
                    table = " ".join(re.findall(r"<td>([^<]*)</td>", page))
                    strays = [n for n in decimals(alt) if n not in decimals(table)]
                    if strays and "<table>" in page:
                        problems.append(f"cell {index}: numbers not in the figure's data: {strays}")
    return problems


def chunks(lang: str) -> set[str]:
    """The fixed words of the description messages in `lang` (three words or more)."""
    found = set()
    for key in FIGURE_KEYS:
        for part in re.split(r"\{[^}]*\}", tr(key, lang)):
            part = part.strip(" :;,.()")
            if len(part.split()) >= 3:
                found.add(part)
    return found


def decimals(text: str) -> set[str]:
    """Numbers with a decimal mark, written with a point."""
    return {n.replace(",", ".") for n in re.findall(r"(?<![\d.,])\d+[.,]\d+(?![\d])", text)}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[str(p.relative_to(ROOT)) for p in NOTEBOOKS])
def test_every_stored_figure_has_a_real_description(path):
    notebook = nbformat.read(path, as_version=4)
    assert figure_problems(notebook, notebook.metadata["lang"]) == []


def _notebook_with(output) -> nbformat.NotebookNode:
    notebook = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("show_figure(fig)")
    cell.outputs = [output]
    notebook.cells = [cell]
    return notebook


def test_the_check_fails_on_a_figure_without_a_real_description():
    fig, ax = plt.subplots()
    show.heatmap(WEIGHTS, "ch03.weights", ax=ax)
    stored = show.figure(fig, "de")
    plt.close(fig)
    good = stored._repr_html_()
    shown = nbformat.v4.new_output("display_data", data={"text/html": good, "text/plain": repr(stored)})
    assert figure_problems(_notebook_with(shown), "de") == []
    raw_png = nbformat.v4.new_output("display_data", data={"image/png": "iVBOR", "text/plain": "<Figure>"})
    placeholder = nbformat.v4.new_output("display_data", data={"text/html": f'<img src="x" alt="{PLACEHOLDER}">'})
    empty = nbformat.v4.new_output("display_data", data={"text/html": '<img src="x" alt="">'})
    german_in_spanish = shown
    wrong_number = nbformat.v4.new_output("display_data", data={"text/html": good.replace("0,21; 0,35", "0,12; 0,35", 1)})
    assert figure_problems(_notebook_with(raw_png), "de")
    assert figure_problems(_notebook_with(placeholder), "de")
    assert figure_problems(_notebook_with(empty), "de")
    assert figure_problems(_notebook_with(german_in_spanish), "es")
    assert figure_problems(_notebook_with(wrong_number), "de") == ["cell 0: numbers not in the figure's data: ['0.12']"]


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_the_worked_examples_weights_figure_states_the_computed_weights(lang):
    """Chapter 03's weights, computed here from the chapter's Q and K, are what its figure's alt text reads."""
    import math

    Q = np.array([[1, 2], [3, 1], [2, 2]], float)  # the chapter's givens
    K = np.array([[2, 1], [1, 3], [2, 1]], float)
    scores = Q @ K.T / math.sqrt(2) + np.triu(np.full((3, 3), -np.inf), 1)
    weights = np.exp(scores) / np.exp(scores).sum(axis=1, keepdims=True)
    last = describe.numbers(weights[2], lang, 2)
    notebook = nbformat.read(ROOT / "course" / lang / "03_worked_example.ipynb", as_version=4)
    alts = [html.unescape(a) for cell in notebook.cells for output in cell.get("outputs", [])
            for a in re.findall(r'\balt="([^"]*)"', output.get("data", {}).get("text/html", ""))]
    title = tr("ch03.weights", lang)
    (alt,) = [a for a in alts if a.startswith(title)]
    assert f": {last}." in alt, (last, alt)


# ---------------------------------------------------------------- colour
def test_contrast_ratio_matches_wcag_reference_values():
    assert show.contrast_ratio((0, 0, 0), (1, 1, 1)) == pytest.approx(21.0)
    grey, light = matplotlib.colors.to_rgb("#777777"), matplotlib.colors.to_rgb("#f1f1f1")
    assert show.contrast_ratio(grey, light) == pytest.approx(3.96, abs=0.01)  # the audit's measurement


@pytest.mark.parametrize("cmap", ["viridis", "Greens"])
def test_heatmap_text_reaches_4_5_to_1_over_the_whole_colour_map(cmap):
    colours = matplotlib.colormaps[cmap](np.linspace(0, 1, 256))
    worst = min(show.contrast_ratio(matplotlib.colors.to_rgb(show.text_colour(c)), c[:3]) for c in colours)
    assert worst >= 4.5, worst


def test_the_old_rule_would_fail_where_contrast_decides():
    """#4fc369 (viridis): the old rule sum(rgb) > 1.5 chose white, 2.23:1; black gives 9.4:1."""
    green = matplotlib.colors.to_rgb("#4fc369")
    assert sum(green) <= 1.5  # the old rule: white
    assert show.contrast_ratio((1, 1, 1), green) < 3
    assert show.text_colour(green) == "black"


def test_a_drawn_heatmap_writes_each_value_in_the_contrasting_colour():
    fig, ax = plt.subplots()
    show.heatmap(WEIGHTS, "ch03.weights", ax=ax)
    image = ax.images[0]
    for text in ax.texts:
        x, y = (round(v) for v in text.get_position())
        background = image.cmap(image.norm(WEIGHTS[y][x]))[:3]
        written = matplotlib.colors.to_rgb(text.get_color())
        assert show.contrast_ratio(written, background) >= 4.5, (text.get_text(), written, background)
    plt.close(fig)


CALL = r"ax\.(?:plot|bar)\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)"  # parentheses nested two deep


def test_no_chapter_figure_tells_series_apart_by_colour_alone():
    """Every labelled curve or bar series a chapter draws has its own line style, marker or hatch
    besides its colour (WCAG 1.4.1); checked on the English sources (code is the same in every language)."""
    calls = []
    for source in sorted((ROOT / "sources/course/en").glob("*.md")):
        for block in re.findall(r"```\{code-cell\}.*?```", source.read_text(encoding="utf-8"), re.S):
            calls += [(source.name, call) for call in re.findall(CALL, block)
                      if "label=" in call]
    assert len(calls) >= 5, calls  # chapters 01, 07 and 08 draw labelled series
    for name, call in calls:
        assert re.search(r"linestyle=|marker=|hatch=", call), f"{name}: {call}"


def test_every_language_stores_as_many_described_figures_as_english():
    def count(lang: str) -> int:
        return sum(output.get("data", {}).get("text/html", "").count('<figure class="labbook-figure"')
                   for path in (ROOT / "course" / lang).glob("*.ipynb")
                   for cell in nbformat.read(path, as_version=4).cells for output in cell.get("outputs", []))
    english = count("en")
    assert english >= 20
    assert {lang: count(lang) for lang in i18n.LANGS} == {lang: english for lang in i18n.LANGS}
