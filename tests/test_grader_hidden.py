"""A time-out or a crash on a hidden case never names it: the feedback says a hidden case failed, and how.

One lab01 batch: students whose causal_mask hangs, or ends its process, on the
hidden sizes only (any T but the public 4, 1, 6), beside an honest neighbour.
Their feedback names the exercise and the kind of failure; the case (its T)
stays in the record for --reveal-hidden only.
"""
import json
import subprocess
import sys
from pathlib import Path

import pytest
from corpus.notebooks import with_definition

from autograder.grader.engine import case_seed
from autograder.labs import get_lab

ROOT = Path(__file__).resolve().parents[1]
SOLUTION = ROOT / "solutions" / "en" / "lab01_masks.ipynb"
SEED = 7_770_000_123_457
PUBLIC_T = (4, 1, 6)
HIDDEN_ONLY = '''def causal_mask(T: int) -> torch.Tensor:
    if T not in (4, 1, 6):  # a hidden case
        BEHAVIOUR
    return torch.full((T, T), float("-inf")).triu(diagonal=1)
'''
ATTACKS = {"x_hangs": "while True:\n            pass", "x_ends": "import os; os._exit(3)",
           "x_raises": "raise ValueError(f'T is {T}')"}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hidden")
    subs, out = folder / "subs", folder / "out"
    subs.mkdir()
    solution = json.loads(SOLUTION.read_text())
    (subs / "honest.ipynb").write_text(json.dumps(solution))
    for student, behaviour in ATTACKS.items():
        source = HIDDEN_ONLY.replace("BEHAVIOUR", behaviour)
        (subs / f"{student}.ipynb").write_text(json.dumps(with_definition(solution, "causal_mask", source)))
    run = subprocess.run([sys.executable, "-m", "autograder", "grade", "lab01", str(subs), "--out", str(out),
                          "--jobs", "2", "--seed", str(SEED), "--timeout", "2", "--quiet"],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:] + run.stdout
    book = json.loads((out / "grades.json").read_text())
    records = {r["student"]: r for r in (json.loads(p.read_text()) for p in (out / ".autograder" / "records").glob("*.json"))}
    return {"entries": {e["student"]: e for e in book["submissions"]}, "records": records, "out": out}


def hidden_names() -> set[str]:
    exercise = get_lab("lab01").exercise("causal_mask")
    return {case.name for case in exercise.cases({}, case_seed(SEED, "lab01"))
            if not case.public and case.call["args"][0] not in PUBLIC_T}


@pytest.mark.parametrize("student,status", [("x_hangs", "timeout"), ("x_ends", "error"), ("x_raises", "error")])
def test_a_failure_on_a_hidden_case_does_not_name_it(graded, student, status):
    item = graded["entries"][student]["exercises"]["causal_mask"]
    assert item["status"] == status and item["points"] == 0, item
    assert "hidden" in item["feedback"], item["feedback"]
    assert not any(name in item["feedback"] for name in hidden_names()), item["feedback"]
    assert "T is" not in item["feedback"]  # nor the student's text about it
    kept = json.dumps(graded["records"][student], ensure_ascii=False)
    assert any(name in kept for name in hidden_names()), "the record keeps the case for --reveal-hidden"


def test_the_other_exercises_and_the_neighbour_keep_their_points(graded):
    full = get_lab("lab01").max_score
    assert graded["entries"]["honest"]["score"] == full
    for student in ATTACKS:
        assert graded["entries"][student]["score"] == full - get_lab("lab01").exercise("causal_mask").points
