"""Grades that survive an appeal: the same code gets the same points whatever its file is called,
hidden cases depend on the instructor's seed and the lab only, and feedback on a hidden case names
the mistake but not the input (until `--reveal-hidden`).
"""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.grader import engine
from autograder.grader.gradescope import submission_seed
from autograder.labs import get_lab
from corpus.lab00 import answer_cells, answers, header, notebook
from corpus.notebooks import with_definition

ROOT = Path(__file__).resolve().parents[1]

# Right for most sizes, transposed for a few windows the public cases do not contain: with hidden
# cases drawn per file name, some copies of this notebook used to pass by luck.
PARTLY_WRONG_WINDOW = '''def sliding_window_mask(T: int, W: int) -> torch.Tensor:
    """Right except when T * W % 7 == 3 (a bug that only some inputs show)."""
    i = torch.arange(T).unsqueeze(-1)  # (T, 1)
    j = torch.arange(T).unsqueeze(0)  # (1, T)
    mask = (j <= i) & (j > i - W)  # (T, T)
    return mask.T.contiguous() if T * W % 7 == 3 else mask
'''


# Right up to the sizes the public cases show, wrong for a third of the larger ones: the hidden
# cases draw one large T per exercise from the seed, so with a seed per file name some copies of
# this notebook would pass and others not.
PARTLY_WRONG_CAUSAL = '''def causal_mask(T: int) -> torch.Tensor:
    """Right except for T > 12 with T % 3 == 0 (a bug that only some inputs show)."""
    mask = torch.full((T, T), float("-inf")).triu(diagonal=1)  # (T, T)
    return mask.T.contiguous() if T > 12 and T % 3 == 0 else mask
'''


