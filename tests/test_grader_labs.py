"""Every lab that exists, graded by the batch grader: the solution gets full marks, the blank lab 0.

The lab's own tests check `check` in the notebook; these check the same
definitions through the sandbox (stub `autograder`, plain data, hidden cases,
shuffled calls). lab02 also gets students' tests that try to game the
mutation testing of `perturbation_test`.
"""
import json
import subprocess
import sys
from pathlib import Path

import pytest
from corpus.notebooks import with_definition

from autograder.labs import LAB_IDS, get_lab

ROOT = Path(__file__).resolve().parents[1]
LABS = list(LAB_IDS)  # every lab has a solution and a handout: one that lacks either fails here, never skips

COUNTER_CHEAT = '''_calls = [0]


def perturbation_test(attn_fn, T=8, d=4, seed=0):
    """Says "causal" for the first function it is given: the correct one comes first in `check`."""
    _calls[0] += 1
    return _calls[0] == 1
'''

NAME_CHEAT = '''def perturbation_test(attn_fn, T=8, d=4, seed=0):
    """Reads the function's names instead of testing it."""
    import torch
    torch.allclose = lambda *a, **k: True
    code = attn_fn.__code__
    return not any(word in " ".join(code.co_names + code.co_varnames) for word in ("leak", "bug", "no_mask"))
'''


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("labs")
    runs = {}
    for lab in LABS:
        subs = folder / lab / "subs"
        subs.mkdir(parents=True)
        solutions = sorted((ROOT / "solutions" / "en").glob(f"{lab}_*.ipynb"))
        assert solutions, f"{lab} has no solution notebook in solutions/en"
        solution = solutions[0]
        (subs / "solution.ipynb").write_bytes(solution.read_bytes())
        (subs / "blank.ipynb").write_bytes((ROOT / "labs" / "en" / solution.name).read_bytes())
        if lab == "lab02":
            notebook = json.loads(solution.read_text())
            for student, cheat in (("cheat_counter", COUNTER_CHEAT), ("cheat_names", NAME_CHEAT)):
                (subs / f"{student}.ipynb").write_text(json.dumps(with_definition(notebook, "perturbation_test", cheat)))
        runs[lab] = subprocess.Popen(
            [sys.executable, "-m", "autograder", "grade", lab, str(subs), "--out", str(folder / lab / "out"),
             "--jobs", "1", "--seed", "31337"],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    books = {}
    for lab, run in runs.items():
        stdout, stderr = run.communicate(timeout=600)
        assert run.returncode == 0, stderr
        books[lab] = {e["student"]: e for e in json.loads((folder / lab / "out" / "grades.json").read_text())["submissions"]}
    return books


@pytest.mark.parametrize("lab", LABS)
def test_solution_gets_full_marks_in_the_sandbox(graded, lab):
    entry = graded[lab]["solution"]
    assert entry["status"] == "graded", entry
    assert entry["score"] == get_lab(lab).max_score, {k: v["feedback"] for k, v in entry["exercises"].items()}
    assert not [c for c in entry["cells"] if c["kind"] != "error"], entry["cells"]


@pytest.mark.parametrize("lab", LABS)
def test_blank_lab_scores_zero_without_a_crash(graded, lab):
    entry = graded[lab]["blank"]
    assert entry["status"] == "graded" and entry["score"] == 0
    assert {item["status"] for item in entry["exercises"].values()} <= {"not_answered", "missing"}


@pytest.mark.parametrize("student", ["cheat_counter", "cheat_names"])
def test_gaming_the_mutation_testing_earns_nothing(graded, student):
    entry = graded["lab02"][student]
    exercise = entry["exercises"]["perturbation_test"]
    assert exercise["points"] == 0, exercise
    assert entry["exercises"]["causal_attention"]["points"] == entry["exercises"]["causal_attention"]["max_points"]
