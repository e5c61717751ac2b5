"""Cells that measure this machine (tagged nbval-ignore-output) keep their numbers across builds, never their words:
what they print follows today's catalogue (chapter 09 once printed "Forward" and "badhotri" after both were replaced)."""
import copy
import re

import nbformat
import pytest

from autograder import i18n

from labbook.build import MEASURED, keep_unchanged_outputs, stale_words
from labbook.notebooks import read_built, targets

# collected in every test worker: parse only the notebooks whose text names the tag
MEASURING = [(target, cell.get("id")) for target in targets()
             if target.built.exists() and MEASURED in target.built.read_text(encoding="utf-8")
             for cell in read_built(target.built).cells
             if cell.cell_type == "code" and MEASURED in cell.metadata.get("tags", [])]


def _cell(target, cell_id):
    return next(cell for cell in read_built(target.built).cells if cell.get("id") == cell_id)


def test_there_are_measuring_cells():
    assert {target.name for target, _ in MEASURING} >= {"04_implementing_masks", "09_beyond_the_triangle"}


@pytest.mark.parametrize("target, cell_id", MEASURING,
                         ids=[f"{t.part}/{t.lang}/{t.name}:{c}" for t, c in MEASURING])
def test_a_measuring_cell_shows_only_todays_words(target, cell_id):
    stale = stale_words(_cell(target, cell_id), target.lang)
    assert not stale, (f"{target.built.name} [{target.lang}] cell {cell_id} shows words today's catalogue no longer "
                       f"prints: {stale}; run `python -m labbook.build {target.name}`")


# ---------------------------------------------------------------- planted
def _planted(lang: str, today: str, yesterday: str):
    target, cell_id = next((t, c) for t, c in MEASURING if t.lang == lang and t.name == "09_beyond_the_triangle")
    cell = copy.deepcopy(_cell(target, cell_id))
    outputs = [o for o in cell.outputs if o.get("output_type") == "stream"]
    assert any(today in o["text"] for o in outputs), f"{today!r} is not printed in {lang}"
    for output in outputs:
        output["text"] = output["text"].replace(today, yesterday)
    return cell


def test_a_label_the_catalogue_replaced_is_caught():
    """The two stale labels the native reviews found, planted back into today's outputs in place of today's."""
    german = _planted("de", i18n.text("ch09.full_word", "de"), "voller Forward")
    assert stale_words(german, "de") == ["Forward"]
    hinglish = _planted("hi-Latn", i18n.text("ch09.growth", "hi-Latn"), "T = 256 se T = 2048 tak badhotri (8 guna lamba):")
    assert stale_words(hinglish, "hi-Latn") == ["badhotri"]


def test_other_numbers_are_no_stale_words():
    cell = _planted("en", i18n.text("ch09.step_word", "en"), i18n.text("ch09.step_word", "en"))
    for output in cell.outputs:
        output["text"] = re.sub(r"\d", "7", output["text"])
    assert stale_words(cell, "en") == []


def _notebook(text: str, measured: bool = True):
    cell = nbformat.v4.new_code_cell('print(tr("ch09.growth"), x)', id="c000")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
    if measured:
        cell.metadata["tags"] = [MEASURED]
    return nbformat.v4.new_notebook(cells=[cell])


def test_the_build_keeps_a_measurement_whose_words_are_todays():
    kept = keep_unchanged_outputs(_notebook("growth: full forward x31.0\n"), _notebook("growth: full forward x30.6\n"))
    assert kept.cells[0].outputs[0]["text"] == "growth: full forward x30.6\n"


def test_the_build_writes_a_measurement_anew_when_its_words_changed():
    """A changed label: the new run's numbers and words, not the committed numbers under yesterday's label."""
    new = _notebook("Wachstum: voller Durchlauf x31.0\n")
    kept = keep_unchanged_outputs(new, _notebook("Wachstum: voller Forward x30.6\n"))
    assert kept.cells[0].outputs[0]["text"] == "Wachstum: voller Durchlauf x31.0\n"


def test_a_label_looked_up_by_a_built_key_counts_as_today_s():
    cell = nbformat.v4.new_code_cell('for part in ("full", "step"):\n    print(tr(f"ch09.{part}_word"), 3.1)')
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="full forward 3.1\ndecode step 3.1\n")]
    assert stale_words(cell, "en") == []
    cell.outputs[0]["text"] += "badhotri 3.1\n"
    assert stale_words(cell, "en") == ["badhotri"]