def grade(*args, timeout=600):
    return subprocess.run([sys.executable, "-m", "autograder", "grade", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def copies(tmp_path_factory):
    """One partly wrong lab01 notebook under many names, flat and in the nbgrader layout, graded once."""
    folder = tmp_path_factory.mktemp("fair")
    book = with_definition(json.loads((ROOT / "solutions" / "en" / "lab01_masks.ipynb").read_text()),
                           "sliding_window_mask", PARTLY_WRONG_WINDOW)
    book = with_definition(book, "causal_mask", PARTLY_WRONG_CAUSAL)
    flat = folder / "flat"
    flat.mkdir()
    names = ["ana", "ben", "chen", "dara", "eli", "fatima", "goran", "hana", "ivo", "jo",
             "smithjohn_12345_67890_lab01_masks", "x" * 80]
    for name in names:
        (flat / f"{name}.ipynb").write_text(json.dumps(book))
    nbgrader = folder / "nbgrader"
    for name in ("kim", "lee", "mo"):
        (nbgrader / name / "lab01").mkdir(parents=True)
        (nbgrader / name / "lab01" / "lab01_masks.ipynb").write_text(json.dumps(book))
    out = folder / "out"
    run = grade("lab01", flat, nbgrader, "--out", out, "--seed", 20261201, "--jobs", 2)
    assert run.returncode == 0, run.stderr + run.stdout
    return {"book": json.loads((out / "grades.json").read_text()), "out": out, "folder": folder,
            "flat": flat, "nbgrader": nbgrader, "names": names}


def test_identical_code_gets_identical_points_whatever_its_name(copies):
    entries = copies["book"]["submissions"]
    assert len(entries) == len(copies["names"]) + 3
    points = {json.dumps({k: v["points"] for k, v in e["exercises"].items()}) for e in entries}
    assert len(points) == 1, points
    window = entries[0]["exercises"]["sliding_window_mask"]
    assert window["points"] == 0, "the hidden cases cover every window of the taught range"
    assert {e["score"] for e in entries} <= {get_lab("lab01").max_score - 2, get_lab("lab01").max_score - 4}


def test_hidden_inputs_stay_hidden(copies):
    for entry in copies["book"]["submissions"]:
        feedback = entry["exercises"]["sliding_window_mask"]["feedback"]
        assert "hidden" in feedback and "wrong triangle" in feedback, feedback
        assert "sliding_window_mask(" not in feedback, feedback  # no hidden call, no size
    markdown = (copies["out"] / "feedback" / "ana.md").read_text()
    assert "sliding_window_mask(" not in markdown


def test_reveal_hidden_shows_the_inputs_after_the_deadline(copies):
    out = copies["out"]
    run = grade("lab01", copies["flat"], copies["nbgrader"], "--out", out, "--seed", 20261201, "--reveal-hidden")
    assert run.returncode == 0, run.stderr
    assert "taken from earlier records" in run.stdout  # nothing graded again: the records keep both texts
    book = json.loads((out / "grades.json").read_text())
    feedback = book["submissions"][0]["exercises"]["sliding_window_mask"]["feedback"]
    assert "sliding_window_mask(" in feedback, feedback


def test_the_batch_order_and_other_students_change_nothing(copies, tmp_path):
    """The same notebook graded first and last of a batch, around students whose code differs (a blank lab,
    the solution), gets the points it got among identical copies."""
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    shutil.copy(copies["flat"] / "ana.ipynb", mixed / "a_first.ipynb")
    shutil.copy(copies["flat"] / "ana.ipynb", mixed / "zz_last.ipynb")
    shutil.copy(ROOT / "labs" / "en" / "lab01_masks.ipynb", mixed / "m_blank.ipynb")
    shutil.copy(ROOT / "solutions" / "en" / "lab01_masks.ipynb", mixed / "n_solution.ipynb")
    run = grade("lab01", mixed, "--out", tmp_path / "out", "--seed", 20261201, "--jobs", 1)
    assert run.returncode == 0, run.stderr
    entries = {e["student"]: e for e in json.loads((tmp_path / "out" / "grades.json").read_text())["submissions"]}
    assert (entries["m_blank"]["score"], entries["n_solution"]["score"]) == (0, get_lab("lab01").max_score)
    in_batch = next(e for e in copies["book"]["submissions"] if e["student"] == "ana")
    for name in ("a_first", "zz_last"):
        assert {k: v["points"] for k, v in entries[name]["exercises"].items()} == \
            {k: v["points"] for k, v in in_batch["exercises"].items()}, name


def test_hidden_cases_depend_on_the_seed_and_the_lab_only():
    assert engine.case_seed(1, "lab02") == engine.case_seed(1, "lab02")
    assert len({engine.case_seed(1, "lab02"), engine.case_seed(2, "lab02"), engine.case_seed(1, "lab01")}) == 3
    for lab in ("lab01", "lab02", "lab03", "lab04", "lab05"):
        spec = get_lab(lab)
        for exercise in spec.exercises:
            first = [case.call for case in exercise.cases({}, engine.case_seed(5, lab))]
            assert first == [case.call for case in exercise.cases({}, engine.case_seed(5, lab))]
            hidden = [case for case in exercise.cases({}, engine.case_seed(5, lab)) if not case.public]
            assert hidden, f"{lab}.{exercise.id} has no hidden cases"
        # ... and another seed draws other hidden cases (some exercises' are all fixed: every size of the range)
        drawn = {seed: [case.call for exercise in spec.exercises
                        for case in exercise.cases({}, engine.case_seed(seed, lab)) if not case.public]
                 for seed in (5, 6)}
        assert drawn[5] != drawn[6], f"{lab}: the seed changes none of the hidden cases"


def test_lab00_variants_follow_the_typed_id_not_the_file_name(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    cells = [header("s1234567"), *answer_cells(answers("s1234567"))]
    for name in ("s1234567", "canvas_98765_111_lab00", "renamed"):
        (subs / f"{name}.ipynb").write_text(json.dumps(notebook(cells)))
    run = grade("lab00", subs, "--out", tmp_path / "out", "--seed", 3, "--jobs", 2)
    assert run.returncode == 0, run.stderr
    entries = json.loads((tmp_path / "out" / "grades.json").read_text())["submissions"]
    assert {e["score"] for e in entries} == {10}
    assert {e["student"]: e["id_mismatch"] for e in entries} == {
        "s1234567": False, "canvas_98765_111_lab00": True, "renamed": True}


def test_a_gradescope_resubmission_gets_other_hidden_inputs(tmp_path):
    def seed_for(submission_id):
        (tmp_path / "submission_metadata.json").write_text(json.dumps({"id": submission_id, "users": []}))
        return submission_seed(4242, tmp_path)

    assert seed_for(1001) == seed_for(1001)
    assert seed_for(1001) != seed_for(1002)
    (tmp_path / "submission_metadata.json").unlink()
    assert submission_seed(4242, tmp_path) != submission_seed(4242, tmp_path)  # no id: a fresh seed
