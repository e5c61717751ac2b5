"""All four language versions of a notebook have the same code cells and structure."""
from collections import defaultdict

import pytest

from autograder.i18n import LANGS
from labbook.notebooks import ROOT, code_cells, headings, read


def groups():
    found = defaultdict(dict)
    for part in ("course", "solutions", "labs"):
        for lang in LANGS:
            for path in sorted((ROOT / part / lang).glob("*.ipynb")):
                found[f"{part}/{path.name}"][lang] = path
    return found


GROUPS = groups()


def test_groups_found():
    assert GROUPS


@pytest.mark.parametrize("name", sorted(GROUPS))
def test_every_language_exists(name):
    assert sorted(GROUPS[name]) == sorted(LANGS), f"{name}: languages {sorted(GROUPS[name])}"


@pytest.mark.parametrize("name", sorted(GROUPS))
def test_code_cells_identical(name):
    versions = {lang: code_cells(read(path)) for lang, path in GROUPS[name].items()}
    reference = versions["en"]
    for lang, cells in versions.items():
        assert len(cells) == len(reference), f"{name} [{lang}]: {len(cells)} code cells, en has {len(reference)}"
        for index, (mine, theirs) in enumerate(zip(cells, reference)):
            assert mine == theirs, f"{name} [{lang}]: code cell {index} differs from en"


@pytest.mark.parametrize("name", sorted(GROUPS))
def test_same_headings_structure(name):
    notebooks = {lang: read(path) for lang, path in GROUPS[name].items()}
    for level in (1, 2):
        counts = {lang: len(headings(nb, level)) for lang, nb in notebooks.items()}
        assert len(set(counts.values())) == 1, f"{name}: level-{level} headings per language {counts}"


def _number(heading: str) -> str:
    return heading.split("·")[0].strip() if "·" in heading else ""


@pytest.mark.parametrize("name", sorted(GROUPS))
def test_section_numbers_match(name):
    """Feedback points to "chapter 03 §2": the numbered sections must be the same in every language."""
    numbers = {lang: [_number(h) for h in headings(read(path), 2)] for lang, path in GROUPS[name].items()}
    assert all(n == numbers["en"] for n in numbers.values()), numbers
