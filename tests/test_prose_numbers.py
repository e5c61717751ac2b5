"""Every decimal number in a chapter's prose is printed by one of its cells (at the written precision)."""
import nbformat
import pytest

from autograder.i18n import LANGS
from labbook.prose import prose_numbers, unexplained

from labbook.notebooks import ROOT

CHAPTERS = sorted((ROOT / "course").glob("*/*.ipynb"))


@pytest.mark.parametrize("path", CHAPTERS, ids=[str(p.relative_to(ROOT)) for p in CHAPTERS])
def test_prose_numbers_are_computed(path):
    notebook = nbformat.read(path, as_version=4)
    assert unexplained(notebook, notebook.metadata["lang"]) == []


@pytest.mark.parametrize("lang", LANGS)
def test_worked_example_prose_states_the_right_last_row(lang):
    """The seed printed 0.68 for the middle weight of the last row; it is 0.67 (0.6728)."""
    import math

    import numpy as np

    Q = np.array([[1, 2], [3, 1], [2, 2]], float)  # the seed's givens
    K = np.array([[2, 1], [1, 3], [2, 1]], float)
    last = Q[2] @ K.T / math.sqrt(2)
    weights = np.exp(last) / np.exp(last).sum()
    expected = [f"{w:.2f}" for w in weights]
    assert expected == ["0.16", "0.67", "0.16"]
    notebook = nbformat.read(ROOT / "course" / lang / "03_worked_example.ipynb", as_version=4)
    written = [w for w, _, _ in prose_numbers(notebook, lang)]
    normalised = [w.replace(",", ".") for w in written]
    assert "0.67" in normalised and "0.68" not in normalised


def _fake_chapter(prose: str, printed: str) -> nbformat.NotebookNode:
    notebook = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("print(...)")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=printed)]
    notebook.cells = [nbformat.v4.new_markdown_cell(prose), cell]
    return notebook


def test_checker_flags_a_number_no_cell_printed():
    notebook = _fake_chapter("The weights are 0.16, 0.68 and 0.16.", "[0.1636, 0.6728, 0.1636]")
    assert unexplained(notebook, "en") == ["0.68"]


def test_checker_accepts_struck_numbers_code_and_decimal_commas():
    notebook = _fake_chapter("Not ~~0.68~~ but 0,67; `x = 0.5` is code.", "0.6728")
    assert unexplained(notebook, "de") == []
    assert unexplained(notebook, "en") == []  # "0,67" is not an English decimal
