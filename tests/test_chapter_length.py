"""Chapters 11 and 12 are 1,200 to 2,000 words of prose each, in every language (the issue's bound, kept when chapter 11 was split)."""
import nbformat
import pytest

from autograder.i18n import LANGS
from labbook.notebooks import ROOT
from labbook.prose import prose_words

BOUNDS = {"11_masks_in_production": (1200, 2000), "12_decoding_in_production": (1200, 2000)}


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("chapter", sorted(BOUNDS))
def test_chapter_length(chapter, lang):
    low, high = BOUNDS[chapter]
    words = prose_words(nbformat.read(ROOT / "course" / lang / f"{chapter}.ipynb", as_version=4))
    assert low <= words <= high, f"{lang} {chapter}: {words} words of prose, the bound is {low}-{high}"


def test_the_count_is_of_prose_only():
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("Two words\n\n```python\nnot = counted\n```\n`x` $y$"),
        nbformat.v4.new_code_cell("many words in a code cell"),
    ])
    assert prose_words(notebook) == 4
